"""Touch-ups: one region of a panel's kept picture drawn again, a paid render like any other.

A touch-up is a render attempt of a job's panel (steps.py `queue_render`: one hold of
one credit, the `render` queue, a render's events) that carries a `TouchUp` row: the
take it is drawn over, the canonical mask (mangagen/renderers/regions.py) and what to
draw. The worker (rendering.py) asks the renderer to `touch_up` instead of `render`,
and composites what it drew into the take outside the mask; delivering it keeps it as
the panel's new current take (the older stays: `choose_take` brings it back free).

Which job it rides on: the comic's confirmed job when that job is waiting for a decision
on this very panel (as a Redo would); otherwise, when the comic has no job under way (a
speculation nobody confirmed is cancelled for it), a job of its own (`JobKind.TOUCHUP`)
holding just that panel, which ends once the touched-up take is shown or fails.

Refusals: before any hold, nothing kept (NothingToTouchUp) or a renderer that cannot
(TouchUpUnsupported); then no credits (the ledger's InsufficientCredits), before the
region is read; then, the hold rolled back with everything else, a bad region
(InvalidInput), the person's pictures full (Refused), their drawing budget spent
(LimitReached), the comic's job busy with another panel (TouchUpBusy).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from mangagen.characters.picture_budget import check_picture_bytes
from mangagen.kernel import storage
from mangagen.kernel.errors import InvalidInput
from mangagen.renderers import PanelSpec, get_renderer, regions
from mangagen.renderers.base import TouchUpSpec
from mangagen.storyboards.lock_objects import lock_storyboard
from mangagen.storyboards.models import KeptArt, Storyboard
from mangagen.storyboards.selectors import current_takes

from . import touchup_masks
from .decisions import approve_panel, cancel_job, job_panel_for, new_job
from .errors import IllegalTransition, NothingToTouchUp, TouchUpBusy, TouchUpUnsupported
from .lock_objects import lock_job, lock_panel, try_lock_panel
from .models import LIVE_STATES, Job, JobKind, JobState, PanelState, TouchUp
from .steps import end_job, queue_render, schedule_deadline

logger = logging.getLogger(__name__)

# regions.MaskError's messages, for the catalog: the person reads them translated.
MASK_WORDS = (
    gettext_noop("A box is four numbers: [x, y, width, height]."),
    gettext_noop("The box must lie inside the picture (fractions from 0 to 1)."),
    gettext_noop("The region is empty: mark the part of the picture to draw again."),
    gettext_noop("The region covers the whole picture: use Redo to draw it all again."),
    gettext_noop("The mask is not a PNG, JPEG or WebP picture."),
    gettext_noop("The mask is too large."),
)

# Where the panel's blocking puts a character, as the thirds of the picture's width
# (the procedural renderer's figures and the lettering stand inside them too).
THIRDS = {"left": (0.0, 1 / 3), "center": (1 / 3, 2 / 3), "right": (2 / 3, 1.0)}

MAX_PROMPT = 1000


@dataclass(frozen=True)
class Requested:
    """What `touch_up` started: the job it rides on and the attempt that draws it."""

    job: Job
    index: int
    attempt: int


def touch_up(
    *,
    user,
    storyboard: Storyboard,
    index: int,
    box: list | None = None,
    mask: bytes | None = None,
    prompt: str = "",
) -> Requested:
    """Draws the region (`box`, fractions [x, y, w, h], or a painted `mask`, white =
    redraw) of panel `index`'s current take again, under one new hold.

    The hold is placed before the region is looked at: a person without a credit is
    refused before a byte of their mask is read. The mask is then judged from its
    header, decoded once against the drawing budget (touchup_masks.py), counted in
    PICTURE_BYTES_PER_PERSON, and stored in the job's folder (renders/<job>/), which
    the job's prune and the comic's deletion empty.

    Raises Panel.DoesNotExist, NothingToTouchUp, TouchUpUnsupported, InsufficientCredits,
    AccountFlagged, InvalidInput, Refused (sheet_uploads_full), LimitReached
    (drawing_budget) or TouchUpBusy: then nothing is held, stored or changed.
    """
    panel = storyboard.panels.get(index=index)
    take = current_takes(storyboard=storyboard).get(panel.art_hash)
    if take is None:
        refusal = gettext("Panel %(index)s has no kept picture yet: generate it first.")
        raise NothingToTouchUp(refusal % {"index": index})
    if not get_renderer().can_touch_up:
        raise TouchUpUnsupported(
            gettext("The image provider configured here cannot redraw part of a picture.")
        )
    words = (prompt or "").strip()[:MAX_PROMPT] or panel.description
    # Files first, rows after (a transaction cannot take a file back): a refusal after
    # the mask is stored deletes it.
    with storage.deleted_if_raised() as saved, transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        job = _job_for(user=user, storyboard=storyboard, panel=panel, take=take)
        job_panel = lock_panel(job=job, index=index)
        queue_render(job=job, panel=job_panel)  # the hold: no credit, no mask read
        region = _region(take, box=box, mask=mask, user_id=user.pk)
        check_picture_bytes(owner_id=user.pk, adding=len(region.png))
        touch = TouchUp(
            attempt=job.render_attempts.get(index=index, attempt=job_panel.attempts),
            take=take,
            prompt=words,
            box=[round(v, 4) for v in region.box],
            mask_bytes=len(region.png),
        )
        touch.mask.save("mask.png", ContentFile(region.png), save=False)
        saved.append(touch.mask.name or "")
        touch.save()
    return Requested(job=job, index=index, attempt=job_panel.attempts)


def _region(
    take: KeptArt, *, box: list | None, mask: bytes | None, user_id: int
) -> touchup_masks.Region:
    """The region at the take's size, or InvalidInput."""
    with take.image.open("rb") as handle:
        width, height = touchup_masks.take_size(handle)
    try:
        if mask is not None:
            return touchup_masks.painted_region(mask, width=width, height=height, user_id=user_id)
        if box is None:
            raise regions.MaskError("A box is four numbers: [x, y, width, height].")
        return touchup_masks.box_region(box, width=width, height=height, user_id=user_id)
    except regions.MaskError as exc:
        raise InvalidInput(gettext(str(exc))) from exc


def stored_mask_bytes(*, owner_id: int) -> int:
    """The bytes of the touch-up masks one person has in storage (PICTURE_BYTES_PER_PERSON
    counts them: settings PICTURE_COUNTERS)."""
    rows = TouchUp.objects.filter(attempt__job__owner_id=owner_id).exclude(mask="")
    return rows.aggregate(total=Sum("mask_bytes"))["total"] or 0


def _job_for(*, user, storyboard: Storyboard, panel, take: KeptArt) -> Job:
    """The job the touch-up rides on (see the module's docstring), its row locked; the
    caller holds the comic's row lock, so no other job can start meanwhile."""
    live = Job.objects.filter(storyboard=storyboard, state__in=LIVE_STATES).first()
    if live is not None and not live.confirmed:
        # Speculation never goes before what a person asked for.
        cancel_job(
            job=live, reason="A touch-up replaced this speculation.", only_if_unconfirmed=True
        )
        live = Job.objects.filter(storyboard=storyboard, state__in=LIVE_STATES).first()
    if live is None:
        return _own_job(user=user, storyboard=storyboard, panel=panel)
    job = lock_job(pk=live.pk)
    current = try_lock_panel(job=job, index=panel.index)
    deciding_this = (
        job.live
        and job.state == JobState.AWAITING_DECISION
        and job.current_index == panel.index
        and current is not None
        and current.state == PanelState.DELIVERED
        and current.art_hash == panel.art_hash
    )
    if not deciding_this:
        raise TouchUpBusy(
            gettext(
                "This comic's job is still drawing: touch panel %(index)s up once the job "
                "shows it to you, or once the job ends."
            )
            % {"index": panel.index}
        )
    return job


def _own_job(*, user, storyboard: Storyboard, panel) -> Job:
    """A touch-up's own job: confirmed, holding just the panel (with its kept picture)."""
    job = new_job(
        user=user,
        storyboard=storyboard,
        confirmed=True,
        now=timezone.now(),
        kind=JobKind.TOUCHUP,
        current_index=panel.index,
    )
    job_panel_for(job, panel, current_takes(storyboard=storyboard)).save()
    job = lock_job(pk=job.pk)
    schedule_deadline(job)
    return job


# --- the worker's side -------------------------------------------------------------------


def touchup_of(*, job_id: int, index: int, attempt: int) -> TouchUp | None:
    """The touch-up this render attempt draws, if it is one."""
    return (
        TouchUp.objects.select_related("take")
        .filter(attempt__job_id=job_id, attempt__index=index, attempt__attempt=attempt)
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
