"""Plain functions that build what a test needs, through the services (never raw rows).

The shared fixtures in conftest.py (`account`, `board`) call these with the defaults;
a test module that needs another shape calls them with its own arguments.
"""

from __future__ import annotations

import itertools

from ledger import services as ledger
from ledger.models import Account
from mangagen.storyboards import services as storyboards
from mangagen.storyboards.models import Storyboard

TWO_PANELS = [{"description": "One."}, {"description": "Two."}]


def funded_account(user, credits: int = 10, *, key: str = "seed") -> Account:
    """The person's credits account with `credits` granted once (none when 0)."""
    account = ledger.account_for(user)
    if credits:
        ledger.grant(account=account, amount=credits, key=key, reason="test")
        account.refresh_from_db()
    return account


def balance(owner) -> tuple[int, int]:
    """(available, held) of a credits account, or of a person's account, read now."""
    account = owner if isinstance(owner, Account) else ledger.account_for(owner)
    account.refresh_from_db()
    return account.available, account.held


def storyboard(
    owner,
    *,
    title: str = "Rooftops",
    characters: list[dict] | None = None,
    places: list[dict] | None = None,
    panels: list[dict] | None = None,
) -> Storyboard:
    """A storyboard with `panels` (two plain ones by default), `characters` and `places`."""
    board = storyboards.create_storyboard(owner=owner, title=title)
    return storyboards.update_storyboard(
        storyboard=board,
        characters=characters,
        places=places,
        panels=TWO_PANELS if panels is None else panels,
    )


def png(size: tuple[int, int] = (96, 96), colour: tuple[int, int, int] = (20, 120, 200)) -> bytes:
    """A small PNG: a kept take's or an uploaded picture's bytes."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


_takes = itertools.count(1)


def keep(board: Storyboard, *, indices: list[int] | None = None) -> None:
    """Kept art for the panels `indices` (every panel by default), as a Generate leaves it."""
    for panel in board.panels.all():
        if indices is None or panel.index in indices:
            storyboards.keep_render(
                storyboard_id=board.pk,
                art_hash=panel.art_hash,
                image=png(),
                faces={},
                source=None,
                # keep_render is idempotent per (source, attempt): a take of its own each.
                attempt=next(_takes),
            )


def pdf_page_count(data: bytes) -> int:
    """The pages of a PDF as its page tree says (Pillow's output, appended to or not): the
    `/Count` of the last `/Pages` object, the one an incremental update leaves in force."""
    import re

    counts = re.findall(rb"/Type /Pages\s*/Count (\d+)", data)
    assert counts, "no page tree in this PDF"
    return int(counts[-1])
