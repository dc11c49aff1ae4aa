"""A page cell whose shape changed after its panel was drawn (a page break or a template
moved): the panel is marked, and its person chooses, once, between fitting the picture
to the cell as it is (free: it is cropped to cover the cell, centred on its characters,
as compose.py `fit` draws it) and drawing it again for the cell's shape (one credit: the
take is set aside, so the quote counts the panel and Generate draws it at that shape;
choosing the take again brings it back).
"""

from __future__ import annotations

from django.db import models, transaction
from django.http import Http404
from django.utils.translation import gettext, gettext_lazy

from mangagen.storyboards.lock_objects import lock_kept_art, lock_storyboard
from mangagen.storyboards.models import Storyboard
from mangagen.storyboards.selectors import current_takes

from .errors import NotReshaped
from .shapes import cell_aspects, same_shape


class ReshapeChoice(models.TextChoices):
    FIT = "fit", gettext_lazy("Fit the picture to its new cell (free)")
    REDRAW = "redraw", gettext_lazy("Draw it again for this cell (one credit, at Generate)")


def reshaped(*, storyboard: Storyboard, panels: list | None = None, takes=None) -> list[int]:
    """The panels whose shown take was drawn for another cell's shape than its cell's now,
    and not fitted to this one yet."""
    panels = list(storyboard.panels.all()) if panels is None else panels
    takes = current_takes(storyboard=storyboard) if takes is None else takes
    shapes = cell_aspects(storyboard=storyboard, panels=panels)
    marked = []
    for panel in panels:
        take, shape = takes.get(panel.art_hash), shapes.get(panel.index)
        if take is None or not take.aspect or not shape or same_shape(take.aspect, shape):
            continue
        if take.fitted_to and same_shape(take.fitted_to, shape):
            continue
        marked.append(panel.index)
    return marked


def choose(*, storyboard: Storyboard, index: int, choice: str) -> dict:
    """Fits panel `index`'s picture to its cell, or sets it aside to be drawn again.
    Raises Http404 for a panel with no kept picture, NotReshaped when it fits already."""
    with transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        panels = list(storyboard.panels.all())
        panel = next((p for p in panels if p.index == index), None)
        take = current_takes(storyboard=storyboard).get(panel.art_hash) if panel else None
        if panel is None or take is None:
            raise Http404("No such panel, or nothing of it is drawn.")
        if index not in reshaped(
            storyboard=storyboard, panels=panels, takes={panel.art_hash: take}
        ):
            raise NotReshaped(gettext("This panel's picture already fits its cell."))
        shape = cell_aspects(storyboard=storyboard, panels=panels)[index]
        kept = lock_kept_art(storyboard=storyboard, pk=take.pk)
        if choice == ReshapeChoice.FIT:
            kept.fitted_to = shape
            kept.save(update_fields=["fitted_to"])
        else:
            kept.set_aside = True
            kept.save(update_fields=["set_aside"])
    return {"index": index, "choice": choice, "aspect": shape}
