"""The one worker path every render kind runs: prepare → draw → keep.

The kind prepares its render under its own locks (and answers at once when there is
nothing to draw); the provider draws it with no database connection held, while the
render beats; the picture is finished and checked as the kind says, recorded (what the
provider took, learned for every render: mangagen/renderers/observed.py), and kept.
"""

from __future__ import annotations

from typing import Any

from mangagen.kernel import paid_render
from mangagen.renderers import RenderResult, observed
from mangagen.renderers.base import draw as ask
from mangagen.renderers.gpu_pool import Priority, Withdrawn

from .kind import RenderKind, Work


def perform(kind: RenderKind, ref: Any) -> str:
    """Renders `ref` as `kind` says; safe to run twice (the kind's prepare and keep
    re-check what they need on locked rows). Returns the kind's outcome; raises
    RenderError for the task's policy (failures.py) to retry or fail."""
    work = kind.prepare(ref)
    if not isinstance(work, Work):
        return work  # nothing to draw: the kind's answer
    paid_render.hold_no_connection()  # the wait for a container or a provider can be long
    with work.beats:
        try:
            first = kind.finish(work, draw(work))
        except Withdrawn as withdrawn:
            return kind.withdrawn(work, withdrawn)
        checked = kind.check(work, first)
    observed.record(first)
    return kind.keep(work, first, checked)


def draw(
    work: Work,
    *,
    seed: int | None = None,
    ticket: str | None = None,
    priority: Priority | None = None,
    while_waiting=None,
) -> RenderResult:
    """Asks the work's renderer for its request; or, given another `seed` and `ticket`
    (and `priority`), for the same request drawn again (a redraw: its states are not
    the render's, and it beats through `while_waiting`)."""
    request = work.request
    return ask(
        work.renderer,
        request.verb,
        request.spec,
        request.seed if seed is None else seed,
        ticket=ticket or work.ticket,
        priority=priority or work.priority,
        on_state=work.on_state if ticket is None else None,
        while_waiting=while_waiting,
    )
