"""Celery: the broker's rules, the tasks' time limits, and beat's schedule (the sweeps)."""

from datetime import timedelta

from mangagen.kernel.queues import Queue
from mangagen.settings.environment import BASE_DIR, env
from mangagen.settings.stores import REDIS_URL

HOLD_SWEEP_SECONDS = env.int("HOLD_SWEEP_SECONDS", default=60)
RENDER_TASK_TIME_LIMIT = env.int("RENDER_TASK_TIME_LIMIT", default=300)
# A render not finished this long after it started is taken for lost and sent again.
RENDER_STUCK_SECONDS = env.int("RENDER_STUCK_SECONDS", default=RENDER_TASK_TIME_LIMIT + 60)

# A render's worker beats this often; three missed beats and the sweep (which looks as
# often) sends it again: a render lost with its worker goes again within ~4 beats.
RENDER_HEARTBEAT_SECONDS = env.float("RENDER_HEARTBEAT_SECONDS", default=1.0)

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
# A worker that dies mid-task gives the task back; every task is idempotent.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = RENDER_TASK_TIME_LIMIT
CELERY_TASK_SOFT_TIME_LIMIT = max(RENDER_TASK_TIME_LIMIT - 30, 30)
# Larger than any task can run, so Redis never redelivers a running task.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": RENDER_TASK_TIME_LIMIT * 4}
CELERY_TASK_DEFAULT_QUEUE = Queue.RENDER.value
CELERY_IMPORTS = [
    "ledger.tasks",
    "mangagen.jobs.tasks",
    "mangagen.characters.tasks",
    "mangagen.roughs.tasks",
    "mangagen.tasks",
]
CELERY_TASK_ROUTES = {
    "mangagen.*": {"queue": Queue.RENDER.value},
    "ledger.*": {"queue": Queue.RENDER.value},
}
# Beat's own file (when each periodic task last ran); a relative path is taken from the
# project's folder. Beat makes its folder when it starts (mangagen/kernel/beat_schedule.py),
# so the default works on a fresh clone, where var/ does not exist yet.
BEAT_SCHEDULE_FILE = env.str("BEAT_SCHEDULE_FILE", default="var/celerybeat-schedule")
CELERY_BEAT_SCHEDULE_FILENAME = str(BASE_DIR / BEAT_SCHEDULE_FILE)
CELERY_BEAT_SCHEDULER = "mangagen.kernel.beat_schedule.FolderMakingScheduler"
CELERY_BEAT_SCHEDULE = {
    "expire-stale-holds": {
        "task": "ledger.tasks.expire_stale_holds",
        "schedule": timedelta(seconds=HOLD_SWEEP_SECONDS),
    },
    "sweep-jobs": {
        "task": "mangagen.jobs.tasks.sweep_jobs",
        "schedule": timedelta(seconds=HOLD_SWEEP_SECONDS),
    },
    # As often as renders beat.
    "requeue-lost-renders": {
        "task": "mangagen.jobs.tasks.requeue_lost_renders",
        "schedule": timedelta(seconds=RENDER_HEARTBEAT_SECONDS),
    },
    "prune": {"task": "mangagen.tasks.prune", "schedule": timedelta(days=1)},
}
