"""Why a job refuses a request: the codes in one enum, and the errors that carry them."""

from __future__ import annotations

from enum import StrEnum

from mangagen.kernel.errors import ApplicationError


class JobRefusal(StrEnum):
    JOB_ERROR = "job_error"
    ILLEGAL_TRANSITION = "illegal_transition"
    INCOMPLETE = "incomplete"
    NOTHING_TO_RENDER = "nothing_to_render"
    NOTHING_TO_TOUCH_UP = "nothing_to_touch_up"
    TOUCHUP_UNSUPPORTED = "touchup_unsupported"
    TOUCHUP_BUSY = "touchup_busy"


class JobError(ApplicationError, code=JobRefusal.JOB_ERROR, status=409): ...


class IllegalTransition(JobError, code=JobRefusal.ILLEGAL_TRANSITION): ...


class StoryboardIncomplete(JobError, code=JobRefusal.INCOMPLETE, status=400): ...


class NothingToRender(StoryboardIncomplete, code=JobRefusal.NOTHING_TO_RENDER):
    """Every panel already has kept art: there is nothing to start speculatively."""


class NothingToTouchUp(JobError, code=JobRefusal.NOTHING_TO_TOUCH_UP):
    """The panel has no kept picture yet: there is nothing to draw a region of."""


class TouchUpUnsupported(JobError, code=JobRefusal.TOUCHUP_UNSUPPORTED):
    """The configured renderer cannot redraw a region of a picture."""


class TouchUpBusy(JobError, code=JobRefusal.TOUCHUP_BUSY):
    """The comic's job is drawing or deciding another panel: a touch-up of this one waits
    until that panel is shown or the job ends."""
