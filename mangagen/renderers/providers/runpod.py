"""RunPod serverless (`RENDERER=runpod`), by default with runpod-workers/worker-comfyui.

Submit: `POST /v2/{endpoint}/run` with `{"input": …}`: `RUNPOD_INPUT` filled for
the panel, or by default worker-comfyui's input, `{"workflow": <the shipped
ComfyUI workflow>, "images": [{"name", "image"}]}` (the SDXL txt2img workflow,
or the SDXL + IP-Adapter one when the panel has references). Poll:
`GET /v2/{endpoint}/status/{id}`: `IN_QUEUE` (a cold start shows only as time
here: RunPod reports it as `delayTime`), `IN_PROGRESS`, then `COMPLETED` with
`output`, `FAILED` with `error`, `CANCELLED` or `TIMED_OUT`; `delayTime` and
`executionTime` (ms) are the phases. Cancel: `POST /v2/{endpoint}/cancel/{id}`.

Output: worker-comfyui 5's `{"images": [{"filename", "type", "data"}]}` (`type`
`base64`, or `s3_url` when the worker uploads to a bucket: add the bucket's
host to RENDER_IMAGE_HOSTS), or the older `{"message": <base64 or URL>}`.

References: `{{reference_N}}` is the file name the worker uploads the N-th
picture under (what a LoadImage node names), `{{reference_images}}` the
`images` list itself (`[{"name", "image": <data URL>}]`).

Touch-ups: the inpaint workflow (`COMFYUI_INPAINT_WORKFLOW`, or the shipped SDXL
inpainting one) with the picture and the mask (greyscale, white = redraw) in
`images` as `mangagen-touchup-image.png` and `mangagen-touchup-mask.png`, the
names `{{image}}` and `{{mask}}` become (the worker uploads each to its ComfyUI
before queueing the workflow). With `RUNPOD_INPUT`, touch-ups need it to name
`{{image}}` and `{{mask}}` (those names; `{{reference_images}}` is then the
whole `images` list: picture, mask, references); one that does not cannot
redraw a region.

Roughs: worker-comfyui's input with the rough workflow (`COMFYUI_ROUGH_WORKFLOW`, or the
shipped SDXL Turbo one) at a rough's size. A final from its rough: the from-rough
workflow (`COMFYUI_FROM_ROUGH_WORKFLOW`, or the shipped SDXL img2img one) with the rough
in `images` as `mangagen-rough.png`, the name `{{rough}}` becomes. With `RUNPOD_INPUT`,
a rough is that input as a panel's, and the rough goes along only where the template
names `{{rough}}` (a data URL there); otherwise only its seed.
"""

from __future__ import annotations

import base64

from django.conf import settings

from ..base import ProviderState, RenderError, Verb
from ..building import (
    from_rough_workflow,
    inpaint_workflow,
    intake,
    provider_http,
    remote,
    rough_workflow,
)
from ..catalog import RendererName
from ..intake import Intake, Picture
from ..masks import Polarity, provider_mask
from ..registry import register
from ..remote import Call, RemoteRenderer, Status, Submission
from ..render_request import RenderRequest
from ..templates import SLOTS, fill, placeholders_in, references_in
from ..workflows import FROM_ROUGH, INPAINT, REFERENCES, ROUGH, TXT2IMG, checkpoint_of, shipped

STATES = {"IN_QUEUE": ProviderState.STARTING, "IN_PROGRESS": ProviderState.RENDERING}


TOUCHUP_IMAGE = "mangagen-touchup-image.png"
TOUCHUP_MASK = "mangagen-touchup-mask.png"
ROUGH_IMAGE = "mangagen-rough.png"


def reference_name(index: int) -> str:
    return f"mangagen-reference-{index}.png"


def _data_url(image: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(image).decode()


class RunPodAdapter:
    name = "runpod"
    resumable = True

    def __init__(
        self,
        *,
        endpoint: str,
        template: dict | None,
        intake: Intake,
        inpaint_workflow: dict | None = None,
        rough_workflow: dict | None = None,
        from_rough_workflow: dict | None = None,
    ):
        self.endpoint = endpoint
        self.model = f"endpoint:{endpoint}"
        self.rough_workflow = rough_workflow or shipped(ROUGH)
        self.from_rough_workflow = from_rough_workflow or shipped(FROM_ROUGH)
        self.draft_model = (
            f"{self.model}:{checkpoint_of(self.rough_workflow)}" if template is None else ""
        )
        self.template = template
        self.intake = intake
        self.inpaint_workflow = inpaint_workflow or shipped(INPAINT)
        self.max_references = (
            min(SLOTS, references_in(template)) if template else references_in(shipped(REFERENCES))
        )
        # worker-comfyui redraws a region through the inpaint workflow; a template of one's
        # own only where it says where the picture and the mask go.
        self.can_touch_up = template is None or {"image", "mask"} <= placeholders_in(template)

    def input_for(self, request: RenderRequest) -> dict:
        if request.touch_up:
            return self._touch_up(request)
        if self.template is None and request.draft:
            return {"workflow": fill(self.rough_workflow, request.values())}
        if self.template is None and request.from_rough:
            images = [{"name": ROUGH_IMAGE, "image": _data_url(request.rough)}]
            values = request.values(rough=ROUGH_IMAGE)
            return {"workflow": fill(self.from_rough_workflow, values), "images": images}
        names = [reference_name(i) for i in range(1, len(request.references) + 1)]
        images = [
            {"name": n, "image": "data:image/png;base64," + base64.b64encode(r.image).decode()}
            for n, r in zip(names, request.references, strict=True)
        ]
        rough = _data_url(request.rough) if request.from_rough else ""
        values = request.values(names, rough=rough)
        values["reference_images"] = images
        if self.template is not None:
            return fill(self.template, values)
        # A workflow's LoadImage nodes beyond the panel's references load the first one,
        # at weight 0 (a node must name a file that is there).
        for i in range(len(names) + 1, SLOTS + 1):
            values[f"reference_{i}"] = names[0] if names else ""
        workflow = shipped(REFERENCES if names else TXT2IMG)
        return {"workflow": fill(workflow, values), "images": images}

    def _touch_up(self, request: RenderRequest) -> dict:
        """worker-comfyui's input for a touch-up: the inpaint workflow, and in `images`
        the picture, the mask (white = redraw) and the references its slots take."""
        mask = provider_mask(
            request.mask, Polarity.WHITE, width=request.width, height=request.height
        )
        workflow = self.template if self.template is not None else self.inpaint_workflow
        slots = min(SLOTS, references_in(workflow))
        names = [reference_name(i) for i in range(1, min(slots, len(request.references)) + 1)]
        images = [{"name": TOUCHUP_IMAGE, "image": _data_url(request.image)}]
        images.append({"name": TOUCHUP_MASK, "image": _data_url(mask)})
        images += [
            {"name": n, "image": _data_url(r.image)}
            for n, r in zip(names, request.references, strict=False)
        ]
        values = request.values(names, image=TOUCHUP_IMAGE, mask=TOUCHUP_MASK)
        if self.template is not None:
            values["reference_images"] = images
            return fill(self.template, values)
        for i in range(len(names) + 1, SLOTS + 1):
            values[f"reference_{i}"] = names[0] if names else TOUCHUP_IMAGE
        return {"workflow": fill(workflow, values), "images": images}

    def submit(self, request: RenderRequest, call: Call) -> Submission:
        job = call("POST", f"/v2/{self.endpoint}/run", json={"input": self.input_for(request)})
        if not isinstance(job.body, dict) or not job.body.get("id"):
            raise RenderError(f"RunPod answered /run with no job id: {job.body}", retryable=True)
        return Submission(id=str(job.body["id"]))

    def poll(self, submission: Submission, call: Call) -> Status:
        job = call("GET", f"/v2/{self.endpoint}/status/{submission.id}").body
        if not isinstance(job, dict):
            raise RenderError(f"RunPod answered /status with {job!r}.", retryable=True)
        status = job.get("status")
        waited = job["delayTime"] / 1000 if isinstance(job.get("delayTime"), int) else None
        ran = job["executionTime"] / 1000 if isinstance(job.get("executionTime"), int) else None
        output = job.get("output")
        if status == "COMPLETED":
            if isinstance(output, dict) and output.get("error"):
                return Status(failed=str(output["error"]), waited=waited, ran=ran)
            return Status(done=True, output=output, waited=waited, ran=ran)
        if status == "FAILED":
            return Status(failed=str(job.get("error") or "FAILED"), waited=waited, ran=ran)
        if status == "TIMED_OUT":
            return Status(failed="the job timed out at RunPod", retryable=True)
        if status == "CANCELLED":
            return Status(cancelled=True)
        return Status(state=STATES.get(str(status), ProviderState.STARTING), waited=waited)

    def fetch(self, submission: Submission, status: Status, call: Call) -> Picture:
        output = status.output
        if isinstance(output, dict) and isinstance(output.get("images"), list) and output["images"]:
            first = output["images"][0]
            data = first.get("data") if isinstance(first, dict) else None
            if isinstance(data, str) and first.get("type") == "s3_url":
                return self.intake.fetch(data)
            if isinstance(data, str):
                return self.intake.inline(data)
        if isinstance(output, dict) and isinstance(output.get("message"), str):
            message = output["message"]
            if message.startswith(("http://", "https://")):
                return self.intake.fetch(message)
            return self.intake.inline(message)
        raise RenderError(
            f"RunPod's job finished without an image: {output!r}"[:300], retryable=True
        )

    def cancel(self, submission: Submission, status: Status | None, call: Call) -> bool:
        answer = call("POST", f"/v2/{self.endpoint}/cancel/{submission.id}")
        return isinstance(answer.body, dict) and answer.body.get("status") == "CANCELLED"


def build() -> RemoteRenderer:
    """A RunPod serverless endpoint (worker-comfyui by default) through the provider layer."""
    http = provider_http(
        "RunPod",
        settings.RUNPOD_BASE_URL,
        headers={"Authorization": f"Bearer {settings.RUNPOD_API_KEY}"},
    )
    adapter = RunPodAdapter(
        endpoint=settings.RUNPOD_ENDPOINT_ID,
        template=settings.RUNPOD_INPUT,
        intake=intake(settings.RUNPOD_BASE_URL),
        inpaint_workflow=inpaint_workflow(),
        rough_workflow=rough_workflow(),
        from_rough_workflow=from_rough_workflow(),
    )
    return remote(adapter, http)


register(RendererName.RUNPOD, verbs=Verb, build=build)
