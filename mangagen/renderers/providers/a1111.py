"""AUTOMATIC1111's web UI, or Forge (`RENDERER=a1111`), started with `--api`.

`POST /sdapi/v1/txt2img` answers only when the picture is done
(`{"images": [<base64>…]}`), so it is sent from a thread of its own while the
render's own thread polls `POST /internal/progress {"id_task"}` (queued
behind another request, or the one running) and watches for withdrawal;
the request carries `force_task_id` so that progress can be asked for by
name. The payload is `A1111_PAYLOAD` (or the SDXL default) filled for the
panel.

References: each picture goes as a ControlNet unit (the sd-webui-controlnet
extension's API: `alwayson_scripts.controlnet.args`), with
`A1111_REFERENCE_MODULE` and `A1111_REFERENCE_MODEL` (an IP-Adapter by
default), and, when the blocking puts its character in a third of the frame,
an `effective_region_mask` that keeps it there. A payload that names
`{{reference_N}}` or `{{reference_images}}` (base64 pictures) places them
itself and gets no units added.

Touch-ups: `POST /sdapi/v1/img2img` instead, the same payload (so a person's
`A1111_PAYLOAD` sampler, steps and checkpoint carry over) with the picture as
`init_images`, the region as `mask` (base64 PNG, white = redrawn:
`inpainting_mask_invert` 0), and the inpaint settings of INPAINT (redraw over
the original's pixels at `denoising_strength` 0.75, only the masked area at
full resolution with some padding); a payload may set any of these itself.
References go as ControlNet units as for a panel.

Roughs: `POST /sdapi/v1/txt2img` with `A1111_ROUGH_PAYLOAD` (or ROUGH_PAYLOAD: the
checkpoint already loaded, 8 steps at about a quarter megapixel: switching checkpoints
per request would cost more than the rough; a payload of one's own may name a turbo
checkpoint in `override_settings`). A final from its rough: `POST /sdapi/v1/img2img`,
the panel's payload with the rough as `init_images` and FROM_ROUGH's
`denoising_strength` (0.55: the composition stays, the drawing is the final's).

Withdraw: AUTOMATIC1111 has one interrupt, `POST /sdapi/v1/interrupt`, and it
stops whatever is running; it is sent only when `/internal/progress` says
this render is the active one. A render still queued there cannot be taken
out of its queue: a watcher interrupts it the moment it becomes active.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import threading
import time
import uuid
from typing import Any

import requests
from django.conf import settings
from PIL import Image

from ..base import ProviderState, RenderError, Verb
from ..building import intake, provider_http, remote
from ..catalog import RendererName
from ..intake import Intake, Picture
from ..masks import Polarity, provider_mask
from ..registry import register
from ..remote import Call, RemoteRenderer, Status, Submission
from ..render_request import Box, RenderRequest
from ..templates import fill, placeholders_in, references_in

logger = logging.getLogger(__name__)

DEFAULT_PAYLOAD = {
    "prompt": "{{prompt}}",
    "negative_prompt": "{{negative_prompt}}",
    "seed": "{{seed}}",
    "width": "{{width}}",
    "height": "{{height}}",
    "steps": 25,
    "cfg_scale": 6.5,
    "sampler_name": "DPM++ 2M",
    "scheduler": "Karras",
    "batch_size": 1,
    "n_iter": 1,
    "send_images": True,
    "save_images": False,
}
# img2img's inpaint fields (modules/api/models.py, StableDiffusionProcessingImg2Img):
# `inpainting_fill` 1 starts from the original's pixels ("original"), `inpaint_full_res`
# draws the masked area alone at full resolution ("Only masked") with that padding.
INPAINT = {
    "denoising_strength": 0.75,
    "inpainting_fill": 1,
    "inpaint_full_res": True,
    "inpaint_full_res_padding": 32,
    "inpainting_mask_invert": 0,
    "mask_blur": 4,
    "resize_mode": 0,
}
# A rough: the loaded checkpoint, few steps, low guidance (the size is a rough's).
ROUGH_PAYLOAD = {
    **DEFAULT_PAYLOAD,
    "steps": 8,
    "cfg_scale": 3.0,
    "sampler_name": "DPM++ SDE",
}
# img2img from a rough: how much of it is drawn again (0 keeps it, 1 ignores it).
FROM_ROUGH = {"denoising_strength": 0.55, "resize_mode": 0}
CONTROLNET_UNITS = 3  # the extension's default number of units
WATCH_SECONDS = 600  # how long a withdrawn render queued there is watched to interrupt it


class Background:
    """A request that blocks until the picture is done, sent from a daemon thread."""

    def __init__(self, send: Any):
        self.result: Any = None
        self.error: BaseException | None = None
        self.finished = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(send,), daemon=True)
        self._thread.start()

    def _run(self, send: Any) -> None:
        try:
            self.result = send()
        except BaseException as exc:
            self.error = exc
        finally:
            self.finished.set()


def region_mask(box: Box, width: int, height: int) -> str:
    """A base64 PNG, white where the box is: where a ControlNet unit may act."""
    mask = Image.new("L", (width, height), 0)
    mask.paste(255, (box.x, box.y, box.x + box.width, box.y + box.height))
    buffer = io.BytesIO()
    mask.save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


# Exceptions the web UI answers as a 500 that are the request's fault (a ControlNet unit
# naming a module or model the extension does not have): trying again cannot help.
REFUSALS = {"ValueError", "ValidationError", "TypeError", "KeyError", "AssertionError"}


def refusal(response: requests.Response) -> RenderError | None:
    try:
        body = response.json()
    except ValueError:
        return None
    if response.status_code == 500 and isinstance(body, dict) and body.get("error") in REFUSALS:
        return RenderError(
            f"AUTOMATIC1111 refused the request ({body['error']}): "
            f"{body.get('errors') or body.get('detail')}",
            retryable=False,
        )
    return None


class A1111Adapter:
    name = "a1111"
    resumable = False  # its request blocks: a second life cannot follow it
    max_references = CONTROLNET_UNITS
    can_touch_up = True  # img2img with a mask

    def __init__(
        self,
        *,
        template: dict | None,
        module: str,
        reference_model: str,
        intake: Intake,
        rough_template: dict | None = None,
    ):
        self.template = template or DEFAULT_PAYLOAD
        self.rough_template = rough_template or ROUGH_PAYLOAD
        self.module, self.reference_model = module, reference_model
        self.intake = intake
        settings = self.template.get("override_settings") or {}
        self.model = str(settings.get("sd_model_checkpoint") or "default checkpoint")
        drafts = self.rough_template.get("override_settings") or {}
        self.draft_model = str(drafts.get("sd_model_checkpoint") or f"{self.model} (rough)")
        self.places_references = bool(
            references_in(self.template) or "reference_images" in placeholders_in(self.template)
        )

    def payload_for(self, request: RenderRequest, task: str) -> dict:
        images = [base64.b64encode(r.image).decode() for r in request.references]
        picture = mask = ""
        if request.touch_up:
            picture = base64.b64encode(request.image).decode()
            mask = base64.b64encode(
                provider_mask(
                    request.mask, Polarity.WHITE, width=request.width, height=request.height
                )
            ).decode()
        rough = base64.b64encode(request.rough).decode() if request.from_rough else ""
        template = self.rough_template if request.draft else self.template
        payload = fill(template, request.values(images, image=picture, mask=mask, rough=rough))
        payload["force_task_id"] = task
        if request.touch_up:
            for name, value in INPAINT.items():
                payload.setdefault(name, value)
            payload["init_images"] = [picture]
            payload["mask"] = mask
        elif request.from_rough:
            for name, value in FROM_ROUGH.items():
                payload.setdefault(name, value)
            payload["init_images"] = [rough]
        if images and not self.places_references:
            units = [
                self._unit(image, reference.box, request)
                for image, reference in zip(images, request.references, strict=True)
            ]
            controlnet = payload.setdefault("alwayson_scripts", {}).setdefault("controlnet", {})
            controlnet["args"] = units + list(controlnet.get("args") or [])
        return payload

    def _unit(self, image: str, box: Box, request: RenderRequest) -> dict:
        unit = {
            "enabled": True,
            "module": self.module,
            "model": self.reference_model,
            "weight": 0.8,
            "image": image,
            "resize_mode": "Crop and Resize",
            "processor_res": 512,
            "guidance_start": 0.0,
            "guidance_end": 1.0,
            "control_mode": "Balanced",
            "pixel_perfect": False,
        }
        if not box.whole(request.width, request.height):
            unit["effective_region_mask"] = region_mask(box, request.width, request.height)
        return unit

    def submit(self, request: RenderRequest, call: Call) -> Submission:
        task = f"mangagen-{uuid.uuid4().hex}"
        payload = self.payload_for(request, task)
        img2img = request.touch_up or request.from_rough
        path = "/sdapi/v1/img2img" if img2img else "/sdapi/v1/txt2img"
        background = Background(lambda: call("POST", path, json=payload, refuse=refusal).body)
        return Submission(id=task, extra={"background": background})

    def poll(self, submission: Submission, call: Call) -> Status:
        background: Background = submission.extra["background"]
        if background.finished.is_set():
            if background.error is not None:
                raise background.error
            return Status(done=True, output=background.result)
        progress = self._progress(submission.id, call)
        if progress.get("active"):
            return Status(state=ProviderState.RENDERING)
        if progress.get("queued"):
            return Status(state=ProviderState.QUEUED)
        return Status(state=ProviderState.STARTING)

    def _progress(self, task: str, call: Call) -> dict:
        """What /internal/progress says of the task; {} where there is no such route (a
        web UI older than 1.6): then nothing can be told about it, or interrupted."""
        try:
            body = call(
                "POST", "/internal/progress", json={"id_task": task, "live_preview": False}
            ).body
        except RenderError:
            return {}
        return body if isinstance(body, dict) else {}

    def fetch(self, submission: Submission, status: Status, call: Call) -> Picture:
        answer = status.output
        images = answer.get("images") if isinstance(answer, dict) else None
        if not isinstance(images, list) or not images or not isinstance(images[0], str):
            raise RenderError(
                f"AUTOMATIC1111 answered without an image: {json.dumps(answer)[:300]}",
                retryable=True,
            )
        return self.intake.inline(images[0])

    def cancel(self, submission: Submission, status: Status | None, call: Call) -> bool:
        background: Background = submission.extra["background"]
        if background.finished.is_set():
            return False
        if self._progress(submission.id, call).get("active"):
            call("POST", "/sdapi/v1/interrupt")
            return True
        threading.Thread(
            target=self._interrupt_when_active, args=(submission, call), daemon=True
        ).start()
        return False

    def _interrupt_when_active(self, submission: Submission, call: Call) -> None:
        """Waits for a withdrawn render queued at the web UI to start, and stops it then."""
        background: Background = submission.extra["background"]
        until = time.monotonic() + WATCH_SECONDS
        while time.monotonic() < until and not background.finished.wait(0.5):
            try:
                if self._progress(submission.id, call).get("active"):
                    call("POST", "/sdapi/v1/interrupt")
                    return
            except Exception:
                logger.warning("Could not watch AUTOMATIC1111 task %s", submission.id)
                return


def build() -> RemoteRenderer:
    """AUTOMATIC1111 (or Forge) through the provider layer (A1111_* settings)."""
    user, _, password = settings.A1111_AUTH.partition(":")
    auth = (user, password) if settings.A1111_AUTH else None
    http = provider_http("AUTOMATIC1111", settings.A1111_BASE_URL, auth=auth)
    adapter = A1111Adapter(
        template=settings.A1111_PAYLOAD,
        module=settings.A1111_REFERENCE_MODULE,
        reference_model=settings.A1111_REFERENCE_MODEL,
        intake=intake(settings.A1111_BASE_URL),
        rough_template=settings.A1111_ROUGH_PAYLOAD,
    )
    return remote(adapter, http)


register(RendererName.A1111, verbs=Verb, build=build)
