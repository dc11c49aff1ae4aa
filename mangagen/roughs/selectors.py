"""Reads of roughs: a comic's as the API shows them, and the ready one a final keeps."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from mangagen.storyboards.models import Storyboard

from . import budget
from .models import LIVE_STATES, Rough, RoughState


def current_roughs(*, storyboard_id: int, art_hashes) -> dict[str, Rough]:
    """The newest rough of each of `art_hashes` the comic has, by art hash."""
    found: dict[str, Rough] = {}
    rows = Rough.objects.filter(storyboard_id=storyboard_id, art_hash__in=set(art_hashes))
    for rough in rows.order_by("art_hash", "-pk"):
        found.setdefault(rough.art_hash, rough)
    return found


def stuck(rough: Rough, *, now=None) -> bool:
    """A rough asked for and not drawn in RENDER_STUCK_SECONDS: its worker was lost (a
    rough has no sweep; asking again draws it again)."""
    if rough.state not in LIVE_STATES:
        return False
    now = now or timezone.now()
    return rough.created_at < now - timedelta(seconds=settings.RENDER_STUCK_SECONDS)


def state_of(rough: Rough, *, now=None) -> str:
    """What the API says of it: a stuck one has failed."""
    return RoughState.FAILED if stuck(rough, now=now) else rough.state


def wants_drawing(rough: Rough | None, *, now=None) -> bool:
    """Whether a panel whose rough is `rough` needs one drawn: none, failed or stuck."""
    return rough is None or state_of(rough, now=now) == RoughState.FAILED


def image_url(rough: Rough) -> str | None:
    if rough.state != RoughState.READY or not rough.image:
        return None
    return reverse("rough-image", args=[rough.image.name.removeprefix("roughs/")])


def rough_json(rough: Rough, *, index: int, now=None) -> dict:
    """One rough as the API and the push channel show it."""
    return {
        "index": index,
        "art_hash": rough.art_hash,
        "state": state_of(rough, now=now),
        "image_url": image_url(rough),
        "seconds": round(rough.seconds, 3) if rough.seconds is not None else None,
    }


def roughs_body(*, storyboard: Storyboard) -> dict:
    """`GET …/roughs/`: the rough of each panel that has one, in reading order, and the
    person's budget of the day."""
    panels = list(storyboard.panels.all())
    current = current_roughs(storyboard_id=storyboard.pk, art_hashes=[p.art_hash for p in panels])
    now = timezone.now()
    return {
        "roughs": [
            rough_json(current[p.art_hash], index=p.index, now=now)
            for p in panels
            if p.art_hash in current
        ],
        "budget": {"used": budget.used(user_id=storyboard.owner_id), "limit": budget.limit()},
    }


def ready_rough(*, storyboard_id: int, art_hash: str) -> Rough | None:
    """The panel's rough when it is ready (the newest of its art hash), else None."""
    rough = current_roughs(storyboard_id=storyboard_id, art_hashes=[art_hash]).get(art_hash)
    return rough if rough is not None and rough.state == RoughState.READY else None


def rough_in_flight(*, storyboard_id: int, art_hash: str) -> Rough | None:
    """The panel's rough while it is asked for or drawing (not stuck), else None."""
    rough = current_roughs(storyboard_id=storyboard_id, art_hashes=[art_hash]).get(art_hash)
    if rough is None or rough.state not in LIVE_STATES or stuck(rough):
        return None
    return rough


def shown_rough(*, user, name: str) -> Rough | None:
    """The ready rough stored as `name`, if it is `user`'s."""
    return Rough.objects.filter(image=name, storyboard__owner=user, state=RoughState.READY).first()
