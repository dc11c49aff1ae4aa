"""Touch-ups: one region of a panel's kept picture drawn again, a paid render like any other.

A touch-up is a render attempt of a job's panel (steps.py `queue_render`: one hold of
the touch-up kind's price, the `render` queue, a render's events) that carries a
`TouchUp` row: the take it is drawn over, the canonical mask (regions.py)
and what to draw. The worker's side is the kind's (kinds/touchup.py): the renderer asked
to `touch_up`, what it drew composited into the take outside the mask; delivering it
keeps it as the panel's new current take (the older stays: `choose_take` brings it back
free).

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
from dataclasses import dataclass

from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from mangagen.characters.picture_budget import check_picture_bytes
from mangagen.kernel import storage
from mangagen.kernel.errors import InvalidInput
from mangagen.renderers import masks
from mangagen.renderers.base import Verb
from mangagen.renderers.registry import renderer_for
from mangagen.storyboards.lock_objects import lock_storyboard
from mangagen.storyboards.models import KeptArt, Storyboard
from mangagen.storyboards.selectors import current_takes

from . import touchup_masks
from .decisions import cancel_job, job_panel_for, new_job
from .errors import NothingToTouchUp, TouchUpBusy, TouchUpUnsupported
from .kinds.touchup import TOUCH_UP
from .lock_objects import lock_job, lock_panel, try_lock_panel
from .models import LIVE_STATES, Job, JobKind, JobState, PanelState, TouchUp
from .steps import queue_render, schedule_deadline

logger = logging.getLogger(__name__)

# masks.MaskError's messages, for the catalog: the person reads them translated.
MASK_WORDS = (
    gettext_noop("A box is four numbers: [x, y, width, height]."),
    gettext_noop("The box must lie inside the picture (fractions from 0 to 1)."),
    gettext_noop("The region is empty: mark the part of the picture to draw again."),
    gettext_noop("The region covers the whole picture: use Redo to draw it all again."),
    gettext_noop("The mask is not a PNG, JPEG or WebP picture."),
    gettext_noop("The mask is too large."),
)

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
    if not renderer_for(Verb.TOUCH_UP).can_touch_up:
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
        # The hold first: a person without a credit is refused before their mask is read.
        queue_render(job=job, panel=job_panel, kind=TOUCH_UP)
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
            raise masks.MaskError("A box is four numbers: [x, y, width, height].")
        return touchup_masks.box_region(box, width=width, height=height, user_id=user_id)
    except masks.MaskError as exc:
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
