"""Any OpenAI-compatible `POST /v1/images/generations` endpoint, and its edits endpoint.

OpenAI itself, LocalAI, stable-diffusion.cpp's `sd-server`, SGLang… A panel
whose characters have reference sheets (and whose place has a picture) sends
them the way the server behind the endpoint takes them (`server`,
IMAGES_SERVER), at most `max_references`, in the order the prompt names them:

- `openai`: to the edits endpoint (`reference_endpoint`, e.g.
  `/v1/images/edits`) as multipart `image[]`; with no such endpoint, none.
- `localai`: LocalAI has no edits route; it takes `ref_images` (raw base64,
  not data URLs) on generations.
- `sdcpp`: stable-diffusion.cpp's edits make the first `image[]` the init
  image (img2img from a character sheet: the panel would be the sheet,
  repainted), so references go to generations as `ref_images` inside its
  `<sd_cpp_extra_args>` block, with the seed (which its generations read
  from there only).

Touch-ups (`server` openai only: LocalAI has no edits route, and what
stable-diffusion.cpp's makes of a mask is not OpenAI's) go to the edits
endpoint (`reference_endpoint`, or `/v1/images/edits`) as OpenAI's API takes
them: multipart `image` (the picture; `image[]`, the picture first, when
sheets go with it), `mask` (a PNG of the picture's size whose fully
transparent pixels are redrawn), `prompt`, `model`, `size`, `n`; no `seed`
(edits have none) and `response_format` only for DALL·E (GPT image models
refuse it and always answer base64).

Roughs go to generations like a panel, with `quality` IMAGES_ROUGH_QUALITY (`low`:
GPT image models' cheapest and fastest) on OpenAI itself. A final from its rough goes
to the edits endpoint with the rough as `image` and no mask (OpenAI), as the first
`image[]` (stable-diffusion.cpp: its init image); LocalAI takes no picture there, so
its final from a rough keeps the rough's seed alone. Every panel is asked at its page
cell's shape: OpenAI's nearest size of 1024×1024, 1536×1024 and 1024×1536 (when
IMAGES_SIZE is one of them or `auto`), the others' width×height.

The shared HTTP rules (provider_http.py: backoff on 5xx and timeouts, 429's
`Retry-After`, a 4xx fails at once with the provider's message) and the
shared picture intake (intake.py) apply.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import requests
from django.conf import settings

from ..base import (
    FromRoughSpec,
    OnState,
    PanelSpec,
    Renderer,
    RenderError,
    RenderResult,
    SheetSpec,
    TouchUpSpec,
    Verb,
    Waiting,
)
from ..building import intake
from ..catalog import ImagesServer, RendererName
from ..gpu_pool import GpuPool, Priority
from ..intake import Intake, host_of
from ..masks import Polarity, provider_mask
from ..provider_http import Answer, ProviderHTTP
from ..registry import register
from ..render_request import (
    Reference,
    RenderRequest,
    from_rough_request,
    panel_request,
    rough_request,
    shaped,
    sheet_request,
    touchup_request,
)

EDITS_PATH = "/v1/images/edits"
# The sizes GPT image models draw (IMAGES_SIZE `auto` lets the model choose; a panel of a
# cell's shape asks for the nearest).
GPT_SIZES = ("1024x1024", "1536x1024", "1024x1536")


class OpenAIImagesRenderer(Renderer):
    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        size: str,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 1.0,
        session: requests.Session | None = None,
        pool: GpuPool | None = None,
        reference_endpoint: str = "",
        max_references: int = 0,
        server: str = ImagesServer.OPENAI,
        intake: Intake | None = None,
        rough_quality: str = "low",
    ):
        self.server = ImagesServer(server)
        self.edits_path = (
            "/" + reference_endpoint.lstrip("/")
            if reference_endpoint and max_references > 0
            else ""
        )
        self.max_references = max_references
        self.can_touch_up = self.server == ImagesServer.OPENAI
        self.model = model
        self.rough_quality = rough_quality
        self.size = size
        self.width, self.height = _size(size)
        self.http = ProviderHTTP(
            name="The image provider",
            base_url=base_url,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            session=session,
        )
        self.intake = intake or Intake(
            hosts=(host_of(base_url),),
            max_bytes=20 * 1024 * 1024,
            timeout=timeout,
            session=session,
        )
        # The provider's capacity (GPU_POOL_SIZE concurrent requests), shared by every
        # worker: confirmed requests first, so speculation never delays a person. The
        # provider pays its own cold starts; none is added here.
        self.pool = pool

    def panel_work(self, spec: PanelSpec, seed: int) -> RenderRequest:
        width, height = self._shaped(spec.aspect)
        return panel_request(spec, seed, width=width, height=height, max_references=self.taken())

    def rough_work(self, spec: PanelSpec, seed: int) -> RenderRequest:
        """A rough: generations at IMAGES_ROUGH_QUALITY, at a rough's size."""
        return rough_request(spec, seed, width=self.width, height=self.height)

    def from_rough_work(self, spec: FromRoughSpec, seed: int) -> RenderRequest:
        """A final from its rough: the edits endpoint with the rough (see above)."""
        width, height = self._shaped(spec.panel.aspect)
        return from_rough_request(
            spec, seed, width=width, height=height, max_references=self.taken()
        )

    def _shaped(self, aspect: str) -> tuple[int, int]:
        """IMAGES_SIZE's pixels at the cell's shape."""
        return shaped(aspect, self.width, self.height, pixels=self.width * self.height)

    def size_for(self, request: RenderRequest) -> str:
        """The `size` a request asks for: OpenAI's nearest to its shape (GPT image models),
        IMAGES_SIZE as it is (DALL·E), the request's own elsewhere."""
        if self.server != ImagesServer.OPENAI:
            return f"{request.width}x{request.height}"
        if self.size not in (*GPT_SIZES, "auto"):
            return self.size
        wanted = request.width / request.height
        return min(GPT_SIZES, key=lambda size: abs(_ratio(size) - wanted))

    def sheet_work(self, spec: SheetSpec, seed: int) -> RenderRequest:
        """A character sheet comes from the generations endpoint."""
        return sheet_request(spec, seed, width=self.width, height=self.height)

    def touchup_work(self, spec: TouchUpSpec, seed: int) -> RenderRequest:
        """A touch-up goes to the edits endpoint, with the sheets it may carry."""
        return touchup_request(
            spec, seed, width=self.width, height=self.height, max_references=self.taken()
        )

    def taken(self) -> int:
        """How many reference pictures one request may carry to this server."""
        if self.server == ImagesServer.OPENAI and not self.edits_path:
            return 0
        return self.max_references

    def perform(self, work: RenderRequest, waiting: Waiting) -> RenderResult:
        """Waits for a free slot of the provider's capacity (when a pool is given), then
        asks the endpoint. Raises RenderError, or Withdrawn."""
        if self.pool is None:
            return self._generate(work, queued=0.0, on_state=waiting.on_state)
        with self.pool.container(
            ticket=waiting.ticket,
            priority=Priority(waiting.priority),
            cold_start_seconds=0,
            while_waiting=waiting.while_waiting,
        ) as slot:
            return self._generate(work, queued=slot.queued_seconds, on_state=waiting.on_state)

    def _generate(
        self, request: RenderRequest, *, queued: float, on_state: OnState | None
    ) -> RenderResult:
        started = time.monotonic()
        payload: dict[str, Any] = {
            "model": self.model,
            "prompt": request.prompt,
            "size": self.size_for(request),
            "n": 1,
            "response_format": "b64_json",
            "seed": request.seed,
        }
        if request.draft and self.rough_quality and self.server == ImagesServer.OPENAI:
            payload["quality"] = self.rough_quality
        references = request.references
        if request.touch_up:
            body = self._edit(request, on_state=on_state)
        elif request.from_rough and self.server != ImagesServer.LOCALAI:
            body = self._from_rough(request, on_state=on_state)
        elif self.server == ImagesServer.SDCPP:
            extra = {"seed": request.seed}
            if references:
                extra["ref_images"] = [_raw(r) for r in references]
            payload["prompt"] += f" <sd_cpp_extra_args>{json.dumps(extra)}</sd_cpp_extra_args>"
            body = self.http.call("POST", "/v1/images/generations", json=payload, on_state=on_state)
        elif references and self.server == ImagesServer.LOCALAI:
            payload["ref_images"] = [_raw(r) for r in references]
            body = self.http.call("POST", "/v1/images/generations", json=payload, on_state=on_state)
        elif references:
            files = [
                ("image[]", (f"{i}.png", r.image, _mime(r.image)))
                for i, r in enumerate(references, start=1)
            ]
            fields = {k: str(v) for k, v in payload.items()}
            body = self.http.call(
                "POST", self.edits_path, data=fields, files=files, on_state=on_state
            )
        else:
            body = self.http.call("POST", "/v1/images/generations", json=payload, on_state=on_state)
        picture = self._picture(body.body)
        rendered = time.monotonic() - started
        return picture.result(
            renderer=self.name,
            seconds=rendered + queued,
            cold=None,
            metadata={
                # An OpenAI-compatible server shows no cold start: its wait is its render.
                "phases": {
                    "queued": round(queued, 3),
                    "cold_start": 0.0,
                    "render": round(rendered, 3),
                },
                "provider": self.name,
                "model": f"{self.model}:{self.rough_quality or 'rough'}"
                if request.draft
                else self.model,
                "from_rough": request.from_rough,
                "seed": request.seed,
                "prompt": request.prompt,
                "references": [r.name for r in references],
            },
        )

    def _edit(self, request: RenderRequest, *, on_state: OnState | None) -> Answer:
        """A touch-up through the edits endpoint: the picture, its mask (transparent =
        redrawn), and the sheets after the picture (the mask applies to the first)."""
        if not self.can_touch_up:
            raise RenderError(
                f"IMAGES_SERVER={self.server} cannot redraw a region.", retryable=False
            )
        mask = provider_mask(
            request.mask, Polarity.TRANSPARENT, width=request.width, height=request.height
        )
        fields = {"model": self.model, "prompt": request.prompt, "size": self.size, "n": "1"}
        if self.model.startswith("dall-e"):
            fields["response_format"] = "b64_json"
        pictures = [request.image, *(r.image for r in request.references)]
        key = "image[]" if len(pictures) > 1 else "image"
        files = [(key, (f"{i}.png", picture, _mime(picture))) for i, picture in enumerate(pictures)]
        files.append(("mask", ("mask.png", mask, "image/png")))
        path = self.edits_path or EDITS_PATH
        return self.http.call("POST", path, data=fields, files=files, on_state=on_state)

    def _from_rough(self, request: RenderRequest, *, on_state: OnState | None) -> Answer:
        """A final from its rough through the edits endpoint, no mask: OpenAI edits the
        rough as `image`; stable-diffusion.cpp takes the first `image[]` as its init image
        (its seed in its extra args)."""
        fields = {"model": self.model, "prompt": request.prompt, "n": "1"}
        fields["size"] = self.size_for(request)
        if self.model.startswith("dall-e"):
            fields["response_format"] = "b64_json"
        key = "image"
        if self.server == ImagesServer.SDCPP:
            key = "image[]"
            extra = json.dumps({"seed": request.seed})
            fields["prompt"] += f" <sd_cpp_extra_args>{extra}</sd_cpp_extra_args>"
        files = [(key, ("rough.png", request.rough, "image/png"))]
        path = self.edits_path or EDITS_PATH
        return self.http.call("POST", path, data=fields, files=files, on_state=on_state)

    def _picture(self, body: Any):
        try:
            item = body["data"][0]
        except (KeyError, IndexError, TypeError) as exc:
            raise RenderError("The image provider's answer had no image.", retryable=True) from exc
        if not isinstance(item, dict):
            raise RenderError("The image provider's answer had no image.", retryable=True)
        if item.get("b64_json"):
            return self.intake.inline(str(item["b64_json"]))
        if item.get("url"):
            return self.intake.fetch(str(item["url"]))
        raise RenderError("The image provider's answer had no image.", retryable=True)


def _size(size: str) -> tuple[int, int]:
    """IMAGES_SIZE as numbers, for the boxes of the blocking (1024×1024 for `auto`)."""
    width, _, height = size.lower().partition("x")
    if width.isdigit() and height.isdigit():
        return int(width), int(height)
    return 1024, 1024


def _ratio(size: str) -> float:
    width, _, height = size.partition("x")
    return int(width) / int(height)


def _raw(reference: Reference) -> str:
    """Raw base64, as LocalAI and stable-diffusion.cpp take references (no data URL)."""
    return base64.b64encode(reference.image).decode()


def _mime(image: bytes) -> str:
    """Sheets are stored as PNG; an older or foreign one is named by its own bytes."""
    if image.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if image[:4] == b"RIFF" and image[8:12] == b"WEBP":
        return "image/webp"
    return "image/png"


def build() -> OpenAIImagesRenderer:
    """Any OpenAI-compatible images endpoint (IMAGES_* settings)."""
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
        rough_quality=settings.IMAGES_ROUGH_QUALITY,
    )


register(RendererName.OPENAI, verbs=Verb, build=build)
