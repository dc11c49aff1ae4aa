"""Why a job refuses a request: the codes in one enum, and the errors that carry them."""

from __future__ import annotations

from enum import StrEnum

from mangagen.errors import ApplicationError


class JobRefusal(StrEnum):
    JOB_ERROR = "job_error"
    ILLEGAL_TRANSITION = "illegal_transition"
    INCOMPLETE = "incomplete"
    NOTHING_TO_RENDER = "nothing_to_render"


class JobError(ApplicationError):
    code = JobRefusal.JOB_ERROR
    status = 409


class IllegalTransition(JobError):
    code = JobRefusal.ILLEGAL_TRANSITION


class StoryboardIncomplete(JobError):
    code = JobRefusal.INCOMPLETE
    status = 400


class NothingToRender(StoryboardIncomplete):
    """Every panel already has kept art: there is nothing to start speculatively."""

    code = JobRefusal.NOTHING_TO_RENDER
