"""Why a speculation request is refused. A declined speculation is no error (a 200 with
its `DeclineReason`); only a malformed request is."""

from __future__ import annotations

from mangagen.kernel.errors import InvalidInput


class NoToken(InvalidInput):
    """Leaving Review without naming the visit's speculation (400 `invalid`)."""
