"""A panel, drawn for Generate or ahead of the person (speculation, the look-ahead), and
a redo of one (the same panel again with the next seed, under a new hold)."""

from __future__ import annotations

from mangagen.render_kinds.kind import register

from ..attempts import AttemptKind


class Panel(AttemptKind):
    """Paid when shown to its confirmed job's owner; confirmed work in the GPU pool when
    the person waits for it, speculative otherwise (`priority_of`); drawn from the
    panel the job froze; judged, then kept as ready or delivered."""

    name = "panel"
    credits = 1


class Redo(Panel):
    """A panel the person asked to see drawn again: a render as a panel's, paid again."""

    name = "redo"
    credits = 1


PANEL = register(Panel())
REDO = register(Redo())
