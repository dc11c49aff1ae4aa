"""Reads of storyboards: a person's own one (what every API of a comic starts from), and
its kept art: what each panel shows now (what Generate would cost is the jobs' quote,
mangagen/jobs/quote.py)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404

from .hashing import storyboard_version
from .models import KeptArt, Storyboard


def owned_storyboard(request, pk: int, *, with_parts: bool = True) -> Storyboard:
    """The signed-in person's storyboard (`request.user`'s), or Http404. `with_parts`
    fetches its characters and panels with it; Generate and speculate read those again
    under a lock, and skip them here."""
    queryset = Storyboard.objects.filter(owner=request.user)
    if with_parts:
        queryset = queryset.select_related("series").prefetch_related(
            "characters", "panels", "places"
        )
    return get_object_or_404(queryset, pk=pk)


def current_takes(*, storyboard: Storyboard) -> dict[str, KeptArt]:
    """art hash -> the take shown for it (the most recently chosen), for this storyboard."""
    return current_takes_of_each(storyboards=[storyboard])[storyboard.pk]


def current_takes_of_each(*, storyboards: list[Storyboard]) -> dict[int, dict[str, KeptArt]]:
    """storyboard pk -> its `current_takes`, for every one of `storyboards` in one query
    (an empty dict for a storyboard with no kept art)."""
    each: dict[int, dict[str, KeptArt]] = {board.pk: {} for board in storyboards}
    # A take set aside (to be drawn again for its cell's new shape) is no panel's picture.
    kept_art = KeptArt.objects.filter(storyboard__in=storyboards, set_aside=False).order_by(
        "-chosen_at", "-pk"
    )
    for kept in kept_art:
        each[kept.storyboard_id].setdefault(kept.art_hash, kept)
    return each


def art_version(*, storyboard: Storyboard) -> str:
    """Like `version`, over the panels' art hashes: unchanged by a text-only edit.

    Work keyed on the pictures (a speculation, a look-ahead) can compare this
    instead of `version`, so fixing a typo does not throw a render away.
    """
    return storyboard_version([p.art_hash for p in storyboard.panels.all()])


def takes_of(*, storyboard: Storyboard, art_hash: str) -> list[KeptArt]:
    """Every kept take of one picture, the one shown first."""
    return list(KeptArt.objects.filter(storyboard=storyboard, art_hash=art_hash))
