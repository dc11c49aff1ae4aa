"""Settings for Mangagen, read once from the environment (see `.env.example`).

With no `DATABASE_URL` the app runs on a SQLite file (WAL, immediate
transactions) so that daphne and the Celery workers can share it; with no
`REDIS_URL` it expects the embedded Redis that `bin/with-redis` starts.
"""

from datetime import timedelta
from ipaddress import ip_network
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured
from django_guid.integrations import CeleryIntegration

from mangagen.drafting.catalog import DrafterName
from mangagen.kernel import storage_config
from mangagen.kernel.queues import Queue
from mangagen.observability.logs import logging_config
from mangagen.renderers import templates, workflows
from mangagen.renderers.catalog import ImagesServer, RendererName, refuse_unknown

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# The environment wins over the file, whatever sets it.
ENV_FILE = Path(env.str("ENV_FILE", default=str(BASE_DIR / ".env")))
if ENV_FILE.exists():
    environ.Env.read_env(ENV_FILE, overwrite=False)

# Off unless asked for. `make run` sets LOCAL_RUN, which only changes DEBUG's default:
# a DEBUG of the environment or of the .env file is kept as it is.
DEBUG = env.bool("DEBUG", default=env.bool("LOCAL_RUN", default=False))

_DEV_SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
SECRET_KEY = env.str("SECRET_KEY", default="")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[])
if not DEBUG:
    # Production must be configured on purpose, never by accident.
    if not SECRET_KEY or SECRET_KEY == _DEV_SECRET_KEY:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off.")
else:
    SECRET_KEY = SECRET_KEY or _DEV_SECRET_KEY
    ALLOWED_HOSTS = ALLOWED_HOSTS or ["localhost", "127.0.0.1", "[::1]", "testserver"]

CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])


def _loopback(host: str) -> bool:
    host = host.strip().lstrip(".").lower()
    return (
        host in {"localhost", "testserver", "[::1]", "::1"}
        or host.startswith("127.")
        or (host.endswith(".localhost"))
    )


# The local demo's free things (the demo logins `make run` makes, the Credits page's
# demo credits) only where no one else can reach them: DEBUG on, and the app serving
# and answering loopback names alone; DEMO_MODE=off says so explicitly. DEMO_MODE=on
# where others could reach the demo's well-known logins (DEBUG off, or a host in
# ALLOWED_HOSTS that is not loopback) refuses to start.
DEMO_MODE = env.bool(
    "DEMO_MODE",
    default=DEBUG
    and all(_loopback(h) for h in ALLOWED_HOSTS)
    and _loopback(env.str("HOST", default="127.0.0.1")),
)
if DEMO_MODE and not DEBUG:
    raise ImproperlyConfigured(
        "DEMO_MODE is on with DEBUG off: the demo's logins and free credits are for a "
        "local run only. Turn DEMO_MODE off (or DEBUG on, on a loopback host)."
    )
if DEMO_MODE and (public := [h for h in ALLOWED_HOSTS if not _loopback(h)]):
    raise ImproperlyConfigured(
        f"DEMO_MODE is on with ALLOWED_HOSTS naming {', '.join(public)}, not loopback: "
        "the demo's logins and free credits are for a local run only. Turn DEMO_MODE off."
    )

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.humanize",  # intcomma: numbers grouped as the interface's language writes them
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "django_guid",
    "ledger",
    "mangagen",
    "speculation",
]

MIDDLEWARE = [
    # Probes first: an orchestrator asks by address, over plain HTTP (observability/middleware.py).
    "mangagen.observability.middleware.ProbesMiddleware",
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    # The request id (X-Request-ID), on every log line of the request and its Celery tasks.
    "django_guid.middleware.guid_middleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The interface's language: the switcher's cookie, else Accept-Language (LANGUAGES).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # HTTP latency and answers by view (django_http_requests_latency_seconds_by_view_method).
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "mangagen.urls"
ASGI_APPLICATION = "mangagen.asgi.application"
WSGI_APPLICATION = "mangagen.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "mangagen.views.interface_languages.catalog_context",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------
DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers run beside one writer; IMMEDIATE takes the write lock
    # at BEGIN, so two processes never deadlock upgrading a read lock;
    # synchronous=FULL syncs the WAL at every commit, so a committed grant
    # survives a power cut (NORMAL may lose the last commits).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
        }
    )
else:
    # A pool of connections per process (psycopg_pool): daphne runs each request
    # in a thread of its own, so a per-thread persistent connection (CONN_MAX_AGE)
    # would never be reused, and without a pool every request and task opened a
    # connection of its own (a new PostgreSQL backend each time). The pool's
    # connections keep the ledger's prepared statements, too. DB_POOL_MAX_SIZE=0
    # turns it off (then CONN_MAX_AGE applies), e.g. behind PgBouncer. The
    # default matches the workers' thread count (RENDER_CONCURRENCY).
    DB_POOL_MAX_SIZE = env.int("DB_POOL_MAX_SIZE", default=32)
    # Every connection is checked before it is handed out (the pool's check_connection,
    # or Django's own check of a persistent one): after a failover or
    # pg_terminate_backend, a dead connection is replaced instead of failing a request.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Times each wait for a connection (mangagen_db_connection_wait_seconds).
    DATABASES["default"]["ENGINE"] = "mangagen.observability.postgresql"
    if DB_POOL_MAX_SIZE:
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": DB_POOL_MAX_SIZE,
            "timeout": 30,  # seconds a request waits for a free connection
        }
    else:
        DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=0))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: broker, channel layer, cache ------------------------------------
REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:6379/0")

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
    }
}
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL]},
    }
}

# --- Celery ------------------------------------------------------------------
HOLD_SWEEP_SECONDS = env.int("HOLD_SWEEP_SECONDS", default=60)
RENDER_TASK_TIME_LIMIT = env.int("RENDER_TASK_TIME_LIMIT", default=300)
# A render not finished this long after it started is taken for lost and sent again.
RENDER_STUCK_SECONDS = env.int("RENDER_STUCK_SECONDS", default=RENDER_TASK_TIME_LIMIT + 60)

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
    "mangagen.tasks",
]
CELERY_TASK_ROUTES = {
    "mangagen.*": {"queue": Queue.RENDER.value},
    "ledger.*": {"queue": Queue.RENDER.value},
}
CELERY_BEAT_SCHEDULE = {
    "expire-stale-holds": {
        "task": "ledger.tasks.expire_stale_holds",
        "schedule": timedelta(seconds=HOLD_SWEEP_SECONDS),
    },
    "sweep-jobs": {
        "task": "mangagen.jobs.tasks.sweep_jobs",
        "schedule": timedelta(seconds=HOLD_SWEEP_SECONDS),
    },
    # As often as renders beat (RENDER_HEARTBEAT_SECONDS, below).
    "requeue-lost-renders": {
        "task": "mangagen.jobs.tasks.requeue_lost_renders",
        "schedule": timedelta(seconds=1),
    },
    "prune": {"task": "mangagen.tasks.prune", "schedule": timedelta(days=1)},
}

# --- Ledger ------------------------------------------------------------------
HOLD_DEFAULT_EXPIRES_SECONDS = env.int("HOLD_DEFAULT_EXPIRES_SECONDS", default=2 * 60 * 60)
# On PostgreSQL each hold operation is one stored-function call (ledger/fast_path.py),
# and concurrent ones on one account share a commit (ledger/batching.py). Off only to
# compare with the plain path (tests, bench/ledger.py).
LEDGER_FAST_PATH = True
LEDGER_BATCHING = True
DEMO_USERNAME = env.str("DEMO_USERNAME", default="demo")
DEMO_PASSWORD = env.str("DEMO_PASSWORD", default="demo-pass-1234")
DEMO_CREDITS = env.int("DEMO_CREDITS", default=20)

# --- Rendering and speculation (used by the studio and speculation apps) -----
RENDERER = env.str("RENDERER", default="procedural")
# An unknown renderer refuses to start (daphne, Celery, manage.py alike) rather than
# failing every panel.
if refused := refuse_unknown("RENDERER", RENDERER, RendererName):
    raise ImproperlyConfigured(refused)
# For the simulated GPU, its cold start; for a real provider, the prior of what is
# learned from its renders (mangagen/renderers/observed.py).
RENDER_COLD_START_SECONDS = env.float("RENDER_COLD_START_SECONDS", default=20.0)
RENDER_IDLE_SECONDS = env.float("RENDER_IDLE_SECONDS", default=300.0)
RENDER_SECONDS = env.float("RENDER_SECONDS", default=2.0)
# The GPU provider: GPU_POOL_SIZE containers (each with its own cold start, scaling to
# zero after RENDER_IDLE_SECONDS), shared by every worker through Redis.
GPU_POOL_SIZE = env.int("GPU_POOL_SIZE", default=4)
GPU_POOL_PREFIX = env.str("GPU_POOL_PREFIX", default="mangagen:gpu")
# A render's worker beats this often; three missed beats and the sweep (which looks as
# often) sends it again: a render lost with its worker goes again within ~4 beats.
RENDER_HEARTBEAT_SECONDS = env.float("RENDER_HEARTBEAT_SECONDS", default=1.0)
CELERY_BEAT_SCHEDULE["requeue-lost-renders"]["schedule"] = timedelta(
    seconds=RENDER_HEARTBEAT_SECONDS
)
SPECULATION_ENABLED = env.bool("SPECULATION_ENABLED", default=True)
SPECULATION_DEBOUNCE_MS = env.int("SPECULATION_DEBOUNCE_MS", default=1500)
SPECULATION_CONFIRM_SECONDS = env.int("SPECULATION_CONFIRM_SECONDS", default=600)
SPECULATION_MAX_INFLIGHT = env.int("SPECULATION_MAX_INFLIGHT", default=50)
SPECULATION_LOOKAHEAD = env.int("SPECULATION_LOOKAHEAD", default=1)
SPECULATION_BACKLOG_MAX = env.int("SPECULATION_BACKLOG_MAX", default=20)
# Admission by expected benefit: speculate only when the render is likely (at least
# SPECULATION_MIN_CHANCE) to be done before the person clicks Generate, against the
# dwell on Review learned from recent visits (prior: a median of DWELL_PRIOR_SECONDS).
SPECULATION_MIN_CHANCE = env.float("SPECULATION_MIN_CHANCE", default=0.5)
SPECULATION_DWELL_PRIOR_SECONDS = env.float("SPECULATION_DWELL_PRIOR_SECONDS", default=30.0)
# Budgets: speculative renders an hour, all people together; abandoned speculations an
# hour per person before their recent hit rate must be at least the floor; the share
# (%) of SPECULATION_MAX_INFLIGHT for people who never attached to a speculation.
SPECULATION_BUDGET_PER_HOUR = env.int("SPECULATION_BUDGET_PER_HOUR", default=7200)
SPECULATION_PERSON_ABANDONS_PER_HOUR = env.int("SPECULATION_PERSON_ABANDONS_PER_HOUR", default=6)
SPECULATION_PERSON_MIN_HIT_RATE = env.float("SPECULATION_PERSON_MIN_HIT_RATE", default=0.25)
SPECULATION_UNPROVEN_SHARE = env.int("SPECULATION_UNPROVEN_SHARE", default=20)
RENDER_COST_USD = env.float("RENDER_COST_USD", default=0.004)
GPU_WARM_USD_PER_DAY = env.float("GPU_WARM_USD_PER_DAY", default=21.0)
JOB_TTL_SECONDS = env.int("JOB_TTL_SECONDS", default=7200)

RENDER_WIDTH = env.int("RENDER_WIDTH", default=768)
RENDER_HEIGHT = env.int("RENDER_HEIGHT", default=544)
RENDER_HTTP_TIMEOUT_SECONDS = env.float("RENDER_HTTP_TIMEOUT_SECONDS", default=120.0)
RENDER_HTTP_RETRIES = env.int("RENDER_HTTP_RETRIES", default=3)
RENDER_HTTP_BACKOFF_SECONDS = env.float("RENDER_HTTP_BACKOFF_SECONDS", default=1.0)
IMAGES_BASE_URL = env.str("IMAGES_BASE_URL", default="https://api.openai.com")
IMAGES_API_KEY = env.str("IMAGES_API_KEY", default="")
IMAGES_MODEL = env.str("IMAGES_MODEL", default="gpt-image-1")
IMAGES_SIZE = env.str("IMAGES_SIZE", default="1024x1024")
# Character sheets as reference images: the path of an endpoint that takes them (multipart,
# one or more `image[]`, e.g. /v1/images/edits; empty: the backend takes none and panels go
# to generations with the description alone), and how many one request may carry.
IMAGES_REFERENCE_ENDPOINT = env.str("IMAGES_REFERENCE_ENDPOINT", default="")
IMAGES_MAX_REFERENCES = env.int("IMAGES_MAX_REFERENCES", default=4)
# What serves that endpoint decides how references travel (ImagesServer): OpenAI's edits,
# LocalAI's `ref_images`, or stable-diffusion.cpp's extra args (never its init image).
IMAGES_SERVER = env.str("IMAGES_SERVER", default="openai")
if refused := refuse_unknown("IMAGES_SERVER", IMAGES_SERVER, ImagesServer):
    raise ImproperlyConfigured(refused)


def _template(text: str, *, what: str) -> dict | None:
    """A JSON template setting, checked now (a typo refuses to start)."""
    if not text.strip():
        return None
    try:
        return templates.load(text, what=what)
    except templates.TemplateError as exc:
        raise ImproperlyConfigured(str(exc)) from exc


# The remote providers (mangagen/renderers/: the provider layer remote.py and an adapter
# each). Every picture they answer with comes in through one intake: fetched only from
# the provider's own hosts or RENDER_IMAGE_HOSTS, at most RENDER_IMAGE_MAX_BYTES, PNG,
# JPEG or WebP, re-encoded as PNG.
RENDER_POLL_SECONDS = env.float("RENDER_POLL_SECONDS", default=0.5)
RENDER_IMAGE_HOSTS = env.list("RENDER_IMAGE_HOSTS", default=[])
RENDER_IMAGE_MAX_BYTES = env.int("RENDER_IMAGE_MAX_BYTES", default=20 * 1024 * 1024)
# One picture's download in all (RENDER_HTTP_TIMEOUT_SECONDS bounds each wait for a byte).
RENDER_IMAGE_DOWNLOAD_SECONDS = env.float("RENDER_IMAGE_DOWNLOAD_SECONDS", default=120.0)
# The most bytes a provider's API answer may have (room for an inline picture of
# RENDER_IMAGE_MAX_BYTES as base64); past it the render fails (provider_http.py).
RENDER_HTTP_MAX_BODY_BYTES = env.int(
    "RENDER_HTTP_MAX_BODY_BYTES", default=RENDER_IMAGE_MAX_BYTES * 4 // 3 + 4 * 1024 * 1024
)
REPLICATE_API_TOKEN = env.str("REPLICATE_API_TOKEN", default="")
REPLICATE_MODEL = env.str("REPLICATE_MODEL", default="black-forest-labs/flux-schnell")
REPLICATE_BASE_URL = env.str("REPLICATE_BASE_URL", default="https://api.replicate.com")
REPLICATE_INPUT = _template(env.str("REPLICATE_INPUT", default=""), what="REPLICATE_INPUT")
# Touch-ups on Replicate: an inpainting model (`image`, `mask` white = redraw, `prompt`, as
# data URLs), and optionally its `input` as a JSON template ({{image}}, {{mask}}…).
REPLICATE_INPAINT_MODEL = env.str(
    "REPLICATE_INPAINT_MODEL", default="black-forest-labs/flux-fill-pro"
)
REPLICATE_INPAINT_INPUT = _template(
    env.str("REPLICATE_INPAINT_INPUT", default=""), what="REPLICATE_INPAINT_INPUT"
)
if RENDERER == RendererName.REPLICATE and not REPLICATE_API_TOKEN:
    raise ImproperlyConfigured("RENDERER=replicate needs REPLICATE_API_TOKEN.")
RUNPOD_API_KEY = env.str("RUNPOD_API_KEY", default="")
RUNPOD_ENDPOINT_ID = env.str("RUNPOD_ENDPOINT_ID", default="")
RUNPOD_BASE_URL = env.str("RUNPOD_BASE_URL", default="https://api.runpod.ai")
RUNPOD_INPUT = _template(env.str("RUNPOD_INPUT", default=""), what="RUNPOD_INPUT")
if RENDERER == RendererName.RUNPOD and not (RUNPOD_API_KEY and RUNPOD_ENDPOINT_ID):
    raise ImproperlyConfigured("RENDERER=runpod needs RUNPOD_API_KEY and RUNPOD_ENDPOINT_ID.")
COMFYUI_BASE_URL = env.str("COMFYUI_BASE_URL", default="http://127.0.0.1:8188")
COMFYUI_WORKFLOW = env.str("COMFYUI_WORKFLOW", default="")
COMFYUI_REFERENCE_WORKFLOW = env.str("COMFYUI_REFERENCE_WORKFLOW", default="")
# Touch-ups on ComfyUI and on RunPod's worker-comfyui: an API-format inpaint workflow that
# names {{image}} and {{mask}} (the shipped SDXL inpainting one when unset).
COMFYUI_INPAINT_WORKFLOW = env.str("COMFYUI_INPAINT_WORKFLOW", default="")
# Sheets uploaded to ComfyUI stay in its input folder (its API cannot delete them; see
# mangagen/renderers/comfyui.py); off: none is uploaded, panels drawn without references.
COMFYUI_UPLOAD_REFERENCES = env.bool("COMFYUI_UPLOAD_REFERENCES", default=True)
if RENDERER == RendererName.COMFYUI:
    for _path in filter(None, (COMFYUI_WORKFLOW, COMFYUI_REFERENCE_WORKFLOW)):
        try:
            workflows.load(_path)
        except ValueError as exc:
            raise ImproperlyConfigured(str(exc)) from exc
if COMFYUI_INPAINT_WORKFLOW and RENDERER in (RendererName.COMFYUI, RendererName.RUNPOD):
    try:
        workflows.load_inpaint(COMFYUI_INPAINT_WORKFLOW)
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from exc
A1111_BASE_URL = env.str("A1111_BASE_URL", default="http://127.0.0.1:7860")
A1111_AUTH = env.str("A1111_AUTH", default="")
A1111_PAYLOAD = _template(env.str("A1111_PAYLOAD", default=""), what="A1111_PAYLOAD")
A1111_REFERENCE_MODULE = env.str("A1111_REFERENCE_MODULE", default="ip-adapter_clip_h")
A1111_REFERENCE_MODEL = env.str("A1111_REFERENCE_MODEL", default="ip-adapter-plus_sdxl_vit-h")
if A1111_AUTH and ":" not in A1111_AUTH:
    raise ImproperlyConfigured("A1111_AUTH is user:password (as the web UI's --api-auth).")
# A person's own reference image: at most this many bytes, and sides within these pixels.
SHEET_UPLOAD_MAX_BYTES = env.int("SHEET_UPLOAD_MAX_BYTES", default=5 * 1024 * 1024)
SHEET_UPLOAD_MIN_SIDE = env.int("SHEET_UPLOAD_MIN_SIDE", default=64)
SHEET_UPLOAD_MAX_SIDE = env.int("SHEET_UPLOAD_MAX_SIDE", default=4096)
DRAFTER = env.str("DRAFTER", default="rules")
if refused := refuse_unknown("DRAFTER", DRAFTER, DrafterName):
    raise ImproperlyConfigured(refused)
CHAT_BASE_URL = env.str("CHAT_BASE_URL", default="https://api.openai.com")
CHAT_API_KEY = env.str("CHAT_API_KEY", default="")
CHAT_MODEL = env.str("CHAT_MODEL", default="gpt-4o-mini")
CHAT_TIMEOUT_SECONDS = env.float("CHAT_TIMEOUT_SECONDS", default=60.0)
# Machine drafts of translations: `openai` asks the chat model above (counted in the
# daily draft quota); `none` leaves translating to people.
TRANSLATOR = env.str("TRANSLATOR", default="none")
if TRANSLATOR not in ("none", "openai"):
    raise ImproperlyConfigured(f"TRANSLATOR is {TRANSLATOR!r}; use one of: none, openai.")
# The judge (mangagen/renderers/judge.py): every render checked against its characters'
# sheets before it is shown. `openai` asks an OpenAI-compatible chat endpoint that takes
# images (POST {JUDGE_BASE_URL}/chat/completions); `none` shows renders unchecked.
JUDGE = env.str("JUDGE", default="none")
if JUDGE not in ("none", "openai"):
    raise ImproperlyConfigured(f"JUDGE is {JUDGE!r}; use one of: none, openai.")
JUDGE_BASE_URL = env.str("JUDGE_BASE_URL", default="https://api.openai.com/v1")
JUDGE_MODEL = env.str("JUDGE_MODEL", default="gpt-4o-mini")
JUDGE_API_KEY = env.str("JUDGE_API_KEY", default="")
# Under this score a render is drawn again with another seed, at most JUDGE_MAX_REDRAWS
# times (never charged to the person); the best-scored render is shown.
JUDGE_MIN_SCORE = env.float("JUDGE_MIN_SCORE", default=0.6)
JUDGE_MAX_REDRAWS = env.int("JUDGE_MAX_REDRAWS", default=1)
# Past it (the whole call, connection to answer) the render is shown unchecked.
JUDGE_TIMEOUT_SECONDS = env.float("JUDGE_TIMEOUT_SECONDS", default=20.0)
# The longest side, in pixels, of each picture sent to the judge.
JUDGE_IMAGE_SIDE = env.int("JUDGE_IMAGE_SIDE", default=512)
if not 0 <= JUDGE_MIN_SCORE <= 1:
    raise ImproperlyConfigured(f"JUDGE_MIN_SCORE is {JUDGE_MIN_SCORE}; it is a score from 0 to 1.")
if JUDGE_MAX_REDRAWS < 0 or JUDGE_TIMEOUT_SECONDS <= 0 or JUDGE_IMAGE_SIDE < 64:
    raise ImproperlyConfigured(
        "JUDGE_MAX_REDRAWS is 0 or more, JUDGE_TIMEOUT_SECONDS over 0, JUDGE_IMAGE_SIDE 64 or more."
    )

# --- Per-person bounds (mangagen/kernel/quotas.py), websockets, retention ---------------
MAX_STORYBOARDS_PER_PERSON = env.int("MAX_STORYBOARDS_PER_PERSON", default=200)
MAX_LIVE_JOBS_PER_PERSON = env.int("MAX_LIVE_JOBS_PER_PERSON", default=3)
DRAFT_DAILY_QUOTA = env.int("DRAFT_DAILY_QUOTA", default=50)
# CPU seconds a person's requests may spend drawing (pages, exports, lettering not
# in the cache) in any rolling minute; past it they answer 429 until some of it is
# a minute old.
DRAWING_CPU_SECONDS_PER_MINUTE = env.float("DRAWING_CPU_SECONDS_PER_MINUTE", default=20.0)
# The bytes a person's stored pictures may take in all: their own sheet pictures (a
# look keeps its newest, see mangagen/characters/services.py), copies of sheets into
# another comic (rendered ones included), places' pictures and the library's copies
# (mangagen/kernel/quotas.py). SHEET_UPLOAD_BYTES_PER_PERSON, its older name from when it
# bounded uploaded sheets alone, is read when it is not set.
PICTURE_BYTES_PER_PERSON = env.int(
    "PICTURE_BYTES_PER_PERSON",
    default=env.int("SHEET_UPLOAD_BYTES_PER_PERSON", default=100 * 1024 * 1024),
)
# What one page of a series export is reckoned to cost in drawing (built if it is not
# yet, then put in the file): an export whose pages would not fit in what is left of
# the budget is refused before anything is drawn (mangagen/series/exports.py).
EXPORT_DRAWING_SECONDS_PER_PAGE = env.float("EXPORT_DRAWING_SECONDS_PER_PAGE", default=0.25)
# The bytes one image's lettered pictures may take in the cache, all its languages
# together (mangagen/jobs/lettered_images.py); the ones drawn longest ago leave first.
LETTERED_CACHE_BYTES_PER_IMAGE = env.int("LETTERED_CACHE_BYTES_PER_IMAGE", default=4 * 1024 * 1024)
WS_IDLE_SECONDS = env.float("WS_IDLE_SECONDS", default=600.0)
WS_MAX_CONNECTIONS_PER_PERSON = env.int("WS_MAX_CONNECTIONS_PER_PERSON", default=12)
RETENTION_DAYS = env.int("RETENTION_DAYS", default=90)
# Each app prunes its own records; the composition root names them
# (mangagen/orchestration/pruning.py).
RETENTION_PRUNERS = [
    "mangagen.jobs.retention.prune_job_events",
    "speculation.retention.prune_declined",
]

# --- Stripe ------------------------------------------------------------------
STRIPE_SECRET_KEY = env.str("STRIPE_SECRET_KEY", default="")
STRIPE_WEBHOOK_SECRET = env.str("STRIPE_WEBHOOK_SECRET", default="")
STRIPE_API_BASE = env.str("STRIPE_API_BASE", default="")
STRIPE_WEBHOOK_TOLERANCE_SECONDS = env.int("STRIPE_WEBHOOK_TOLERANCE_SECONDS", default=300)
# Prices in minor units. Override with CREDIT_PACKS='[{"code": …}, …]'.
CREDIT_PACKS = env.json(
    "CREDIT_PACKS",
    default=[
        {"code": "starter", "credits": 20, "price": 500, "currency": "usd"},
        {"code": "studio", "credits": 60, "price": 1200, "currency": "usd"},
        {"code": "publisher", "credits": 150, "price": 2500, "currency": "usd"},
    ],
)

# --- Auth --------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Failed sign-ins lock a username out from the address that failed (never everywhere:
# one attacker cannot lock its owner out), or an address out of every username, for
# LOGIN_LOCKOUT_SECONDS (mangagen/accounts/throttle.py).
LOGIN_FAILURES_PER_USERNAME = env.int("LOGIN_FAILURES_PER_USERNAME", default=5)
LOGIN_FAILURES_PER_ADDRESS = env.int("LOGIN_FAILURES_PER_ADDRESS", default=20)
LOGIN_LOCKOUT_SECONDS = env.int("LOGIN_LOCKOUT_SECONDS", default=15 * 60)
SIGNUP_PER_ADDRESS_PER_HOUR = env.int("SIGNUP_PER_ADDRESS_PER_HOUR", default=10)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- API ---------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON, a form or nothing: an endpoint that needs no body takes whatever a client
    # sends with it (fetch and requests send `{}` as JSON, sendBeacon a form).
    "DEFAULT_PARSER_CLASSES": [
        # DRF's, answering a body they cannot read in the error shape (mangagen/api/parsers.py).
        "mangagen.api.parsers.JSONParser",
        "mangagen.api.parsers.FormParser",
        "mangagen.api.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "mangagen.api.schema.ErrorDeclaringSchema",
    "EXCEPTION_HANDLER": "mangagen.api.errors.exception_handler",
    # Per person, so no one can flood the GPU or the ledger (429 with Retry-After).
    "DEFAULT_THROTTLE_RATES": {
        "speculate": env.str("THROTTLE_SPECULATE", default="30/min"),
        # Leaving Review (its beacon): each leave may write a row, so it is bounded too.
        "leave": env.str("THROTTLE_LEAVE", default="60/min"),
        "generate": env.str("THROTTLE_GENERATE", default="20/min"),
        "draft": env.str("THROTTLE_DRAFT", default="20/min"),
        "checkout": env.str("THROTTLE_CHECKOUT", default="10/min"),
        # Storyboard writes (create, autosave, delete); autosave sends at most ~85/min.
        "storyboards": env.str("THROTTLE_STORYBOARDS", default="120/min"),
        "export": env.str("THROTTLE_EXPORT", default="30/min"),
        # Reading links, per address: a reader's page and its images (a long comic's
        # pages, read through twice, in one minute).
        "read": env.str("THROTTLE_READ", default="300/min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Mangagen API",
    "DESCRIPTION": "Stories in, manga panels out. Credits are held, then captured per render.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["mangagen.api.permissions.StaffUnlessDebug"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two choice sets share the field name `style`: a comic's drawing style and a line's
    # balloon style; each gets its own name in the schema.
    "ENUM_NAME_OVERRIDES": {
        "StyleEnum": "mangagen.storyboards.models.Style",
        "BalloonStyleEnum": "mangagen.storyboards.models.BalloonStyle",
    },
}

# --- i18n, static, media -----------------------------------------------------
# The interface's languages (not the comics' lettering: mangagen/lettering/languages.py).
# Catalogs live in locale/<code>/LC_MESSAGES (django.po for Python and templates,
# djangojs.po for the scripts), committed compiled; docs/features.md "Languages of the interface".
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ja", "日本語")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# English dates keep the app's own formats; other languages take Django's (mangagen/formats/).
FORMAT_MODULE_PATH = ["mangagen.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
WHITENOISE_USE_FINDERS = DEBUG
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(BASE_DIR / "media")))
MEDIA_URL = "media/"

# Every render, kept take, sheet, page build and export goes through Django's
# default storage (mangagen/kernel/storage.py): MEDIA_ROOT on this machine, or a bucket
# of any S3-compatible service that every web process and worker shares. Never
# served directly: the views check the owner and stream the bytes.
STORAGE_BACKEND = env.str("STORAGE_BACKEND", default="local")
try:
    STORAGES = storage_config.storages(
        backend=STORAGE_BACKEND,
        bucket=env.str("S3_BUCKET", default=""),
        endpoint_url=env.str("S3_ENDPOINT_URL", default=""),
        access_key=env.str("S3_ACCESS_KEY_ID", default=""),
        secret_key=env.str("S3_SECRET_ACCESS_KEY", default=""),
        region=env.str("S3_REGION", default="us-east-1"),
    )
except ValueError as refused:
    raise ImproperlyConfigured(str(refused)) from refused

# --- Production hardening (manage.py check --deploy) -------------------------
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
# The language switcher's choice, kept a year (Django's default lasts the browser session).
LANGUAGE_COOKIE_SECURE = not DEBUG
LANGUAGE_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
# Trust X-Forwarded-Proto / X-Forwarded-For only when a proxy in front sets them;
# otherwise any caller could claim https, or any address.
BEHIND_PROXY = env.bool("BEHIND_PROXY", default=False)
if BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = 0 if DEBUG else env.int("SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG

# --- Operating it: logs, request ids, metrics -------------------------------------
# LOG_FORMAT=json: one JSON object per line (time, level, logger, message, request_id,
# job and panel where known); text otherwise. mangagen/observability/logs.py.
LOG_FORMAT = env.str("LOG_FORMAT", default="text")
if LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured("LOG_FORMAT must be text or json.")
# In text, the periodic tasks (CELERY_BEAT_SCHEDULE: sweeps, some every second) log a
# run only when it did something or failed; JSON keeps every line.
LOGGING = logging_config(
    level=env.str("LOG_LEVEL", default="INFO"),
    json=LOG_FORMAT == "json",
    housekeeping=[entry["task"] for entry in CELERY_BEAT_SCHEDULE.values()],
)
DJANGO_GUID = {
    # A proxy's id (a UUID) is kept; anything else is replaced by a new one.
    "GUID_HEADER_NAME": "X-Request-ID",
    "VALIDATE_GUID": True,
    "INTEGRATIONS": [CeleryIntegration()],
}
# /metrics answers `Authorization: Bearer <METRICS_TOKEN>` (and staff); empty: staff only.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
PROMETHEUS_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, float("inf"))
# Prometheus may scrape over plain HTTP inside the network: with the HTTPS redirect on,
# /metrics is exempt from it for callers in METRICS_PLAIN_HTTP_NETWORKS (loopback and
# the private ranges by default; empty: HTTPS only) and answers any other caller over
# plain HTTP 403, before reading its token (observability/exposition.py).
SECURE_REDIRECT_EXEMPT = [r"^metrics$"]
METRICS_PLAIN_HTTP_NETWORKS = env.list(
    "METRICS_PLAIN_HTTP_NETWORKS",
    default=[
        "127.0.0.0/8",
        "::1/128",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "fc00::/7",
    ],
)
try:
    _networks = [ip_network(n.strip(), strict=False) for n in METRICS_PLAIN_HTTP_NETWORKS]
except ValueError as refused:
    raise ImproperlyConfigured(f"METRICS_PLAIN_HTTP_NETWORKS: {refused}") from refused
