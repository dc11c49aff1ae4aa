"""Where a panel is shown on the comic's pages: its page and its frame's size there, and
whether its picture was drawn smaller than that frame (the page then shows it at
MAX_UPSCALE at most, on paper, rather than blown up): what the lettering editor says of
the panel it shows."""

from __future__ import annotations

from dataclasses import dataclass

from mangagen.storyboards.models import PageFormat, Storyboard

from .compose import STRIP_WIDTH, drawn_smaller, page_size
from .layout import LayoutPanel, paginate


@dataclass(frozen=True)
class Frame:
    page: int
    width: int  # pixels, as the page is drawn
    height: int
    drawn_smaller: bool  # the picture would be enlarged past MAX_UPSCALE to fill it


def frame_of(*, storyboard: Storyboard, index: int, art_size: tuple[int, int]) -> Frame | None:
    """Panel `index`'s frame on the comic's pages, for a picture of `art_size`; None for
    a panel the storyboard does not have."""
    panels = [LayoutPanel(p.index, p.shot) for p in storyboard.panels.all()]
    if storyboard.page_format == PageFormat.WEBTOON:  # the strip: full width, its own shape
        if index not in {p.index for p in panels}:
            return None
        size = (STRIP_WIDTH, round(STRIP_WIDTH * art_size[1] / art_size[0]))
        return Frame(1, *size, drawn_smaller(art_size, size))
    pages = paginate(
        panels,
        direction=storyboard.reading_direction,
        breaks=storyboard.page_breaks,
        templates=storyboard.page_templates,
    )
    width, height = page_size()
    for page in pages:
        if index in page.rects:
            x0, y0, x1, y1 = page.rects[index]
            size = (round((x1 - x0) * width), round((y1 - y0) * height))
            return Frame(page.number, *size, drawn_smaller(art_size, size))
    return None
