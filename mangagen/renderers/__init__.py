"""Pluggable renderers: `RENDERER=procedural` (default, offline), `openai`, or a real
GPU provider through the provider layer (`replicate`, `runpod`, `comfyui`, `a1111`)."""

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
    """The renderer `name` (RENDERER by default) names, configured by the settings."""
    from .factory import build

    return build(name or settings.RENDERER)


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
