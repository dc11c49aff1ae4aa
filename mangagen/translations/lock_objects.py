"""Row locks of translations: the one way a service locks a comic's translation.

In the studio's lock order (storyboards/lock_objects.py) a translation comes
after its comic's row, which the caller holds already.
"""

from __future__ import annotations

from mangagen.storyboards.models import Storyboard

from .models import Translation


def lock_translation(*, storyboard: Storyboard, language: str) -> Translation | None:
    """The comic's translation into `language`, locked; None if it has none yet."""
    return (
        Translation.objects.select_for_update()
        .filter(storyboard=storyboard, language=language)
        .order_by("pk")
        .first()
    )
