"""Row locks of roughs: the one way a service locks a rough.

Asking for roughs takes the comic's row first (mangagen/storyboards/lock_objects.py),
so two asks of one comic draw each panel once; a worker keeping or failing a rough
locks that rough's row alone (FOR UPDATE), as choosing a kept take locks the take alone:
nothing else is locked with it.
"""

from __future__ import annotations

from .models import Rough


def try_lock_rough(*, pk: int) -> Rough | None:
    """The rough's row, locked; None if it is gone (its comic was deleted)."""
    return Rough.objects.select_for_update().filter(pk=pk).first()
