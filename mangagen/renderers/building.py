"""What the providers' renderers are built from, the same for each (providers/<name>.py):
a provider's HTTP (provider_http.py), its picture intake (intake.py), and the provider
layer (remote.py) over the GPU pool, each configured by the settings."""

from __future__ import annotations

from django.conf import settings

from .gpu_pool import GpuPool
from .intake import Intake, host_of
from .provider_http import ProviderHTTP
from .remote import Adapter, RemoteRenderer
from .render_request import provider_size


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


def inpaint_workflow() -> dict:
    """The inpaint workflow touch-ups run on ComfyUI and worker-comfyui."""
    from . import workflows

    return workflows.load_inpaint(
        settings.COMFYUI_INPAINT_WORKFLOW or workflows.shipped_path(workflows.INPAINT)
    )


def rough_workflow() -> dict:
    """The rough's workflow on ComfyUI and worker-comfyui (a few-step model)."""
    from . import workflows

    return workflows.load(
        settings.COMFYUI_ROUGH_WORKFLOW or workflows.shipped_path(workflows.ROUGH)
    )


def from_rough_workflow() -> dict:
    """The workflow a final is drawn from its rough with, on ComfyUI and worker-comfyui."""
    from . import workflows

    return workflows.load_from_rough(
        settings.COMFYUI_FROM_ROUGH_WORKFLOW or workflows.shipped_path(workflows.FROM_ROUGH)
    )
