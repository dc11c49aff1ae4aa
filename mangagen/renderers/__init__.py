"""Pluggable renderers: `RENDERER=procedural` (default, offline) or `openai`."""

from django.conf import settings

from .base import (
    CharacterSpec,
    DialogueSpec,
    PanelSpec,
    PlaceSpec,
    Renderer,
    RenderError,
    RenderResult,
    SheetSpec,
)


def get_renderer(name: str | None = None) -> Renderer:
    name = name or settings.RENDERER
    if name == "procedural":
        from .procedural import ProceduralRenderer

        return ProceduralRenderer()
    if name == "openai":
        from .openai_images import OpenAIImagesRenderer
        from .warmth import GpuPool

        return OpenAIImagesRenderer(
            base_url=settings.IMAGES_BASE_URL,
            api_key=settings.IMAGES_API_KEY,
            model=settings.IMAGES_MODEL,
            size=settings.IMAGES_SIZE,
            timeout=settings.RENDER_HTTP_TIMEOUT_SECONDS,
            retries=settings.RENDER_HTTP_RETRIES,
            pool=GpuPool(cold_start_seconds=0),
            reference_endpoint=settings.IMAGES_REFERENCE_ENDPOINT,
            max_references=settings.IMAGES_MAX_REFERENCES,
        )
    raise ValueError(f"Unknown RENDERER {name!r} (use 'procedural' or 'openai').")


__all__ = [
    "CharacterSpec",
    "DialogueSpec",
    "PanelSpec",
    "PlaceSpec",
    "RenderError",
    "RenderResult",
    "Renderer",
    "SheetSpec",
    "get_renderer",
]
