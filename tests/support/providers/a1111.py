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

from .base import Reply, Request, StandIn, draw

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
        self.route("POST", r"/sdapi/v1/txt2img", self.txt2img)
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
            for name, kind in FIELDS.items()
            if name in body
            and (not isinstance(body[name], kind) or (kind is int and isinstance(body[name], bool)))
        ]
        if problems:
            return Reply(422, {"detail": problems})
        if body.get("sampler_name", "Euler") not in SAMPLERS:
            return self.error(404, "HTTPException", "Sampler not found")
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
                png = draw(
                    str(body.get("prompt", "")), int(body.get("seed", -1)), width // 4, height // 4
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
