"""Any OpenAI-compatible `POST /v1/images/generations` endpoint, and its edits endpoint.

LocalAI, sd-server, SGLang or OpenAI itself. A panel whose characters have
reference sheets goes, when the backend accepts references
(`reference_endpoint`, e.g. `/v1/images/edits`), to that endpoint as a
multipart request with the sheets as `image[]`, in the order the prompt
names them, at most `max_references` of them; otherwise (and for a panel
with no sheets) the description-only prompt goes to generations. Retries with exponential
backoff on 5xx, 429 and timeouts; a 4xx is the caller's fault and fails at
once with the provider's own message.
"""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Callable

import requests
from PIL import Image

from .base import CharacterSpec, PanelSpec, RenderError, RenderResult, SheetSpec
from .prompts import image_prompt, sheet_prompt
from .warmth import GpuPool, Priority


class OpenAIImagesRenderer:
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
    ):
        self.url = base_url.rstrip("/") + "/v1/images/generations"
        self.edits_url = (
            base_url.rstrip("/") + "/" + reference_endpoint.lstrip("/")
            if reference_endpoint and max_references > 0
            else ""
        )
        self.max_references = max_references
        self.api_key = api_key
        self.model = model
        self.size = size
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.session = session or requests.Session()
        # The provider's capacity (GPU_POOL_SIZE concurrent requests), shared by every
        # worker: confirmed requests first, so speculation never delays a person. The
        # provider pays its own cold starts; none is added here.
        self.pool = pool

    def render(
        self,
        spec: PanelSpec,
        seed: int,
        *,
        ticket: str | None = None,
        priority: Priority = Priority.CONFIRMED,
        while_waiting: Callable[[], None] | None = None,
    ) -> RenderResult:
        """Waits for a free slot of the provider's capacity (when a pool is given), then
        asks the endpoint. Raises RenderError, or Withdrawn."""
        if self.pool is None:
            return self._render(spec, seed)
        with self.pool.container(
            ticket=ticket, priority=priority, cold_start_seconds=0, while_waiting=while_waiting
        ):
            return self._render(spec, seed)

    def render_sheet(
        self,
        spec: SheetSpec,
        seed: int,
        *,
        ticket: str | None = None,
        priority: Priority = Priority.CONFIRMED,
        while_waiting: Callable[[], None] | None = None,
    ) -> RenderResult:
        """A character sheet from the generations endpoint. Raises RenderError, or Withdrawn."""
        if self.pool is None:
            return self._generate(sheet_prompt(spec), seed)
        with self.pool.container(
            ticket=ticket, priority=priority, cold_start_seconds=0, while_waiting=while_waiting
        ):
            return self._generate(sheet_prompt(spec), seed)

    def references_of(self, spec: PanelSpec) -> tuple[CharacterSpec, ...]:
        """The characters whose sheets go with the panel: none unless the backend takes them."""
        if not self.edits_url:
            return ()
        return tuple(c for c in spec.characters if c.reference)[: self.max_references]

    def _render(self, spec: PanelSpec, seed: int) -> RenderResult:
        references = self.references_of(spec)
        prompt = image_prompt(spec, references=tuple(c.name for c in references))
        if references:
            return self._generate(prompt, seed, references=references)
        return self._generate(prompt, seed)

    def _generate(
        self, prompt: str, seed: int, *, references: tuple[CharacterSpec, ...] = ()
    ) -> RenderResult:
        started = time.monotonic()
        payload = {
            "model": self.model,
            "prompt": prompt,
            "size": self.size,
            "n": 1,
            "response_format": "b64_json",
            "seed": seed,
        }
        if references:
            files = [
                ("image[]", (f"{i}.png", c.reference, _mime(c.reference)))
                for i, c in enumerate(references, start=1)
            ]
            body = self._post_with_retries(
                self.edits_url, data={k: str(v) for k, v in payload.items()}, files=files
            )
        else:
            body = self._post_with_retries(self.url, json=payload)
        try:
            item = body["data"][0]
        except (KeyError, IndexError, TypeError) as exc:
            raise RenderError("The image provider's answer had no image.", retryable=True) from exc
        if not isinstance(item, dict):
            raise RenderError("The image provider's answer had no image.", retryable=True)
        if item.get("b64_json"):
            try:
                image = base64.b64decode(item["b64_json"], validate=True)
            except (ValueError, TypeError) as exc:  # binascii.Error is a ValueError
                raise RenderError(
                    "The image provider sent an image that is not valid base64.", retryable=True
                ) from exc
        elif item.get("url"):
            image = self._download(item["url"])
        else:
            raise RenderError("The image provider's answer had no image.", retryable=True)
        try:
            with Image.open(io.BytesIO(image)) as decoded:
                width, height = decoded.size
                content_type = Image.MIME.get(decoded.format, "application/octet-stream")
                decoded.load()  # the whole picture: a cut-off one is no render
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
            raise RenderError(
                "The image provider sent bytes that are not a whole image.", retryable=True
            ) from exc
        return RenderResult(
            image=image,
            content_type=content_type,
            width=width,
            height=height,
            renderer=self.name,
            seconds=time.monotonic() - started,
            cold=None,
            metadata={
                "seed": seed,
                "model": self.model,
                "prompt": payload["prompt"],
                "references": [c.name for c in references],
            },
        )

    def _post_with_retries(self, url: str, **body) -> dict:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        last_error = "no attempt made"
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                response = self.session.post(url, headers=headers, timeout=self.timeout, **body)
            except (requests.Timeout, requests.ConnectionError) as exc:
                last_error = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code >= 500 or response.status_code == 429:
                last_error = f"HTTP {response.status_code}"
                continue
            if response.status_code >= 400:
                raise RenderError(
                    f"The image provider refused the request (HTTP {response.status_code}): "
                    f"{_provider_message(response)}",
                    retryable=False,
                )
            try:
                return response.json()
            except ValueError:
                last_error = "the answer was not JSON"
        raise RenderError(
            f"The image provider failed {self.retries + 1} times ({last_error}).", retryable=True
        )

    def _download(self, url: str) -> bytes:
        try:
            response = self.session.get(url, timeout=self.timeout)
            response.raise_for_status()
        except requests.RequestException as exc:
            raise RenderError(f"Could not download the image: {exc}", retryable=True) from exc
        return response.content


def _provider_message(response: requests.Response) -> str:
    try:
        error = response.json().get("error")
        if isinstance(error, dict):
            return str(error.get("message") or error)
        return str(error or response.text[:300])
    except ValueError:
        return response.text[:300]


def _mime(image: bytes) -> str:
    """Sheets are stored as PNG; an older or foreign one is named by its own bytes."""
    if image.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if image[:4] == b"RIFF" and image[8:12] == b"WEBP":
        return "image/webp"
    return "image/png"
