"""Who draws, the simulated GPU pool, speculation, and the judge."""

from django.core.exceptions import ImproperlyConfigured

from mangagen.renderers.base import Verb
from mangagen.renderers.catalog import RendererName, refuse_unknown
from mangagen.settings.environment import env

RENDERER = env.str("RENDERER", default="procedural")
# An unknown renderer refuses to start (daphne, Celery, manage.py alike) rather than
# failing every panel.
if refused := refuse_unknown("RENDERER", RENDERER, RendererName):
    raise ImproperlyConfigured(refused)
# A purpose drawn by another provider than RENDERER's (`sheet=openai,touch-up=a1111`:
# a verb each, render, sheet, touch-up, rough or from-rough), so a fast model can draw
# beside the final one; every other verb is RENDERER's (mangagen/renderers/registry.py).
RENDERER_FOR = env.dict("RENDERER_FOR", default={})
for _verb, _name in RENDERER_FOR.items():
    if refused := refuse_unknown("RENDERER_FOR's verb", _verb, Verb) or refuse_unknown(
        f"RENDERER_FOR's {_verb}", _name, RendererName
    ):
        raise ImproperlyConfigured(refused)
# For the simulated GPU, its cold start; for a real provider, the prior of what is
# learned from its renders (mangagen/renderers/observed.py).
RENDER_COLD_START_SECONDS = env.float("RENDER_COLD_START_SECONDS", default=20.0)
RENDER_IDLE_SECONDS = env.float("RENDER_IDLE_SECONDS", default=300.0)
RENDER_SECONDS = env.float("RENDER_SECONDS", default=2.0)
# Roughs (mangagen/roughs/): the simulated GPU's draft model takes ROUGH_SECONDS a rough;
# a final waits at most ROUGH_WAIT_SECONDS for its panel's rough in flight, to be drawn
# from it (speculation's panel one among them), else it starts without.
ROUGH_SECONDS = env.float("ROUGH_SECONDS", default=0.2)
ROUGH_WAIT_SECONDS = env.float("ROUGH_WAIT_SECONDS", default=3.0)
# The GPU provider: GPU_POOL_SIZE containers (each with its own cold start, scaling to
# zero after RENDER_IDLE_SECONDS), shared by every worker through Redis.
GPU_POOL_SIZE = env.int("GPU_POOL_SIZE", default=4)
GPU_POOL_PREFIX = env.str("GPU_POOL_PREFIX", default="mangagen:gpu")
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
