"""Row locks of series: the one way a service locks a series' row.

A series' row is taken before any of its chapters' (a comic's row, see
storyboards/lock_objects.py): starting a chapter numbers it after the last
one, one at a time.
"""

from __future__ import annotations

from .models import Series


def lock_series(*, pk: int) -> Series:
    """The series' row, locked. Raises Series.DoesNotExist."""
    return Series.objects.select_for_update().get(pk=pk)
