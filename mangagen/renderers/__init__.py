"""Pluggable renderers: `RENDERER=procedural` (default, offline), `openai`, or a real
GPU provider through the provider layer (`replicate`, `runpod`, `comfyui`, `a1111`).

This folder holds the contract (base.py, masks.py) and what every provider shares; the
providers are in providers/, each registered with the verbs it can do (registry.py).
"""

from .base import (
    CharacterSpec,
    DialogueSpec,
    PanelSpec,
    PlaceSpec,
    Renderer,
    RenderError,
    RenderResult,
    SheetSpec,
    Verb,
)


def get_renderer(name: str | None = None) -> Renderer:
    """The renderer of provider `name`, or the one the settings choose to draw panels
    (RENDERER, or RENDERER_FOR's `render`), configured by the settings (registry.py)."""
    from .registry import renderer_for

    return renderer_for(Verb.RENDER, name=name)


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
