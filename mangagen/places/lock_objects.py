"""Row locks of places: the one way a service locks a comic's places.

In the studio's lock order (storyboards/lock_objects.py) a comic's places come
after the comic's row, which the caller holds already; several places are
locked by pk.
"""

from __future__ import annotations

from mangagen.storyboards.models import Storyboard

from .models import Place


def lock_places(*, storyboard: Storyboard) -> list[Place]:
    """Every place of the comic, locked in pk order."""
    return list(Place.objects.select_for_update().filter(storyboard=storyboard).order_by("pk"))


def lock_place(*, storyboard: Storyboard, name: str) -> Place | None:
    """The comic's place `name`, locked; None if it has none of that name."""
    return (
        Place.objects.select_for_update()
        .filter(storyboard=storyboard, name=name)
        .order_by("pk")
        .first()
    )
