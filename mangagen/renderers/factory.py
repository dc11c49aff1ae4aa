"""Each renderer built from the settings (`RENDERER` and its provider's settings)."""

from __future__ import annotations

from django.conf import settings

from .base import Renderer
from .catalog import RendererName
from .gpu_pool import GpuPool
from .intake import Intake, host_of
from .provider_http import ProviderHTTP
from .remote import Adapter, RemoteRenderer
from .render_request import provider_size


def build(name: str) -> Renderer:
    """The renderer `name` names, configured by the settings. Raises ValueError for a
    name that is none (the settings refuse one at start)."""
    if name == RendererName.PROCEDURAL:
        from .procedural import ProceduralRenderer

        return ProceduralRenderer()
    if name == RendererName.OPENAI:
        from .openai_images import OpenAIImagesRenderer

        return OpenAIImagesRenderer(
            base_url=settings.IMAGES_BASE_URL,
            api_key=settings.IMAGES_API_KEY,
            model=settings.IMAGES_MODEL,
            size=settings.IMAGES_SIZE,
            timeout=settings.RENDER_HTTP_TIMEOUT_SECONDS,
            retries=settings.RENDER_HTTP_RETRIES,
            backoff=settings.RENDER_HTTP_BACKOFF_SECONDS,
            pool=GpuPool(cold_start_seconds=0),
            reference_endpoint=settings.IMAGES_REFERENCE_ENDPOINT,
            max_references=settings.IMAGES_MAX_REFERENCES,
            server=settings.IMAGES_SERVER,
            intake=intake(settings.IMAGES_BASE_URL),
        )
    if name == RendererName.REPLICATE:
        from .replicate import DELIVERY_HOSTS, ReplicateAdapter

        http = provider_http(
            "Replicate",
            settings.REPLICATE_BASE_URL,
            headers={"Authorization": f"Bearer {settings.REPLICATE_API_TOKEN}"},
        )
        adapter = ReplicateAdapter(
            model=settings.REPLICATE_MODEL,
            template=settings.REPLICATE_INPUT,
            intake=intake(settings.REPLICATE_BASE_URL, *DELIVERY_HOSTS),
            inpaint_model=settings.REPLICATE_INPAINT_MODEL,
            inpaint_template=settings.REPLICATE_INPAINT_INPUT,
        )
        return remote(adapter, http)
    if name == RendererName.RUNPOD:
        from .runpod import RunPodAdapter

        http = provider_http(
            "RunPod",
            settings.RUNPOD_BASE_URL,
            headers={"Authorization": f"Bearer {settings.RUNPOD_API_KEY}"},
        )
        return remote(
            RunPodAdapter(
                endpoint=settings.RUNPOD_ENDPOINT_ID,
                template=settings.RUNPOD_INPUT,
                intake=intake(settings.RUNPOD_BASE_URL),
                inpaint_workflow=inpaint_workflow(),
            ),
            http,
        )
    if name == RendererName.COMFYUI:
        from . import workflows
        from .comfyui import ComfyUIAdapter

        plain = workflows.load(
            settings.COMFYUI_WORKFLOW or workflows.shipped_path(workflows.TXT2IMG)
        )
        references = workflows.load(
            settings.COMFYUI_REFERENCE_WORKFLOW or workflows.shipped_path(workflows.REFERENCES)
        )
        adapter = ComfyUIAdapter(
            base_url=settings.COMFYUI_BASE_URL,
            workflow=plain,
            reference_workflow=references,
            model=workflows.checkpoint_of(plain) or settings.COMFYUI_WORKFLOW,
            intake=intake(settings.COMFYUI_BASE_URL),
            inpaint_workflow=inpaint_workflow(),
            upload_references=settings.COMFYUI_UPLOAD_REFERENCES,
        )
        return remote(adapter, provider_http("ComfyUI", settings.COMFYUI_BASE_URL))
    if name == RendererName.A1111:
        from .a1111 import A1111Adapter

        user, _, password = settings.A1111_AUTH.partition(":")
        auth = (user, password) if settings.A1111_AUTH else None
        http = provider_http("AUTOMATIC1111", settings.A1111_BASE_URL, auth=auth)
        adapter = A1111Adapter(
            template=settings.A1111_PAYLOAD,
            module=settings.A1111_REFERENCE_MODULE,
            reference_model=settings.A1111_REFERENCE_MODEL,
            intake=intake(settings.A1111_BASE_URL),
        )
        return remote(adapter, http)
    raise ValueError(f"Unknown RENDERER {name!r} (use one of: {', '.join(RendererName)}).")


def inpaint_workflow() -> dict:
    """The inpaint workflow touch-ups run on ComfyUI and worker-comfyui."""
    from . import workflows

    return workflows.load_inpaint(
        settings.COMFYUI_INPAINT_WORKFLOW or workflows.shipped_path(workflows.INPAINT)
    )


def intake(base_url: str, *hosts: str, headers: dict[str, str] | None = None) -> Intake:
    """The picture intake of a provider at `base_url` (its host, `hosts`, and the
    operator's RENDER_IMAGE_HOSTS)."""
    return Intake(
        hosts=(host_of(base_url), *hosts, *settings.RENDER_IMAGE_HOSTS),
        max_bytes=settings.RENDER_IMAGE_MAX_BYTES,
        timeout=settings.RENDER_HTTP_TIMEOUT_SECONDS,
        deadline=settings.RENDER_IMAGE_DOWNLOAD_SECONDS,
        headers=headers,
    )


def provider_http(name: str, base_url: str, **options) -> ProviderHTTP:
    return ProviderHTTP(
        name=name,
        base_url=base_url,
        timeout=settings.RENDER_HTTP_TIMEOUT_SECONDS,
        retries=settings.RENDER_HTTP_RETRIES,
        backoff=settings.RENDER_HTTP_BACKOFF_SECONDS,
        max_body_bytes=settings.RENDER_HTTP_MAX_BODY_BYTES,
        **options,
    )


def remote(adapter: Adapter, http: ProviderHTTP) -> RemoteRenderer:
    width, height = provider_size(settings.RENDER_WIDTH, settings.RENDER_HEIGHT)
    return RemoteRenderer(
        adapter=adapter,
        http=http,
        pool=GpuPool(),
        width=width,
        height=height,
        poll_seconds=settings.RENDER_POLL_SECONDS,
        # Past it the task's own time limit would stop the render without cancelling it.
        deadline_seconds=max(30.0, settings.RENDER_TASK_TIME_LIMIT - 60),
    )
