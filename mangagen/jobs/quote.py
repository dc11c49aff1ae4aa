"""What Generate would render and charge now: the quote the Review step shows."""

from __future__ import annotations

from dataclasses import dataclass, field

from ledger import services as ledger
from mangagen.characters.selectors import redrawn_for_sheets
from mangagen.storyboards.models import Storyboard
from mangagen.storyboards.selectors import current_takes

from .kinds.panel import PANEL


@dataclass(frozen=True)
class Quote:
    """What Generate would render and charge now: a panel's price (kinds/panel.py) for
    each panel without kept art.

    `sheets` names the panels in `render` that are drawn again only because a
    character's sheet changed (their picture is kept under the old one).
    """

    render: list[int]
    kept: list[int]
    credits: int
    available: int
    sheets: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "render": self.render,
            "kept": self.kept,
            "credits": self.credits,
            "available": self.available,
            "sheets": self.sheets,
        }


def quote(*, storyboard: Storyboard, user) -> Quote:
    takes = current_takes(storyboard=storyboard)
    render: list[int] = []
    kept: list[int] = []
    panels = list(storyboard.panels.all())
    for panel in panels:
        (kept if panel.art_hash in takes else render).append(panel.index)
    sheets = (
        redrawn_for_sheets(storyboard=storyboard, panels=panels, kept=set(takes)) if render else []
    )
    account = ledger.account_for(user)
    account.refresh_from_db()
    return Quote(
        render=render,
        kept=kept,
        credits=len(render) * PANEL.credits,
        available=account.available,
        sheets=sheets,
    )
