"""Declined speculations are many and small: old ones are folded into daily counts.

A declined speculation has no job and no money attached; all the metrics need
of it is when and why. Rows older than the cut-off become one `DeclinedDaily`
count per UTC day and reason, in the same transaction as their deletion, so
the figures never count a row twice or lose one.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from django.db import transaction
from django.db.models import Count, F
from django.db.models.functions import TruncDate
from django.utils import timezone

from .lock_objects import lock_declined_before
from .models import DeclinedDaily, Speculation
from .report import WIDEST_PERIOD


def prune_declined(*, before: datetime, now: datetime | None = None) -> int:
    """Folds declined speculations created before `before` into daily counts; returns how many.

    Never touches a row the admin page's periods can still see (the widest one
    and the day it starts in): those figures stay exactly what they were. The
    cut-off is moved back to a UTC midnight, so no day is split between rows
    and counts.
    """
    now = now or timezone.now()
    before = min(before, now - WIDEST_PERIOD - timedelta(days=1))
    before = datetime.combine(before.astimezone(UTC).date(), time(), UTC)
    with transaction.atomic():
        ids = lock_declined_before(before=before)
        if not ids:
            return 0
        tally = (
            Speculation.objects.filter(pk__in=ids)
            .annotate(day=TruncDate("created_at"))
            .values("day", "reason")
            .annotate(n=Count("pk"))
            .order_by("day", "reason")
        )
        for row in tally:
            counted, created = DeclinedDaily.objects.get_or_create(
                day=row["day"], reason=row["reason"], defaults={"count": row["n"]}
            )
            if not created:
                DeclinedDaily.objects.filter(pk=counted.pk).update(count=F("count") + row["n"])
        Speculation.objects.filter(pk__in=ids).delete()
        return len(ids)
