"""The remote image providers, the chat models (drafting, translations, the judge)."""

from django.core.exceptions import ImproperlyConfigured

from mangagen.drafting.catalog import DrafterName
from mangagen.renderers import templates, workflows
from mangagen.renderers.catalog import ImagesServer, RendererName, refuse_unknown
from mangagen.settings.environment import env
from mangagen.settings.rendering import RENDERER, RENDERER_FOR

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
# Roughs on an OpenAI-compatible endpoint: generations at this `quality` (GPT image models'
# low | medium | high | auto; "" sends none).
IMAGES_ROUGH_QUALITY = env.str("IMAGES_ROUGH_QUALITY", default="low")


# The providers something is drawn by: their own settings are checked.
_IN_USE = {RENDERER, *RENDERER_FOR.values()}


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
# Roughs on Replicate: a fast model (FLUX schnell at a quarter megapixel and one step by
# default), its `input` a JSON template; finals from a rough: a model that takes an input
# image (FLUX dev's img2img by default: `image`, `prompt_strength`), "" for the rough's
# seed alone through REPLICATE_MODEL (mangagen/renderers/providers/replicate.py).
REPLICATE_ROUGH_MODEL = env.str("REPLICATE_ROUGH_MODEL", default="black-forest-labs/flux-schnell")
REPLICATE_ROUGH_INPUT = _template(
    env.str("REPLICATE_ROUGH_INPUT", default=""), what="REPLICATE_ROUGH_INPUT"
)
REPLICATE_FROM_ROUGH_MODEL = env.str(
    "REPLICATE_FROM_ROUGH_MODEL", default="black-forest-labs/flux-dev"
)
REPLICATE_FROM_ROUGH_INPUT = _template(
    env.str("REPLICATE_FROM_ROUGH_INPUT", default=""), what="REPLICATE_FROM_ROUGH_INPUT"
)
if RendererName.REPLICATE in _IN_USE and not REPLICATE_API_TOKEN:
    raise ImproperlyConfigured("RENDERER=replicate needs REPLICATE_API_TOKEN.")
RUNPOD_API_KEY = env.str("RUNPOD_API_KEY", default="")
RUNPOD_ENDPOINT_ID = env.str("RUNPOD_ENDPOINT_ID", default="")
RUNPOD_BASE_URL = env.str("RUNPOD_BASE_URL", default="https://api.runpod.ai")
RUNPOD_INPUT = _template(env.str("RUNPOD_INPUT", default=""), what="RUNPOD_INPUT")
if RendererName.RUNPOD in _IN_USE and not (RUNPOD_API_KEY and RUNPOD_ENDPOINT_ID):
    raise ImproperlyConfigured("RENDERER=runpod needs RUNPOD_API_KEY and RUNPOD_ENDPOINT_ID.")
COMFYUI_BASE_URL = env.str("COMFYUI_BASE_URL", default="http://127.0.0.1:8188")
COMFYUI_WORKFLOW = env.str("COMFYUI_WORKFLOW", default="")
COMFYUI_REFERENCE_WORKFLOW = env.str("COMFYUI_REFERENCE_WORKFLOW", default="")
# Touch-ups on ComfyUI and on RunPod's worker-comfyui: an API-format inpaint workflow that
# names {{image}} and {{mask}} (the shipped SDXL inpainting one when unset).
COMFYUI_INPAINT_WORKFLOW = env.str("COMFYUI_INPAINT_WORKFLOW", default="")
# Roughs on ComfyUI and worker-comfyui: an API-format workflow of a few-step model (the
# shipped SDXL Turbo one when unset); finals from a rough: an img2img workflow that names
# {{rough}} (the uploaded rough's name, for LoadImage; the shipped SDXL one when unset).
COMFYUI_ROUGH_WORKFLOW = env.str("COMFYUI_ROUGH_WORKFLOW", default="")
COMFYUI_FROM_ROUGH_WORKFLOW = env.str("COMFYUI_FROM_ROUGH_WORKFLOW", default="")
# Sheets uploaded to ComfyUI stay in its input folder (its API cannot delete them; see
# mangagen/renderers/providers/comfyui.py); off: none is uploaded, panels drawn without references.
COMFYUI_UPLOAD_REFERENCES = env.bool("COMFYUI_UPLOAD_REFERENCES", default=True)
if RendererName.COMFYUI in _IN_USE:
    for _path in filter(None, (COMFYUI_WORKFLOW, COMFYUI_REFERENCE_WORKFLOW)):
        try:
            workflows.load(_path)
        except ValueError as exc:
            raise ImproperlyConfigured(str(exc)) from exc
if _IN_USE & {RendererName.COMFYUI, RendererName.RUNPOD}:
    try:
        if COMFYUI_ROUGH_WORKFLOW:
            workflows.load(COMFYUI_ROUGH_WORKFLOW)
        if COMFYUI_FROM_ROUGH_WORKFLOW:
            workflows.load_from_rough(COMFYUI_FROM_ROUGH_WORKFLOW)
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from exc
if COMFYUI_INPAINT_WORKFLOW and _IN_USE & {RendererName.COMFYUI, RendererName.RUNPOD}:
    try:
        workflows.load_inpaint(COMFYUI_INPAINT_WORKFLOW)
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from exc
A1111_BASE_URL = env.str("A1111_BASE_URL", default="http://127.0.0.1:7860")
A1111_AUTH = env.str("A1111_AUTH", default="")
A1111_PAYLOAD = _template(env.str("A1111_PAYLOAD", default=""), what="A1111_PAYLOAD")
# Roughs on AUTOMATIC1111: txt2img with this JSON template (default: the loaded
# checkpoint, 8 steps, at a rough's size); finals from a rough go to img2img.
A1111_ROUGH_PAYLOAD = _template(
    env.str("A1111_ROUGH_PAYLOAD", default=""), what="A1111_ROUGH_PAYLOAD"
)
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
# The most bytes a chat model's answer may have (drafter, translator, judge): one past
# it is an answer that cannot be used, refused before it is read when it says its size.
CHAT_MAX_ANSWER_BYTES = env.int("CHAT_MAX_ANSWER_BYTES", default=1024 * 1024)
# Machine drafts of translations: `openai` asks the chat model above (counted in the
# daily draft quota); `none` leaves translating to people.
TRANSLATOR = env.str("TRANSLATOR", default="none")
if TRANSLATOR not in ("none", "openai"):
    raise ImproperlyConfigured(f"TRANSLATOR is {TRANSLATOR!r}; use one of: none, openai.")
# The judge (mangagen/jobs/judge.py): every render checked against its characters'
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
# Redraws the judge may ask for one person's renders in an hour, all together (the
# operator pays for them): past it a low render is shown as it is, flagged.
JUDGE_REDRAWS_PER_PERSON_PER_HOUR = env.int("JUDGE_REDRAWS_PER_PERSON_PER_HOUR", default=20)
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
