"""The render job state machine's public face: what views, the API, tasks, speculation
and other apps call. Every transition: keyword-only, atomic, row-locked.

The job's code lives in modules named for what they do:

- decisions.py: a person's decisions (generate, confirm, approve, redo, cancel);
- rendering.py: the worker's side (perform_render: a render attempt run as its kind,
  kinds/, through attempts.py; a render's failure);
- recovery.py: the sweeps (deadlines past, renders lost or never started);
- steps.py: what they share (a job's state change, a render's hold and queue,
  delivery, ending a job), with the charging rule and the lock order.

Reads live in selectors.py, the renderer's spec in specs.py, and enqueueing
in dispatch.py (tasks by name, on commit): tasks.py imports these modules,
never the other way round. A test that replaces a function patches the module
that owns it, not this one.
"""

from __future__ import annotations

from mangagen.renderers import RenderError

from .decisions import (
    approve_panel,
    cancel_job,
    confirm_job,
    generate,
    redo_panel,
    start_job,
)
from .errors import IllegalTransition, JobError, NothingToRender, StoryboardIncomplete
from .recovery import (
    expire_due_jobs,
    expire_job_if_due,
    requeue_lost_renders,
    requeue_stuck_renders,
)
from .rendering import fail_render, perform_render, queue_lookahead
from .steps import past_deadline

__all__ = [
    "IllegalTransition",
    "JobError",
    "NothingToRender",
    "RenderError",
    "StoryboardIncomplete",
    "approve_panel",
    "cancel_job",
    "confirm_job",
    "expire_due_jobs",
    "expire_job_if_due",
    "fail_render",
    "generate",
    "past_deadline",
    "perform_render",
    "queue_lookahead",
    "redo_panel",
    "requeue_lost_renders",
    "requeue_stuck_renders",
    "start_job",
]
