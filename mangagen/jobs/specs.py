"""A storyboard panel as a job keeps it (`JobPanel.spec`), and as the renderer is given it."""

from __future__ import annotations

from mangagen.characters.selectors import references
from mangagen.places.selectors import picture_bytes
from mangagen.renderers import CharacterSpec, PanelSpec, PlaceSpec

from .models import Job, JobPanel


def spec_of(panel) -> dict:
    """The storyboard panel as it is now, frozen into the job's row: what its art hash
    covers (the sheets, outfits, place and blocking included), and its text."""
    spec = {
        "description": panel.description,
        "shot": panel.shot,
        "characters": list(panel.characters),
        "dialogue": list(panel.dialogue),
        "caption": panel.caption,
        "sheets": dict(panel.sheets),  # the reference sheets its art hash covers
    }
    inputs = panel.art_inputs or {}
    if inputs.get("outfits"):  # absent keys stay absent: older jobs' specs read the same
        spec["outfits"] = dict(inputs["outfits"])
    if inputs.get("place"):
        spec["place"] = dict(inputs["place"])
    if panel.blocking:
        spec["blocking"] = dict(panel.blocking)
    if panel.sfx:
        spec["sfx"] = list(panel.sfx)
    return spec


def panel_spec(job: Job, panel: JobPanel, *, aspect: str = "") -> PanelSpec:
    """What the renderer is given: the art's inputs only, never the text (lettering is a layer).

    A character wearing an outfit that has a sheet is given that sheet as their
    reference (their usual sheet's hash still names their look); the place comes with
    its picture when it has one. `aspect` is the page cell's shape it is drawn at.
    """
    return spec_from(
        panel.spec,
        storyboard_id=job.storyboard_id,
        style=job.style,
        cast=job.cast,
        index=panel.index,
        content_hash=panel.content_hash,
        art_hash=panel.art_hash,
        aspect=aspect,
    )


def storyboard_panel_spec(storyboard, panel, *, aspect: str = "") -> PanelSpec:
    """What the renderer is given for a storyboard's panel as it is now: the very spec a
    job started now would give it (a rough is drawn from this, its final from that)."""
    return spec_from(
        spec_of(panel),
        storyboard_id=storyboard.pk,
        style=storyboard.style,
        cast={c.name: c.description for c in storyboard.characters.all()},
        index=panel.index,
        content_hash=panel.content_hash,
        art_hash=panel.art_hash,
        aspect=aspect,
    )


def spec_from(
    spec: dict,
    *,
    storyboard_id: int,
    style: str,
    cast: dict,
    index: int,
    content_hash: str,
    art_hash: str,
    aspect: str = "",
) -> PanelSpec:
    """A frozen panel (`spec_of`) of a comic of `style` and `cast`, as the renderer is
    given it."""
    sheets = spec.get("sheets") or {}
    outfits = spec.get("outfits") or {}
    blocking = spec.get("blocking") or {}
    images = references(storyboard_id=storyboard_id, sheets=sheets)
    outfit_images = references(
        storyboard_id=storyboard_id,
        sheets={n: o["sheet"] for n, o in outfits.items() if o.get("sheet")},
    )
    return PanelSpec(
        style=style,
        description=spec["description"],
        shot=spec["shot"],
        characters=tuple(
            CharacterSpec(
                n,
                cast.get(n, ""),
                sheet=sheets.get(n, "") if n in images else "",
                reference=outfit_images.get(n) or images.get(n, b""),
                position=blocking.get(n, ""),
                outfit=outfits[n]["description"] if n in outfits else "",
            )
            for n in spec["characters"]
        ),
        index=index,
        content_hash=content_hash,
        art_hash=art_hash,
        place=_place(storyboard_id, spec.get("place")),
        aspect=aspect,
    )


def _place(storyboard_id: int, place: dict | None) -> PlaceSpec | None:
    if not place:
        return None
    picture = place.get("picture", "")
    reference = (
        picture_bytes(storyboard_id=storyboard_id, name=place["name"], picture_hash=picture)
        if picture
        else b""
    )
    return PlaceSpec(place["name"], place["description"], reference=reference)
