"""A touch-up: one region of a panel's kept picture drawn again, a paid render like any
other (mangagen/jobs/touchups.py takes the request: one hold, a render attempt that
carries a `TouchUp` row: the take it is drawn over, the canonical mask, the words).

The provider is asked to `touch_up` the region; what it drew is composited into the take
outside the mask (whatever it did to the rest is undone), and delivering it keeps it as
the panel's new current take. A touch-up's own job (`JobKind.TOUCHUP`) ends with it.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from mangagen.render_kinds.kind import Request, Work, register
from mangagen.renderers import PanelSpec, RenderError, RenderResult
from mangagen.renderers.base import TouchUpSpec, Verb

from .. import regions
from ..attempts import Attempt, AttemptKind, Drawn
from ..decisions import approve_panel
from ..errors import IllegalTransition
from ..models import LIVE_STATES, Job, JobKind, JobPanel, JobState, PanelState, TouchUp
from ..specs import panel_spec
from ..steps import end_job

logger = logging.getLogger(__name__)

# Where the panel's blocking puts a character, as the thirds of the picture's width
# (the procedural renderer's figures and the lettering stand inside them too).
THIRDS = {"left": (0.0, 1 / 3), "center": (1 / 3, 2 / 3), "right": (2 / 3, 1.0)}


class TouchUpKind(AttemptKind):
    """Paid, and waiting in the GPU pool, as the render the person is watching is; drawn
    from the take and the mask; composited, judged, then kept as a panel's render is."""

    name = "touch-up"
    credits = 1
    verb = Verb.TOUCH_UP

    def request(
        self, job: Job, panel: JobPanel, ref: Attempt
    ) -> tuple[Request, Drawn] | RenderError:
        """The take's picture, the mask and the words; the seed moves on with each attempt."""
        spec = panel_spec(job, panel)
        touch = touchup_of(ref)
        region = touchup_spec(touch, spec) if touch is not None else None
        if touch is None or region is None:
            return RenderError("The take to touch up was deleted.", retryable=False)
        faces = touch.take.faces if touch.take else {}
        seed = region.default_seed() + ref.attempt - 1
        return Request(self.verb, region, seed), Drawn(spec, faces=faces)

    def finish(self, work: Work, result: RenderResult) -> RenderResult:
        """Whatever the provider did outside the region is undone here (its picture is
        composited into the take through the mask); the take's faces stay."""
        region = work.request.spec
        try:
            result.image = regions.composite(region.image, result.image, region.mask)
        except regions.MaskError as exc:
            raise RenderError(
                f"The provider's picture could not be used: {exc}", retryable=False
            ) from exc
        result.content_type = "image/png"
        result.width, result.height = regions.size_of(result.image)
        result.metadata["faces"] = work.extra.faces or {}
        return result

    def after_failure(self, job: Job, panel: JobPanel) -> str:
        """A failed touch-up of a panel shown on a render job leaves it shown, as it was
        (its picture is still the take the touch-up was drawn over)."""
        if job.kind == JobKind.RENDER and panel.image:
            return PanelState.DELIVERED
        return PanelState.FAILED

    def after(self, ref: Attempt) -> None:
        settle_own_job(job_id=ref.job_id)  # a touch-up's own job ends with its render


TOUCH_UP = register(TouchUpKind())


def touchup_of(ref: Attempt) -> TouchUp | None:
    """The touch-up this render attempt draws, if it is one."""
    return (
        TouchUp.objects.select_related("take")
        .filter(attempt__job_id=ref.job_id, attempt__index=ref.index, attempt__attempt=ref.attempt)
        .first()
    )


def touchup_spec(touch: TouchUp, panel: PanelSpec) -> TouchUpSpec | None:
    """What the renderer is given: the take's picture, the mask, the words, and the
    panel's spec with only the characters whose third of the picture the region
    overlaps, when the blocking says where they stand. None if the take is gone."""
    if touch.take is None:
        return None
    with touch.take.image.open("rb") as handle:
        image = handle.read()
    with touch.mask.open("rb") as handle:
        mask = handle.read()
    return TouchUpSpec(
        panel=covered(panel, box=touch.box or regions.bounds(mask)),
        image=image,
        mask=mask,
        prompt=touch.prompt,
    )


def covered(panel: PanelSpec, *, box) -> PanelSpec:
    """The panel's spec with the characters the region `box` ([x, y, w, h]) may show:
    those whose third of the picture it overlaps, and those the blocking places nowhere."""
    x, _, w, _ = box
    present = tuple(
        c
        for c in panel.characters
        if c.position not in THIRDS or (THIRDS[c.position][0] < x + w and x < THIRDS[c.position][1])
    )
    return replace(panel, characters=present)


def settle_own_job(*, job_id: int) -> None:
    """A touch-up's own job ends with its render: completed once the touched-up take was
    shown (the panel approved: the take is kept), failed otherwise. A job that is not a
    touch-up's own, or has ended, is left as it is."""
    job = Job.objects.filter(pk=job_id, kind=JobKind.TOUCHUP, state__in=LIVE_STATES).first()
    if job is None:
        return
    panel = job.panels.filter(index=job.current_index).first()
    if panel is None:
        return
    if panel.state == PanelState.DELIVERED:
        try:
            approve_panel(job=job, index=panel.index)
        except IllegalTransition:
            logger.info("Touch-up job %s moved on before it could be completed", job_id)
    elif panel.state == PanelState.FAILED:
        end_job(job=job, state=JobState.FAILED, reason=panel.error or "The touch-up failed.")
