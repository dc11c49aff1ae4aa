"""Checked before shown: the studio's side of the judge (its provider is judge.py).

After a render lands and before it is kept as ready or delivered, its worker asks the
judge for a verdict. Under `JUDGE_MIN_SCORE` the panel is drawn again with another seed,
at most `JUDGE_MAX_REDRAWS` times and only while the GPU pool has room for confirmed work
(a free container beyond the confirmed renders waiting; the redraw then waits in the
speculative queue, so it never takes a container a person's render wants); the
best-scored render is the one kept. A redraw is part of the same render attempt, under
the same hold: the person pays once, for the panel shown (the operator pays for the
redraw: `mangagen_judge_redraws_total`). No verdict (an error, a timeout, nonsense)
lets the render through unchecked; a redraw that fails or is withdrawn leaves the best
render so far. One person's renders get at most JUDGE_REDRAWS_PER_PERSON_PER_HOUR redraws
in all (past it a low render is shown as it is, flagged `low`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import redis
from django.conf import settings
from django.core.cache import cache

from mangagen.observability import metrics
from mangagen.observability.metrics import JudgeVerdict
from mangagen.render_kinds.kind import Checked
from mangagen.renderers import PanelSpec, RenderError, RenderResult, observed
from mangagen.renderers.gpu_pool import GpuPool, Withdrawn

from .judge import Judge, Verdict, get_judge

logger = logging.getLogger(__name__)

# A redraw's seed: far from the attempt seeds a redo uses (default seed + attempt - 1).
SEED_STRIDE = 7919

# (seed, the redraw's ticket, a beat to call while it waits) -> the redraw, drawn as the
# judge's redraw kind says (kinds/judge_redraw.py)
Redraw = Callable[[int, str, Callable[[], None]], RenderResult]


def check_render(
    *,
    first: RenderResult,
    spec: PanelSpec,
    seed: int,
    ticket: str,
    redraw: Redraw,
    person: int | None = None,
) -> Checked:
    """The render to keep of `first` and the redraws the judge asks for (see the module);
    `person`'s redraws are bounded by JUDGE_REDRAWS_PER_PERSON_PER_HOUR."""
    judge = get_judge()
    if judge is None:
        return Checked(first, None)
    started = time.monotonic()
    verdict = _ask(judge, first, spec)
    if verdict is None:
        metrics.record_judge(JudgeVerdict.UNCHECKED)
        return Checked(first, None)
    best, best_verdict, redraws = first, verdict, 0
    while best_verdict.score < settings.JUDGE_MIN_SCORE and redraws < settings.JUDGE_MAX_REDRAWS:
        if not room_for_a_redraw(first, started) or not redraw_allowed(person):
            break
        redraws += 1
        again = run_redraw(redraw, seed=seed + SEED_STRIDE * redraws, ticket=ticket, n=redraws)
        if again is None:
            break
        verdict = _ask(judge, again, spec)
        if verdict is not None and verdict.score > best_verdict.score:
            best, best_verdict = again, verdict
    if redraws:
        metrics.record_judge(JudgeVerdict.REDRAWN)
    elif best_verdict.score < settings.JUDGE_MIN_SCORE:
        metrics.record_judge(JudgeVerdict.KEPT_LOW)
    else:
        metrics.record_judge(JudgeVerdict.PASSED)
    return Checked(best, check_of(best_verdict, redraws=redraws, spec=spec))


def check_of(verdict: Verdict, *, redraws: int, spec: PanelSpec) -> dict:
    """A panel's `check` (docs/api.md, "Checked before shown"): the score, the redraws
    drawn, the judge's reason; and, besides, each character's score, whose sheets it was
    checked against, and whether it is shown under the bar."""
    return {
        "score": round(verdict.score, 3),
        "redraws": redraws,
        "reason": verdict.reason,
        "characters": {name: round(score, 3) for name, score in verdict.characters.items()},
        "sheets": [c.name for c in spec.characters if c.reference],
        "low": verdict.score < settings.JUDGE_MIN_SCORE,
    }


def _ask(judge: Judge, result: RenderResult, spec: PanelSpec) -> Verdict | None:
    started = time.monotonic()
    try:
        return judge.judge(picture=result.image, spec=spec)
    except Exception:  # a judge never fails a render
        logger.exception("The judge raised")
        return None
    finally:
        metrics.judge_seconds.observe(time.monotonic() - started)


def redraw_allowed(person: int | None) -> bool:
    """Counts one redraw for `person` this hour; False past JUDGE_REDRAWS_PER_PERSON_PER_HOUR
    (the operator pays for redraws: one person's renders must not buy unbounded ones).
    Counted in the cache (Redis), shared by every worker; when it cannot be reached,
    no redraw."""
    if person is None:
        return True
    hour = int(time.time() // 3600)
    key = f"judge-redraws:{person}:{hour}"
    try:
        used = 1 if cache.add(key, 1, timeout=2 * 3600) else cache.incr(key)
    except (ValueError, redis.RedisError):
        return False
    return used <= settings.JUDGE_REDRAWS_PER_PERSON_PER_HOUR


def room_for_a_redraw(first: RenderResult, started: float) -> bool:
    """Whether a redraw may start now: a container is free beyond the confirmed renders
    waiting, and the render task has time left for one more render and its check."""
    spent = time.monotonic() - started + first.seconds
    if (
        spent + first.seconds + settings.JUDGE_TIMEOUT_SECONDS
        > settings.RENDER_TASK_TIME_LIMIT - 60
    ):
        return False
    try:
        state = GpuPool().state()
    except redis.RedisError:
        return False
    free = sum(not c.busy for c in state.containers)
    return free - state.waiting_confirmed > 0


def run_redraw(redraw: Redraw, *, seed: int, ticket: str, n: int) -> RenderResult | None:
    """One redraw under a ticket of its own (a remote render of the same ticket would
    follow the first one's submission), withdrawn with the render it redraws."""
    pool = GpuPool()
    own = f"{ticket}:redraw:{n}"
    try:
        if pool.withdrawn(ticket):  # its job ended while the judge looked: draw nothing
            return None
    except redis.RedisError:
        return None

    def follow_withdrawal() -> None:
        try:
            if pool.withdrawn(ticket):
                pool.withdraw(own)
        except redis.RedisError:
            pass

    try:
        again = redraw(seed, own, follow_withdrawal)
    except (RenderError, Withdrawn) as exc:
        logger.warning("The judge's redraw %s did not land: %r", own, exc)
        return None
    observed.record(again)
    metrics.record_judge_redraw(again.seconds)
    return again
