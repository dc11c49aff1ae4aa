"""A storyboard panel as a job keeps it (`JobPanel.spec`), and as the renderer is given it."""

from __future__ import annotations

from mangagen.characters.selectors import references
from mangagen.renderers import CharacterSpec, PanelSpec

from .models import Job, JobPanel


def spec_of(panel) -> dict:
    """The storyboard panel as it is now, frozen into the job's row."""
    return {
        "description": panel.description,
        "shot": panel.shot,
        "characters": list(panel.characters),
        "dialogue": list(panel.dialogue),
        "caption": panel.caption,
        "sheets": dict(panel.sheets),  # the reference sheets its art hash covers
    }


def panel_spec(job: Job, panel: JobPanel) -> PanelSpec:
    """What the renderer is given: the art's inputs only, never the text (lettering is a layer)."""
    spec = panel.spec
    sheets = spec.get("sheets") or {}
    images = references(storyboard_id=job.storyboard_id, sheets=sheets)
    return PanelSpec(
        style=job.style,
        description=spec["description"],
        shot=spec["shot"],
        characters=tuple(
            CharacterSpec(
                n,
                job.cast.get(n, ""),
                sheet=sheets.get(n, "") if n in images else "",
                reference=images.get(n, b""),
            )
            for n in spec["characters"]
        ),
        index=panel.index,
        content_hash=panel.content_hash,
        art_hash=panel.art_hash,
    )
