"""Row locks of speculation: the one way its services lock a row.

A speculation's transaction takes the person's row first (FOR NO KEY UPDATE),
then the comics' rows and what follows them in the studio's lock order
(mangagen/storyboards/lock_objects.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model

from .models import Outcome, Speculation

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def lock_person(*, user: User) -> None:
    """The person's row, locked, so one person's speculations are decided one at a time.

    NO KEY UPDATE: a plain FOR UPDATE would also block other transactions'
    foreign-key checks on the user (a Generate in another tab, at its commit)
    while this one waits to lock that Generate's job: a deadlock.
    """
    get_user_model().objects.select_for_update(no_key=True).get(pk=user.pk)


def lock_declined_before(*, before: datetime) -> list[int]:
    """The ids of the declined speculations created before `before`, locked in pk order."""
    return list(
        Speculation.objects.select_for_update()
        .filter(outcome=Outcome.DECLINED, created_at__lt=before)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
