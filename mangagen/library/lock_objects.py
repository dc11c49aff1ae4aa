"""Row locks of a person's library: the one way a service locks an entry.

An entry (a cast member or a saved place) belongs to a person, not to a comic:
it is taken after the comic's row when a comic's character or place is saved
(storyboards/lock_objects.py).
"""

from __future__ import annotations

from typing import TypeVar

from .models import CastMember, SavedPlace

Entry = TypeVar("Entry", CastMember, SavedPlace)


def lock_entry(*, model: type[Entry], owner, name: str) -> Entry | None:
    """The owner's entry of that name (ignoring case), locked; None if there is none.
    Of entries differing only by case, the first by name (then pk)."""
    return (
        model.objects.select_for_update()
        .filter(owner=owner, name__iexact=name)
        .order_by("name", "pk")
        .first()
    )
