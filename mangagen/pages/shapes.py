"""The shape of each panel's page cell: what a final (and a rough) is drawn at.

A picture drawn for its cell's shape fills it without cropping; one drawn for another
shape is cropped to cover it (compose.py `fit`, centred on the faces). The shape is the
cell's size in pixels on a composed page, reduced ("W:H"); a webtoon strip has no cells
(each panel keeps its picture's own shape), so it asks for none.
"""

from __future__ import annotations

import math

from mangagen.storyboards.models import PageFormat, Storyboard

from .compose import cells
from .layout import LayoutPanel, paginate

# How far two shapes' width:height may differ (as a ratio) and still be the same cell:
# a gutter's rounding is not a new shape.
SAME_SHAPE = 1.04


def cell_aspects(*, storyboard: Storyboard, panels: list | None = None) -> dict[int, str]:
    """Each panel's cell as "W:H", by index, for the comic's layout now (its breaks,
    templates and direction); {} for a webtoon strip."""
    if storyboard.page_format == PageFormat.WEBTOON:
        return {}
    panels = list(storyboard.panels.all()) if panels is None else panels
    pages = paginate(
        [LayoutPanel(p.index, p.shot) for p in panels],
        direction=storyboard.reading_direction,
        breaks=storyboard.page_breaks,
        templates=storyboard.page_templates,
    )
    shapes = {}
    for page in pages:
        for index, (x0, y0, x1, y1) in cells(page).items():
            width, height = max(1, x1 - x0), max(1, y1 - y0)
            whole = math.gcd(width, height)
            shapes[index] = f"{width // whole}:{height // whole}"
    return shapes


def ratio(aspect: str) -> float | None:
    """`aspect` ("W:H") as width / height; None when it says nothing."""
    width, _, height = aspect.partition(":")
    try:
        return float(width) / float(height)
    except (ValueError, ZeroDivisionError):
        return None


def same_shape(one: str, other: str) -> bool:
    """Whether two shapes are the same cell's, within SAME_SHAPE (unknown ones are)."""
    a, b = ratio(one), ratio(other)
    if a is None or b is None:
        return True
    return max(a, b) / min(a, b) <= SAME_SHAPE
