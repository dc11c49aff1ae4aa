"""Row locks of comics: the one way a service locks a storyboard's row.

The studio's lock order, which every service follows (a transaction takes its
locks in this order and never goes back up it):

1. the person's row (speculation only, FOR NO KEY UPDATE);
2. comics, by pk (`lock_storyboard`, `lock_storyboards`);
3. a comic's sheets, places, translations and jobs, each by pk;
4. a job's panels;
5. the ledger's rows, in the ledger's own order (hold, key, account).

A path that creates, confirms, replaces or ends a job takes its comic's row
first, so two such paths on one comic run one after the other.

Always FOR NO KEY UPDATE, never FOR UPDATE: PostgreSQL checks a new row's
foreign key to its comic (a job, a kept render, a speculation) at commit with
a KEY SHARE lock, which FOR UPDATE blocks. A commit waiting for the comic's
row while that row's holder waits for the commit's job (on the one-live-job
index) was a deadlock. Deleting the comic takes the stronger lock itself, as
its last step.
"""

from __future__ import annotations

from collections.abc import Iterable

from .models import KeptArt, Storyboard


def lock_storyboard(*, pk: int) -> Storyboard:
    """The comic's row, locked. Raises Storyboard.DoesNotExist."""
    return Storyboard.objects.select_for_update(no_key=True).get(pk=pk)


def try_lock_storyboard(*, pk: int) -> Storyboard | None:
    """The comic's row, locked; None if it is gone (deleted meanwhile)."""
    return Storyboard.objects.select_for_update(no_key=True).filter(pk=pk).first()


def lock_storyboards(*, pks: Iterable[int]) -> list[Storyboard]:
    """Several comics' rows, locked in pk order (the ones that still exist)."""
    return list(
        Storyboard.objects.select_for_update(no_key=True).filter(pk__in=set(pks)).order_by("pk")
    )


def lock_kept_art(*, storyboard: Storyboard, pk: int) -> KeptArt:
    """A kept take of the comic's, locked. Raises KeptArt.DoesNotExist for a take that is
    not this comic's."""
    return KeptArt.objects.select_for_update().get(pk=pk, storyboard=storyboard)
