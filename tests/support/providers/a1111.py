"""A stand-in for AUTOMATIC1111's web UI API (`--api`), written from
AUTOMATIC1111/stable-diffusion-webui's modules/api/api.py and models.py,
modules/progress.py, and the sd-webui-controlnet extension's API unit
(internal_controlnet/args.py: `enabled`, `module`, `model`, `weight` 0–2,
`image`, `effective_region_mask`…).

- `POST /sdapi/v1/txt2img`: answers when the picture is done, one request at a
  time (the web UI's queue lock); ill-typed fields are FastAPI's 422
  `{"detail": [{"loc", "msg", "type"}]}`; an unknown sampler 404 "Sampler not
  found"; a ControlNet unit with a module or model the extension does not have
  fails inside processing, a 500 `{"error": "ValueError", …}` as the web UI's
  middleware answers any exception. The first request loads the checkpoint.
  `force_task_id` names the task.
- `POST /sdapi/v1/img2img`: the same, plus StableDiffusionProcessingImg2Img's
  fields (`init_images` a list of base64 pictures, `mask` base64, white =
  redrawn unless `inpainting_mask_invert` is 1, `denoising_strength`,
  `inpainting_fill` 0–3, `inpaint_full_res`, `inpaint_full_res_padding`,
  `mask_blur`, `resize_mode`); no `init_images` is api.py's 404 "Init image not
  found", a picture or mask that does not decode its 500 "Invalid encoded
  image". The answer is the init image at width×height, redrawn under the mask
  (`made` keeps the mask as the web UI read it) and drifted elsewhere.
- `POST /internal/progress {"id_task"}`: `active`, `queued`, `completed`.
- `POST /sdapi/v1/interrupt`: stops whatever is running (its partial picture
  is still answered, as the web UI does).
- `--api-auth`: HTTP basic auth when `auth` is given (401 otherwise).
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import threading
import time
import uuid
from typing import Any

from PIL import Image

from .base import Reply, Request, StandIn, draw, inpaint

SAMPLERS = ["Euler a", "Euler", "DPM++ 2M", "DPM++ SDE", "DDIM"]
MODULES = ["none", "ip-adapter_clip_h", "ip-adapter_clip_g", "ip-adapter_face_id", "canny"]
MODELS = ["ip-adapter-plus_sdxl_vit-h [f1f19f7d]", "ip-adapter_sdxl [a1a1a1a1]", "None"]
FIELDS = {
    "prompt": str,
    "negative_prompt": str,
    "seed": int,
    "width": int,
    "height": int,
    "steps": int,
    "cfg_scale": (int, float),
    "sampler_name": str,
    "scheduler": str,
    "batch_size": int,
    "n_iter": int,
    "send_images": bool,
    "save_images": bool,
    "force_task_id": str,
    "alwayson_scripts": dict,
    "override_settings": dict,
}
IMG2IMG_FIELDS = {
    **FIELDS,
    "init_images": list,
    "mask": str,
    "denoising_strength": (int, float),
    "inpainting_fill": int,
    "inpaint_full_res": bool,
    "inpaint_full_res_padding": int,
    "inpainting_mask_invert": int,
    "mask_blur": int,
    "resize_mode": int,
}


def decoded(value: Any) -> Image.Image | None:
    try:
        image = Image.open(io.BytesIO(base64.b64decode(str(value), validate=True)))
        image.load()
    except (ValueError, OSError, binascii.Error):
        return None
    return image


def decodes(value: Any) -> bool:
    try:
        Image.open(io.BytesIO(base64.b64decode(str(value), validate=True))).load()
    except (ValueError, OSError, binascii.Error):
        return False
    return True


class A1111StandIn(StandIn):
    name = "a1111"

    def __init__(
        self, *, render: float = 0.5, load: float = 1.0, auth: tuple[str, str] | None = None
    ):
        super().__init__()
        self.render_seconds, self.load_seconds = render, load
        self.auth = auth
        self.loaded = False
        self.queue_lock = threading.Lock()
        self.pending: dict[str, float] = {}
        self.current: str | None = None
        self.finished: set[str] = set()
        self.interrupting = False
        self.interrupted: list[str] = []  # the tasks an interrupt stopped
        self.payloads: dict[str, dict] = {}
        self.made: dict[str, Image.Image] = {}  # each img2img task's mask, as it was read
        self.route("POST", r"/sdapi/v1/txt2img", self.txt2img)
        self.route("POST", r"/sdapi/v1/img2img", self.img2img)
        self.route("POST", r"/internal/progress", self.progress)
        self.route("POST", r"/sdapi/v1/interrupt", self.interrupt)
        self.route(
            "GET", r"/sdapi/v1/samplers", lambda r: Reply(200, [{"name": n} for n in SAMPLERS])
        )

    def authenticate(self, request: Request) -> Reply | None:
        if self.auth is None or not request.path.startswith("/sdapi/"):
            return None
        expected = "Basic " + base64.b64encode(":".join(self.auth).encode()).decode()
        if request.headers.get("authorization") != expected:
            return Reply(
                401,
                {"detail": "Incorrect username or password"},
                headers={"WWW-Authenticate": "Basic"},
            )
        return None

    def txt2img(self, request: Request) -> Reply:
        return self.process(request, FIELDS)

    def img2img(self, request: Request) -> Reply:
        return self.process(request, IMG2IMG_FIELDS, img2img=True)

    def process(self, request: Request, fields: dict, *, img2img: bool = False) -> Reply:
        try:
            body = request.json()
        except ValueError:
            return Reply(
                422,
                {
                    "detail": [
                        {"loc": ["body"], "msg": "Invalid JSON", "type": "value_error.jsondecode"}
                    ]
                },
            )
        problems = [
            {"loc": ["body", name], "msg": f"value is not a valid {kind}", "type": "type_error"}
            for name, kind in fields.items()
            if name in body
            and (not isinstance(body[name], kind) or (kind is int and isinstance(body[name], bool)))
        ]
        if problems:
            return Reply(422, {"detail": problems})
        if body.get("sampler_name", "Euler") not in SAMPLERS:
            return self.error(404, "HTTPException", "Sampler not found")
        init = mask = None
        if img2img:
            if not body.get("init_images"):
                return self.error(404, "HTTPException", "Init image not found")
            init = decoded(body["init_images"][0])
            mask = decoded(body["mask"]) if body.get("mask") else None
            if init is None or (body.get("mask") and mask is None):
                return self.error(500, "HTTPException", "Invalid encoded image")
        task = body.get("force_task_id") or f"task({uuid.uuid4().hex[:15]})"
        self.payloads[task] = body
        with self.lock:
            self.pending[task] = time.monotonic()
        with self.queue_lock:
            with self.lock:
                self.pending.pop(task, None)
                self.current = task
                self.interrupting = False
            try:
                units = ((body.get("alwayson_scripts") or {}).get("controlnet") or {}).get("args")
                refusal = self._check_units(units or [])
                if refusal:
                    return self.error(500, "ValueError", "", errors=refusal)
                seconds = self.render_seconds + (0 if self.loaded else self.load_seconds)
                self.loaded = True
                until = time.monotonic() + seconds
                while time.monotonic() < until and not self.interrupting:
                    time.sleep(0.01)
                if self.interrupting:
                    self.interrupted.append(task)
                width, height = int(body.get("width", 512)), int(body.get("height", 512))
                if init is not None:
                    png = self._inpainted(task, body, init, mask, width, height)
                else:
                    png = draw(
                        str(body.get("prompt", "")),
                        int(body.get("seed", -1)),
                        width // 4,
                        height // 4,
                    )
            finally:
                with self.lock:
                    self.current = None
                    self.finished.add(task)
        return Reply(
            200,
            {
                "images": [base64.b64encode(png).decode()],
                "parameters": body,
                "info": json.dumps({"seed": int(body.get("seed", -1))}),
            },
        )

    def _inpainted(
        self,
        task: str,
        body: dict,
        init: Image.Image,
        mask: Image.Image | None,
        width: int,
        height: int,
    ) -> bytes:
        """img2img's picture: the init image at width×height, redrawn where the mask says
        (all of it without a mask), as modules/processing.py reads the mask: greyscale,
        inverted when `inpainting_mask_invert` is 1."""
        picture = init.convert("RGB").resize((width, height))
        if mask is None:
            region = Image.new("L", (width, height), 255)
        else:
            region = mask.convert("L").resize((width, height))
            if body.get("inpainting_mask_invert") == 1:
                region = region.point(lambda v: 255 - v)
        self.made[task] = region
        buffer = io.BytesIO()
        picture.save(buffer, format="PNG")
        return inpaint(
            buffer.getvalue(), region, str(body.get("prompt", "")), int(body.get("seed", -1))
        )

    def _check_units(self, units: list) -> str:
        for unit in units:
            if not isinstance(unit, dict) or not unit.get("enabled", False):
                continue
            if unit.get("module", "none") not in MODULES:
                return f"module({unit.get('module')}) not found in supported modules."
            model = str(unit.get("model", "None"))
            if not any(m == model or m.split(" [")[0] == model for m in MODELS):
                return f"model({model}) not found in supported models."
            if not 0 <= float(unit.get("weight", 1.0)) <= 2:
                return "weight must be between 0 and 2"
            if not decodes(unit.get("image")):
                return "Invalid encoded image"
            if "effective_region_mask" in unit and not decodes(unit["effective_region_mask"]):
                return "Invalid effective_region_mask"
        return ""

    def progress(self, request: Request) -> Reply:
        task = (request.json() or {}).get("id_task")
        with self.lock:
            active, queued = task == self.current, task in self.pending
            completed = task in self.finished
        return Reply(
            200,
            {
                "active": active,
                "queued": queued,
                "completed": completed,
                "progress": None,
                "eta": None,
                "live_preview": None,
                "id_live_preview": -1,
                "textinfo": "In queue" if queued else "Waiting...",
            },
        )

    def interrupt(self, request: Request) -> Reply:
        with self.lock:
            if self.current is not None:
                self.interrupting = True
        return Reply(200, {})

    @staticmethod
    def error(status: int, kind: str, detail: str, errors: str = "") -> Reply:
        """An error as the web UI's api_middleware answers any exception."""
        return Reply(status, {"error": kind, "detail": detail, "body": "", "errors": errors})
