"""What a remote render asks a provider for: prompt, size, seed, references, regions,
and for a touch-up the picture and the canonical mask of the part drawn again.

Built once from a panel (or a sheet) and turned into each adapter's request by
filling its template (`values`). The references are the sheets of the
panel's characters, in the order they appear, then the place's picture if
there is room; the regions are each character's box, the third of the frame
the panel's blocking puts them in (the whole frame when it says nothing), for
regional workflows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .base import FromRoughSpec, PanelSpec, SheetSpec, TouchUpSpec, sized
from .prompts import blocking_text, character_words, image_prompt, negative_prompt, sheet_prompt
from .templates import SLOTS

# The aspect ratios image APIs take by name (FLUX on Replicate among them).
ASPECT_RATIOS = ("1:1", "16:9", "21:9", "3:2", "2:3", "4:5", "5:4", "3:4", "4:3", "9:16", "9:21")
THIRDS = {"left": 0, "center": 1, "right": 2}


@dataclass(frozen=True)
class Box:
    """A part of the frame, in pixels (multiples of 8, as latent models need)."""

    x: int
    y: int
    width: int
    height: int

    def whole(self, width: int, height: int) -> bool:
        return (self.x, self.y, self.width, self.height) == (0, 0, width, height)


@dataclass(frozen=True)
class Reference:
    """A reference picture: whom or what it shows, its bytes (stored PNG), and the box
    of the frame it is about (its character's third; the whole frame for a place)."""

    name: str
    image: bytes
    kind: str  # "character" | "place"
    box: Box


@dataclass(frozen=True)
class Region:
    """A character's words and box."""

    words: str
    box: Box


@dataclass(frozen=True)
class RenderRequest:
    prompt: str
    negative_prompt: str
    seed: int
    width: int
    height: int
    blocking: str = ""
    references: tuple[Reference, ...] = ()
    regions: tuple[Region, ...] = ()
    # A touch-up: the picture now and the canonical mask (mangagen/renderers/masks.py:
    # PNG, mode "L", 255 = redraw), both at width×height. Empty for a render.
    image: bytes = field(default=b"", repr=False)
    mask: bytes = field(default=b"", repr=False)
    # A rough: for the provider's draft model or workflow (small, few steps).
    draft: bool = False
    # A final from its rough: the rough's picture (PNG, at width×height) to keep its
    # composition, as the provider takes it (an init, control or input image).
    rough: bytes = field(default=b"", repr=False)

    @property
    def touch_up(self) -> bool:
        return bool(self.mask)

    @property
    def from_rough(self) -> bool:
        return bool(self.rough)

    @property
    def aspect_ratio(self) -> str:
        """The named aspect ratio nearest to width:height."""
        wanted = math.log(self.width / self.height)

        def distance(name: str) -> float:
            w, h = (int(n) for n in name.split(":"))
            return abs(math.log(w / h) - wanted)

        return min(ASPECT_RATIOS, key=distance)

    def values(
        self,
        references: Sequence[Any] = (),
        *,
        image: Any = "",
        mask: Any = "",
        rough: Any = "",
    ) -> dict[str, Any]:
        """Every placeholder's value. `references` is the adapter's form of each of
        `self.references` (a data URL, an uploaded file's name…), in order; `image` and
        `mask` the adapter's form of a touch-up's picture and mask (its polarity); `rough`
        its form of a final's rough."""
        values: dict[str, Any] = {
            "image": image,
            "mask": mask,
            "rough": rough,
            "prompt": self.prompt,
            "negative_prompt": self.negative_prompt,
            "seed": self.seed,
            "width": self.width,
            "height": self.height,
            "aspect_ratio": self.aspect_ratio,
            "blocking": self.blocking,
            "reference_images": list(references),
        }
        frame = Box(0, 0, self.width, self.height)
        for i in range(1, SLOTS + 1):
            present = i <= len(references)
            values[f"reference_{i}"] = references[i - 1] if present else ""
            values[f"reference_{i}_weight"] = 1.0 if present else 0.0
            box = self.references[i - 1].box if i <= len(self.references) else frame
            values.update(_box(f"reference_{i}", box))
            region = self.regions[i - 1] if i <= len(self.regions) else Region("", frame)
            values[f"character_{i}"] = region.words
            values.update(_box(f"character_{i}", region.box))
            values[f"character_{i}_strength"] = 1.0 if i <= len(self.regions) else 0.0
        return values


def _box(prefix: str, box: Box) -> dict[str, int]:
    return {
        f"{prefix}_x": box.x,
        f"{prefix}_y": box.y,
        f"{prefix}_width": box.width,
        f"{prefix}_height": box.height,
    }


def box_of(position: str, width: int, height: int) -> Box:
    """The third of the frame `position` names (`left`, `center`, `right`), or the whole
    frame; in multiples of 8."""
    where = THIRDS.get(position)
    if where is None:
        return Box(0, 0, width, height)
    third = width // 3 // 8 * 8
    wide = third if where < 2 else (width - 2 * third) // 8 * 8
    return Box(where * third, 0, wide, height)


# A rough's size at a provider: about a quarter megapixel (512² for a square), what the
# few-step draft models (SDXL Turbo, FLUX schnell at 0.25 MP) draw fastest.
ROUGH_PIXELS = 512 * 512


def shaped(aspect: str, width: int, height: int, *, pixels: int = 1024 * 1024) -> tuple[int, int]:
    """A provider's size for a picture of the cell's shape `aspect` ("" keeps
    width×height's shape), at about `pixels`, in multiples of 64."""
    return provider_size(*sized(aspect, width, height), pixels=pixels)


def provider_size(width: int, height: int, *, pixels: int = 1024 * 1024) -> tuple[int, int]:
    """The panel's shape at about a megapixel, in multiples of 64 (what SDXL and FLUX
    are trained at): 768×544 becomes 1216×832."""
    scale = math.sqrt(pixels / (width * height))
    return (
        max(64, round(width * scale / 64) * 64),
        max(64, round(height * scale / 64) * 64),
    )


def panel_request(
    spec: PanelSpec, seed: int, *, width: int, height: int, max_references: int
) -> RenderRequest:
    """A panel's request, with at most `max_references` reference pictures."""
    references = [
        Reference(c.name, c.reference, "character", box_of(c.position, width, height))
        for c in spec.characters
        if c.reference
    ][:max_references]
    if spec.place is not None and spec.place.reference and len(references) < max_references:
        references.append(
            Reference(spec.place.name, spec.place.reference, "place", Box(0, 0, width, height))
        )
    regions = []
    for character in spec.characters[:SLOTS]:
        words = character_words(character)
        if character.position:
            words += f", {character.position} of the frame"
        regions.append(Region(words, box_of(character.position, width, height)))
    return RenderRequest(
        prompt=image_prompt(spec, references=tuple(r.name for r in references)),
        negative_prompt=negative_prompt(),
        seed=seed,
        width=width,
        height=height,
        blocking=blocking_text(spec),
        references=tuple(references),
        regions=tuple(regions),
    )


def rough_request(spec: PanelSpec, seed: int, *, width: int, height: int) -> RenderRequest:
    """A rough's request: the panel's, for the draft model, at a rough's size in the
    cell's shape, without references (a draft model takes none)."""
    small_w, small_h = shaped(spec.aspect, width, height, pixels=ROUGH_PIXELS)
    request = panel_request(spec, seed, width=small_w, height=small_h, max_references=0)
    return replace(request, draft=True)


def from_rough_request(
    spec: FromRoughSpec, seed: int, *, width: int, height: int, max_references: int
) -> RenderRequest:
    """A final's request that keeps its rough: the panel's, at the cell's shape, with the
    rough scaled to cover that size (its composition; `seed` is the rough's)."""
    from .masks import covering

    final_w, final_h = shaped(spec.panel.aspect, width, height)
    request = panel_request(
        spec.panel, seed, width=final_w, height=final_h, max_references=max_references
    )
    return replace(request, rough=covering(spec.rough, width=final_w, height=final_h))


def sheet_request(spec: SheetSpec, seed: int, *, width: int, height: int) -> RenderRequest:
    """A character sheet's request: the sheet prompt, no references."""
    return RenderRequest(
        prompt=sheet_prompt(spec),
        negative_prompt=negative_prompt(),
        seed=seed,
        width=width,
        height=height,
    )


def touchup_request(
    spec: TouchUpSpec, seed: int, *, width: int, height: int, max_references: int
) -> RenderRequest:
    """A touch-up's request: the panel's request (its references: the sheets of the
    characters the region covers) with the touch-up's prompt, the picture scaled to
    width×height and the canonical mask at the same size."""
    from .masks import scaled, scaled_picture

    request = panel_request(
        replace(spec.panel, description=spec.prompt or spec.panel.description),
        seed,
        width=width,
        height=height,
        max_references=max_references,
    )
    return replace(
        request,
        image=scaled_picture(spec.image, width=width, height=height),
        mask=scaled(spec.mask, width=width, height=height),
    )
