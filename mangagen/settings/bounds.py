"""What one person may take: rows, drawing time, stored pictures, websockets; and how
long records are kept."""

from mangagen.settings.environment import env

MAX_STORYBOARDS_PER_PERSON = env.int("MAX_STORYBOARDS_PER_PERSON", default=200)
MAX_LIVE_JOBS_PER_PERSON = env.int("MAX_LIVE_JOBS_PER_PERSON", default=3)
DRAFT_DAILY_QUOTA = env.int("DRAFT_DAILY_QUOTA", default=50)
# Roughs a person may have drawn a day (UTC); free to them, paid by the operator.
ROUGHS_PER_PERSON_PER_DAY = env.int("ROUGHS_PER_PERSON_PER_DAY", default=60)
# CPU seconds a person's requests may spend drawing (pages, exports, lettering not
# in the cache) in any rolling minute; past it they answer 429 until some of it is
# a minute old.
DRAWING_CPU_SECONDS_PER_MINUTE = env.float("DRAWING_CPU_SECONDS_PER_MINUTE", default=20.0)
# Builds (a page, an export, a panel's lettering, a touch-up's mask) one person may have
# drawing at once, in every web process together; each reserves what it is reckoned to
# cost from the budget above before it starts (mangagen/kernel/quotas.py).
DRAWING_BUILDS_IN_FLIGHT = env.int("DRAWING_BUILDS_IN_FLIGHT", default=2)
# How long a build waits for one of those to come free before it is refused: one edit of
# a panel's lettering asks for its picture twice and its placements at once, and each
# build takes a fraction of a second, so a short wait serves what a refusal would break.
DRAWING_BUILD_WAIT_SECONDS = env.float("DRAWING_BUILD_WAIT_SECONDS", default=3.0)
# The bytes a person's stored pictures may take in all: their own sheet pictures (a
# look keeps its newest, see mangagen/characters/services.py), copies of sheets into
# another comic (rendered ones included), places' pictures and the library's copies
# (mangagen/kernel/quotas.py). SHEET_UPLOAD_BYTES_PER_PERSON, its older name from when it
# bounded uploaded sheets alone, is read when it is not set.
PICTURE_BYTES_PER_PERSON = env.int(
    "PICTURE_BYTES_PER_PERSON",
    default=env.int("SHEET_UPLOAD_BYTES_PER_PERSON", default=100 * 1024 * 1024),
)
# What else PICTURE_BYTES_PER_PERSON counts, named here so no app imports another's:
# each a function of `owner_id` giving the bytes that person keeps in storage.
PICTURE_COUNTERS = [
    "mangagen.jobs.touchups.stored_mask_bytes",
    "mangagen.publishing.selectors.snapshot_bytes",
]
# What one page of a series export is reckoned to cost in drawing (built if it is not
# yet, then put in the file): an export whose pages would not fit in what is left of
# the budget is refused before anything is drawn (mangagen/series/exports.py).
EXPORT_DRAWING_SECONDS_PER_PAGE = env.float("EXPORT_DRAWING_SECONDS_PER_PAGE", default=0.25)
# The bytes a layered export of every page (a ZIP of PSD or OpenRaster files) may come to;
# past it the ZIP is refused (409 export_too_large) and the pages can be had one at a time
# (mangagen/pages/layered.py).
LAYERED_EXPORT_MAX_BYTES = env.int("LAYERED_EXPORT_MAX_BYTES", default=256 * 1024 * 1024)
# The bytes one image's lettered pictures may take in the cache, all its languages
# together (mangagen/jobs/lettered_images.py); the ones drawn longest ago leave first.
LETTERED_CACHE_BYTES_PER_IMAGE = env.int("LETTERED_CACHE_BYTES_PER_IMAGE", default=4 * 1024 * 1024)
# The most bytes a request body may have, by the route it is sent to: the JSON API and
# forms, and the routes that take a picture (a sheet, a place's picture, a touch-up's
# mask). Past it the body is refused (413 `too_large`) before any of it is kept
# (mangagen/web/body_limits.py); the proxy in front should bound bodies the same way.
REQUEST_BODY_MAX_BYTES = env.int("REQUEST_BODY_MAX_BYTES", default=3 * 1024 * 1024)
REQUEST_UPLOAD_MAX_BYTES = env.int("REQUEST_UPLOAD_MAX_BYTES", default=10 * 1024 * 1024)
WS_IDLE_SECONDS = env.float("WS_IDLE_SECONDS", default=600.0)
WS_MAX_CONNECTIONS_PER_PERSON = env.int("WS_MAX_CONNECTIONS_PER_PERSON", default=12)
RETENTION_DAYS = env.int("RETENTION_DAYS", default=90)
# Each app prunes its own records; the composition root names them
# (mangagen/orchestration/pruning.py).
RETENTION_PRUNERS = [
    "mangagen.jobs.retention.prune_job_events",
    "speculation.retention.prune_declined",
    "mangagen.roughs.retention.prune_roughs",
]
