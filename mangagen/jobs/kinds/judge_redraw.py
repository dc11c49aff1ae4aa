"""A redraw the judge asks for (mangagen/jobs/judging.py): the render it redraws, drawn
again with another seed, inside that render's task and under its hold. Never charged
to the person (the operator pays for it: `mangagen_judge_redraws_total`), and it waits
in the speculative queue, so it never takes a container a person's render wants."""

from __future__ import annotations

from collections.abc import Callable

from mangagen.render_kinds import worker
from mangagen.render_kinds.kind import RenderKind, Work, register
from mangagen.renderers import RenderResult
from mangagen.renderers.base import Verb
from mangagen.renderers.gpu_pool import Priority


class JudgeRedraw(RenderKind):
    """Prepared and kept as part of the render it redraws (that render's kind), so it has
    no `prepare` or `keep` of its own: `redraw` is how it is drawn."""

    name = "judge redraw"
    credits = 0
    verb = Verb.RENDER  # as the render it redraws says (a touch-up's: its region only)
    priority = Priority.SPECULATIVE

    def redraw(
        self, kind: RenderKind, work: Work, seed: int, ticket: str, beat: Callable[[], None]
    ) -> RenderResult:
        """`work` (a render of `kind`) drawn again with `seed` under its own `ticket`,
        beating through `beat`, and finished as `kind` finishes its pictures."""
        again = worker.draw(
            work, seed=seed, ticket=ticket, priority=self.priority, while_waiting=beat
        )
        return kind.finish(work, again)


JUDGE_REDRAW = register(JudgeRedraw())
