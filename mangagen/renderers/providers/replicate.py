"""Replicate: predictions over its HTTP API (`RENDERER=replicate`).

Submit: `POST /v1/models/{owner}/{name}/predictions` (an official model, such
as the default `black-forest-labs/flux-schnell`) or `POST /v1/predictions`
with `version` (`REPLICATE_MODEL=owner/name:version`), the `input` being
`REPLICATE_INPUT` (or the default for FLUX schnell) filled for the panel.
Poll: `GET /v1/predictions/{id}`: `starting` (waiting for a worker; a long
one is a cold boot), `processing`, then `succeeded` (`output`: a URL or a
list of URLs), `failed` (`error`) or `canceled`. Cancel:
`POST /v1/predictions/{id}/cancel`. The picture is fetched from Replicate's
delivery hosts (replicate.delivery and its subdomains), the API's own host,
or `RENDER_IMAGE_HOSTS`.

References: `{{reference_1}}`… and `{{reference_images}}` are data URLs
(Replicate takes data URLs for files under 1 MB; a larger sheet is sent as a
smaller JPEG). FLUX schnell takes no image input, so the default template
sends none: a template for a model that takes one (FLUX Kontext, an
IP-Adapter model) names them.

Touch-ups go to `REPLICATE_INPAINT_MODEL` (FLUX Fill Pro by default), its input
`REPLICATE_INPAINT_INPUT` (or FLUX Fill's: `image`, `mask`, `prompt`, `seed`)
filled with `{{image}}` and `{{mask}}` as data URLs, the mask white where the
picture is redrawn and of the picture's size (FLUX Fill refuses another).

Roughs go to `REPLICATE_ROUGH_MODEL` (FLUX schnell by default, at a quarter megapixel in
one step: ROUGH_INPUT), its input `REPLICATE_ROUGH_INPUT`. A final from its rough goes to
`REPLICATE_FROM_ROUGH_MODEL` (FLUX dev by default, img2img: the rough as `image`,
`prompt_strength` 0.6 of it drawn again: FROM_ROUGH_INPUT), its input
`REPLICATE_FROM_ROUGH_INPUT` with `{{rough}}` a data URL; with that model set to "" it
goes to `REPLICATE_MODEL` as any final, keeping the rough's seed (FLUX schnell takes no
picture).
"""

from __future__ import annotations

import base64
import io
from datetime import datetime

from django.conf import settings
from PIL import Image

from ..base import ProviderState, Verb
from ..building import intake, provider_http, remote
from ..catalog import RendererName
from ..intake import Intake, Picture
from ..masks import Polarity, provider_mask, size_of
from ..registry import register
from ..remote import Call, RemoteRenderer, Status, Submission
from ..render_request import RenderRequest
from ..templates import fill

DEFAULT_MODEL = "black-forest-labs/flux-schnell"
DEFAULT_INPUT = {
    "prompt": "{{prompt}}",
    "seed": "{{seed}}",
    "aspect_ratio": "{{aspect_ratio}}",
    "num_outputs": 1,
    "num_inference_steps": 4,
    "output_format": "webp",
    "output_quality": 90,
    "go_fast": True,
}
DEFAULT_INPAINT_MODEL = "black-forest-labs/flux-fill-pro"
DEFAULT_INPAINT_INPUT = {
    "prompt": "{{prompt}}",
    "image": "{{image}}",
    "mask": "{{mask}}",
    "seed": "{{seed}}",
    "steps": 28,
    "output_format": "png",
    "safety_tolerance": 2,
}
# A rough: FLUX schnell at its smallest and fastest (a quarter megapixel, one step).
DEFAULT_ROUGH_MODEL = "black-forest-labs/flux-schnell"
ROUGH_INPUT = {
    **DEFAULT_INPUT,
    "num_inference_steps": 1,
    "megapixels": "0.25",
    "output_quality": 80,
}
# A final from its rough: FLUX dev's img2img (`image`, `prompt_strength`: how much of the
# picture is drawn anew; its aspect ratio is the image's).
DEFAULT_FROM_ROUGH_MODEL = "black-forest-labs/flux-dev"
FROM_ROUGH_INPUT = {
    "prompt": "{{prompt}}",
    "image": "{{rough}}",
    "prompt_strength": 0.6,
    "seed": "{{seed}}",
    "num_outputs": 1,
    "num_inference_steps": 28,
    "output_format": "webp",
    "output_quality": 90,
    "go_fast": True,
}
DELIVERY_HOSTS = ("replicate.delivery", "*.replicate.delivery")
DATA_URL_LIMIT = 1024 * 1024  # what Replicate takes inline

STATES = {"starting": ProviderState.STARTING, "processing": ProviderState.RENDERING}


def data_url(image: bytes, *, limit: int = DATA_URL_LIMIT) -> str:
    """An image as a data URL under `limit` bytes: as it is (PNG) if it fits, else a
    JPEG, smaller until it fits."""
    if len(image) * 4 // 3 < limit:
        return "data:image/png;base64," + base64.b64encode(image).decode()
    with Image.open(io.BytesIO(image)) as opened:
        picture = opened.convert("RGB")
    side = max(picture.size)
    while True:
        buffer = io.BytesIO()
        picture.save(buffer, format="JPEG", quality=88)
        if len(buffer.getvalue()) * 4 // 3 < limit or side <= 256:
            return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()
        side = side * 3 // 4
        picture.thumbnail((side, side))


def _seconds(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    try:
        begin = datetime.fromisoformat(start.replace("Z", "+00:00"))
        finish = datetime.fromisoformat(end.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, (finish - begin).total_seconds())


class ReplicateAdapter:
    name = "replicate"
    resumable = True
    max_references = 4
    can_touch_up = True  # through the inpainting model

    def __init__(
        self,
        *,
        model: str,
        template: dict | None,
        intake: Intake,
        inpaint_model: str = DEFAULT_INPAINT_MODEL,
        inpaint_template: dict | None = None,
        rough_model: str = DEFAULT_ROUGH_MODEL,
        rough_template: dict | None = None,
        from_rough_model: str = DEFAULT_FROM_ROUGH_MODEL,
        from_rough_template: dict | None = None,
    ):
        self.model = model
        self.owner_name, _, self.version = model.partition(":")
        self.template = template or DEFAULT_INPUT
        self.intake = intake
        self.inpaint_model = inpaint_model or DEFAULT_INPAINT_MODEL
        self.inpaint_template = inpaint_template or DEFAULT_INPAINT_INPUT
        self.draft_model = rough_model or DEFAULT_ROUGH_MODEL
        self.rough_template = rough_template or ROUGH_INPUT
        self.from_rough_model = from_rough_model  # "": the final model, the rough's seed
        self.from_rough_template = from_rough_template or FROM_ROUGH_INPUT

    def submit(self, request: RenderRequest, call: Call) -> Submission:
        references = [data_url(r.image) for r in request.references]
        if request.touch_up:
            model, template = self.inpaint_model, self.inpaint_template
            image = data_url(request.image)
            # A picture too large for a data URL comes back smaller: its mask follows it.
            width, height = size_of(base64.b64decode(image.partition(",")[2]))
            mask = data_url(provider_mask(request.mask, Polarity.WHITE, width=width, height=height))
            values = request.values(references, image=image, mask=mask)
        elif request.draft:
            model, template = self.draft_model, self.rough_template
            values = request.values(references)
        elif request.from_rough and self.from_rough_model:
            model, template = self.from_rough_model, self.from_rough_template
            values = request.values(references, rough=data_url(request.rough))
        else:
            model, template = self.model, self.template
            values = request.values(references)
        owner_name, _, version = model.partition(":")
        body: dict = {"input": fill(template, values)}
        if version:
            body["version"] = version
            path = "/v1/predictions"
        else:
            path = f"/v1/models/{owner_name}/predictions"
        prediction = call("POST", path, json=body).body or {}
        if not isinstance(prediction, dict) or not prediction.get("id"):
            raise _odd(prediction)
        return Submission(id=str(prediction["id"]))

    def poll(self, submission: Submission, call: Call) -> Status:
        prediction = call("GET", f"/v1/predictions/{submission.id}").body
        if not isinstance(prediction, dict):
            raise _odd(prediction)
        status = prediction.get("status")
        waited = _seconds(prediction.get("created_at"), prediction.get("started_at"))
        ran = _seconds(prediction.get("started_at"), prediction.get("completed_at"))
        if status == "succeeded":
            return Status(done=True, output=prediction.get("output"), waited=waited, ran=ran)
        if status == "failed":
            return Status(failed=str(prediction.get("error") or "failed"), waited=waited, ran=ran)
        if status == "canceled":
            return Status(cancelled=True)
        return Status(state=STATES.get(str(status), ProviderState.STARTING))

    def fetch(self, submission: Submission, status: Status, call: Call) -> Picture:
        output = status.output
        url = output[0] if isinstance(output, list) and output else output
        if not isinstance(url, str) or not url:
            raise _odd(output, what="a succeeded prediction without an image URL")
        return self.intake.fetch(url)

    def cancel(self, submission: Submission, status: Status | None, call: Call) -> bool:
        answer = call("POST", f"/v1/predictions/{submission.id}/cancel")
        return isinstance(answer.body, dict) and answer.body.get("status") == "canceled"


def _odd(answer: object, *, what: str = "an answer that is not a prediction"):
    from ..base import RenderError

    return RenderError(f"Replicate sent {what}: {str(answer)[:300]}", retryable=True)


def build() -> RemoteRenderer:
    """Replicate's models through the provider layer (REPLICATE_* settings)."""
    http = provider_http(
        "Replicate",
        settings.REPLICATE_BASE_URL,
        headers={"Authorization": f"Bearer {settings.REPLICATE_API_TOKEN}"},
    )
    adapter = ReplicateAdapter(
        model=settings.REPLICATE_MODEL,
        template=settings.REPLICATE_INPUT,
        intake=intake(settings.REPLICATE_BASE_URL, *DELIVERY_HOSTS),
        inpaint_model=settings.REPLICATE_INPAINT_MODEL,
        inpaint_template=settings.REPLICATE_INPAINT_INPUT,
        rough_model=settings.REPLICATE_ROUGH_MODEL,
        rough_template=settings.REPLICATE_ROUGH_INPUT,
        from_rough_model=settings.REPLICATE_FROM_ROUGH_MODEL,
        from_rough_template=settings.REPLICATE_FROM_ROUGH_INPUT,
    )
    return remote(adapter, http)


register(RendererName.REPLICATE, verbs=Verb, build=build)
