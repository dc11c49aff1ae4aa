"""A stand-in for Replicate's HTTP API, written from its documentation (HTTP API
reference: predictions, `Prefer: wait`, cancel, errors as RFC 7807 problem
details) and replicate-python (`Prediction`'s fields, `ReplicateError`, the
retry transport's reading of `Retry-After`).

- `POST /v1/models/{owner}/{name}/predictions` (official models) and
  `POST /v1/predictions` with `version`; the input is validated against the
  model's schema (FLUX schnell's, FLUX dev's, whose `image` makes it img2img (the
  picture drawn again from that image, `prompt_strength` of it), FLUX Kontext's,
  and FLUX Fill Pro's, which
  inpaints: `image`, `mask` white = redrawn, of the image's size, or the
  prediction fails; its output one URL): an unknown or ill-typed field is
  422 "Input validation failed" with `invalid_fields`. `Prefer: wait=N` holds
  the answer up to N seconds. Answers 201 with the prediction.
- `GET /v1/predictions/{id}`: `starting` while a worker is found and booted
  (a cold boot takes `cold_boot` seconds), `processing` for `render`
  seconds, then `succeeded` with `output` a list of file URLs (served here,
  as Replicate serves them from replicate.delivery), or `failed` with
  `error`; `created_at`, `started_at`, `completed_at`, `metrics.predict_time`.
- `POST /v1/predictions/{id}/cancel`: a prediction not finished is
  `canceled` (its worker stops; a boot goes on); answers the prediction.
- 401 without the right `Authorization: Bearer` token; 404 for an unknown
  model or prediction; failures injected with `fail_next` (429 with
  `Retry-After` as Replicate throttles, 5xx).

What cancelling saved is kept per prediction (`saved`): the rest of its boot
and its render, as the fleet would have spent them.

Each model may take its own time (`render_for`: a fast draft model beside a slow final
one) and, as on Replicate, run on a fleet of its own (`fleet_per_model`: its own
workers, its own cold boots), or all on one fleet (the default).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from PIL import Image

from .base import Fleet, FleetStandIn, Reply, Request, draw, inpaint

FLUX_SCHNELL = {
    "prompt": {"type": "string", "required": True},
    "seed": {"type": "integer"},
    "aspect_ratio": {
        "type": "string",
        "enum": ["1:1", "16:9", "21:9", "3:2", "2:3", "4:5", "5:4", "3:4", "4:3", "9:16", "9:21"],
    },
    "num_outputs": {"type": "integer", "minimum": 1, "maximum": 4},
    "num_inference_steps": {"type": "integer", "minimum": 1, "maximum": 4},
    "output_format": {"type": "string", "enum": ["webp", "jpg", "png"]},
    "output_quality": {"type": "integer", "minimum": 0, "maximum": 100},
    "go_fast": {"type": "boolean"},
    "megapixels": {"type": "string", "enum": ["1", "0.25"]},
    "disable_safety_checker": {"type": "boolean"},
}
# FLUX dev: text to image, or image to image given `image` (its `prompt_strength` of the
# picture drawn anew; the output then has the image's aspect ratio).
FLUX_DEV = {
    "prompt": {"type": "string", "required": True},
    "image": {"type": "uri"},
    "prompt_strength": {"type": "number", "minimum": 0, "maximum": 1},
    "seed": {"type": "integer"},
    "aspect_ratio": {
        "type": "string",
        "enum": ["1:1", "16:9", "21:9", "3:2", "2:3", "4:5", "5:4", "3:4", "4:3", "9:16", "9:21"],
    },
    "num_outputs": {"type": "integer", "minimum": 1, "maximum": 4},
    "num_inference_steps": {"type": "integer", "minimum": 1, "maximum": 50},
    "guidance": {"type": "number", "minimum": 0, "maximum": 10},
    "output_format": {"type": "string", "enum": ["webp", "jpg", "png"]},
    "output_quality": {"type": "integer", "minimum": 0, "maximum": 100},
    "go_fast": {"type": "boolean"},
    "megapixels": {"type": "string", "enum": ["1", "0.25"]},
    "disable_safety_checker": {"type": "boolean"},
}
# A model that takes a reference picture (FLUX Kontext's shape), for templates with one.
KONTEXT = {
    "prompt": {"type": "string", "required": True},
    "input_image": {"type": "uri"},
    "seed": {"type": "integer"},
    "aspect_ratio": {"type": "string"},
    "output_format": {"type": "string", "enum": ["jpg", "png"]},
}
# An inpainting model (FLUX Fill Pro's schema on Replicate): `image` and `mask` (white =
# inpainted, black kept; the same size as the image) as URIs, data URLs included; its
# output is one URI, not a list.
FLUX_FILL_PRO = {
    "prompt": {"type": "string"},
    "image": {"type": "uri", "required": True},
    "mask": {"type": "uri"},
    "outpaint": {
        "type": "string",
        "enum": ["None", "Zoom out 1.5x", "Zoom out 2x", "Make square", "Left outpaint"],
    },
    "seed": {"type": "integer"},
    "steps": {"type": "integer", "minimum": 1, "maximum": 50},
    "prompt_upsampling": {"type": "boolean"},
    "guidance": {"type": "number", "minimum": 1.5, "maximum": 100},
    "safety_tolerance": {"type": "integer", "minimum": 1, "maximum": 6},
    "output_format": {"type": "string", "enum": ["jpg", "png"]},
}
INPAINTING = {"black-forest-labs/flux-fill-pro"}
SIZES = {
    "1:1": (1024, 1024),
    "3:2": (1216, 832),
    "4:3": (1152, 896),
    "16:9": (1344, 768),
    "2:3": (832, 1216),
}
TYPES = {"string": str, "integer": int, "boolean": bool, "uri": str, "number": (int, float)}


def stamp(at: float) -> str:
    """A monotonic instant as Replicate's ISO 8601 UTC timestamp."""
    wall = datetime.now(UTC) - timedelta(seconds=time.monotonic() - at)
    return wall.isoformat().replace("+00:00", "Z")


@dataclass
class Prediction:
    id: str
    model: str
    version: str
    input: dict
    created: float = field(default_factory=time.monotonic)
    status: str = "starting"
    started: float | None = None
    completed: float | None = None
    output: Any = None  # a list of URLs, or one (an inpainting model's)
    error: str | None = None
    worker: int | None = None
    saved: float = 0.0  # seconds of boot and render a cancel spared the fleet


class ReplicateStandIn(FleetStandIn):
    name = "replicate"

    def __init__(
        self,
        *,
        token: str = "r8_test",
        cold_boot: float = 4.0,
        render: float = 1.0,
        capacity: int = 4,
        idle: float = 60.0,
        models: dict[str, dict] | None = None,
        render_for: dict[str, float] | None = None,
        fleet_per_model: bool = False,
    ):
        super().__init__(cold_boot=cold_boot, render=render, capacity=capacity, idle=idle)
        self.token = token
        self.render_for = render_for or {}
        self.fleet_per_model = fleet_per_model
        self.fleets: dict[str, Fleet] = {}
        self.models = models or {
            "black-forest-labs/flux-schnell": FLUX_SCHNELL,
            "black-forest-labs/flux-dev": FLUX_DEV,
            "black-forest-labs/flux-kontext-dev": KONTEXT,
            "black-forest-labs/flux-fill-pro": FLUX_FILL_PRO,
        }
        self.made: dict[str, Image.Image] = {}  # each inpainting's mask, as the model read it
        self.versions = {version_of(name): name for name in self.models}
        self.predictions: dict[str, Prediction] = {}
        self.files: dict[str, bytes] = {}
        self.fail_with: str = ""  # the next predictions fail with this error (a model error)
        self.ignore_cancel = False  # cancel is answered but nothing stops (a provider bug)
        self.route("POST", r"/v1/models/(?P<owner>[^/]+)/(?P<name>[^/]+)/predictions", self.create)
        self.route("POST", r"/v1/predictions", self.create_version)
        self.route("GET", r"/v1/predictions/(?P<id>[^/]+)", self.get)
        self.route("POST", r"/v1/predictions/(?P<id>[^/]+)/cancel", self.cancel)
        self.route("GET", r"/files/(?P<id>[^/]+)/(?P<name>[^/]+)", self.file)

    def environment(self) -> dict[str, str]:
        """The settings a stack needs to render here (RENDERER=replicate, polled often)."""
        return {
            "RENDERER": "replicate",
            "REPLICATE_BASE_URL": self.url,
            "REPLICATE_API_TOKEN": self.token,
            "RENDER_POLL_SECONDS": "0.1",
        }

    # --- what tests and benches read -----------------------------------------------------

    def cancelled(self) -> list[Prediction]:
        with self.lock:
            return [p for p in self.predictions.values() if p.status == "canceled"]

    def boots(self) -> int:
        return self.fleet.boots + sum(fleet.boots for fleet in self.fleets.values())

    def fleet_of(self, model: str) -> Fleet:
        """The fleet `model` runs on: its own with `fleet_per_model`, else the one."""
        if not self.fleet_per_model:
            return self.fleet
        with self.lock:
            if model not in self.fleets:
                fleet = Fleet(
                    capacity=self.fleet.capacity,
                    cold_boot=self.fleet.cold_boot,
                    idle=self.fleet.idle,
                )
                fleet.start_job, fleet.finish_job = self.start_job, self.finish_job
                fleet.begin()
                self.fleets[model] = fleet
            return self.fleets[model]

    def seconds_of(self, prediction: Prediction) -> float:
        """What one prediction of its model takes to run."""
        return self.render_for.get(prediction.model, self.render_seconds)

    def stop(self) -> None:
        for fleet in self.fleets.values():
            fleet.end()
        super().stop()

    def spent_seconds(self) -> float:
        """The fleet's time spent: every boot begun, and every prediction's processing."""
        now = time.monotonic()
        with self.lock:
            running = sum(
                (p.completed or now) - p.started
                for p in self.predictions.values()
                if p.started is not None
            )
        return self.boots() * self.fleet.cold_boot + running

    # --- the API ---------------------------------------------------------------------------

    def authenticate(self, request: Request) -> Reply | None:
        if request.path.startswith("/files/"):
            return None  # delivery URLs are public
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return problem(401, "Unauthenticated", "You did not pass a valid authentication token")
        return None

    def create(self, request: Request) -> Reply:
        model = f"{request.match['owner']}/{request.match['name']}"
        return self._create(request, model=model, version="")

    def create_version(self, request: Request) -> Reply:
        body = request.json() or {}
        model = self.versions.get(str(body.get("version", "")))
        if model is None:
            return problem(
                422,
                "Invalid version or not permitted",
                "The specified version does not exist (or perhaps you don't have permission "
                "to use it?)",
            )
        return self._create(request, model=model, version=str(body["version"]))

    def _create(self, request: Request, *, model: str, version: str) -> Reply:
        if model not in self.models:
            return problem(404, "Not found", "The requested resource could not be found.")
        try:
            body = request.json()
        except ValueError:
            return problem(400, "Invalid JSON", "The request body is not valid JSON.")
        invalid = validate(
            body.get("input") if isinstance(body, dict) else None, self.models[model]
        )
        if invalid:
            detail = "\n".join(f"- {f['field']}: {f['description']}" for f in invalid)
            return problem(422, "Input validation failed", detail, invalid_fields=invalid)
        prediction = Prediction(
            id=uuid.uuid4().hex[:26],
            model=model,
            version=version or version_of(model),
            input=body["input"],
        )
        with self.lock:
            self.predictions[prediction.id] = prediction
        self.fleet_of(model).submit(prediction)
        wait = re.match(r"wait(?:=(\d+))?", request.headers.get("prefer", ""))
        if wait:
            until = time.monotonic() + min(int(wait.group(1) or 60), 60)
            while time.monotonic() < until and prediction.status in ("starting", "processing"):
                time.sleep(0.02)
        return Reply(201, self.shown(prediction))

    def get(self, request: Request) -> Reply:
        prediction = self.predictions.get(request.match["id"])
        if prediction is None:
            return problem(404, "Not found", "The requested resource could not be found.")
        return Reply(200, self.shown(prediction))

    def cancel(self, request: Request) -> Reply:
        prediction = self.predictions.get(request.match["id"])
        if prediction is None:
            return problem(404, "Not found", "The requested resource could not be found.")
        fleet = self.fleet_of(prediction.model)
        with fleet.lock:
            if prediction.status in ("starting", "processing") and not self.ignore_cancel:
                prediction.saved = fleet.cancel(prediction, render=self.seconds_of(prediction))
                prediction.status = "canceled"
                prediction.completed = time.monotonic()
        return Reply(200, self.shown(prediction))

    def file(self, request: Request) -> Reply:
        data = self.files.get(f"{request.match['id']}/{request.match['name']}")
        if data is None:
            return Reply(404, raw=b"Not Found", content_type="text/plain")
        kind = request.match["name"].rsplit(".", 1)[-1]
        return Reply(200, raw=data, content_type=f"image/{'jpeg' if kind == 'jpg' else kind}")

    # --- the fleet's side --------------------------------------------------------------------

    def start_job(self, prediction: Prediction, now: float) -> None:
        if prediction.status == "starting":
            prediction.status = "processing"
            prediction.started = now

    def finish_job(self, prediction: Prediction, now: float) -> bool:
        if prediction.status != "processing":
            return True
        if prediction.started is None or now - prediction.started < self.seconds_of(prediction):
            return False
        prediction.completed = now
        if self.fail_with:
            prediction.status, prediction.error = "failed", self.fail_with
            return True
        if prediction.model in INPAINTING:
            return self._inpaint(prediction)
        fmt = str(prediction.input.get("output_format", "webp"))
        kind = {"jpg": "JPEG", "png": "PNG"}.get(fmt, "WEBP")
        width, height = SIZES.get(str(prediction.input.get("aspect_ratio", "1:1")), (1024, 1024))
        if prediction.input.get("megapixels") == "0.25":
            width, height = width // 2, height // 2
        source = data_of(prediction.input.get("image"))
        if source is not None:  # img2img: the image drawn again, its shape kept
            image = redrawn(source, prediction.input, kind)
        else:
            # Drawn smaller than asked: the stand-in's time goes on the clock, not the CPU.
            image = draw(
                str(prediction.input.get("prompt", "")),
                int(prediction.input.get("seed") or 0),
                width // 4,
                height // 4,
                kind,
            )
        name = f"out-0.{fmt}"
        self.files[f"{prediction.id}/{name}"] = image
        prediction.output = [f"{self.url}/files/{prediction.id}/{name}"]
        prediction.status = "succeeded"
        return True

    def _inpaint(self, prediction: Prediction) -> bool:
        """FLUX Fill: the image redrawn where the mask is white (a greyscale reading of
        it); a mask of another size than the image fails the prediction."""
        given = prediction.input
        image, mask = data_of(given["image"]), data_of(given.get("mask", ""))
        if image is None or mask is None:
            prediction.status = "failed"
            prediction.error = "image and mask must be images (jpeg, png, gif or webp)"
            return True
        if image.size != mask.size:
            prediction.status = "failed"
            prediction.error = f"Mask size {mask.size} does not match image size {image.size}"
            return True
        region = mask.convert("L")
        self.made[prediction.id] = region
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, format="PNG")
        fmt = str(given.get("output_format", "jpg"))
        # A JPEG would blur the region's edge; a PNG is what the adapter asks for.
        drawn = inpaint(
            buffer.getvalue(),
            region,
            str(given.get("prompt", "")),
            int(given.get("seed") or 0),
            "JPEG" if fmt == "jpg" else "PNG",
        )
        name = f"out.{fmt}"
        self.files[f"{prediction.id}/{name}"] = drawn
        prediction.output = f"{self.url}/files/{prediction.id}/{name}"
        prediction.status = "succeeded"
        return True

    def shown(self, prediction: Prediction) -> dict[str, Any]:
        base = f"{self.url}/v1/predictions/{prediction.id}"
        shown = {
            "id": prediction.id,
            "model": prediction.model,
            "version": prediction.version,
            "input": prediction.input,
            "logs": "",
            "output": prediction.output,
            "data_removed": False,
            "error": prediction.error,
            "status": prediction.status,
            "created_at": stamp(prediction.created),
            "urls": {"get": base, "cancel": f"{base}/cancel", "web": base},
        }
        if prediction.started is not None:
            shown["started_at"] = stamp(prediction.started)
        if prediction.completed is not None:
            shown["completed_at"] = stamp(prediction.completed)
            if prediction.started is not None:
                shown["metrics"] = {"predict_time": prediction.completed - prediction.started}
        return shown


def redrawn(source: Image.Image, given: dict, kind: str) -> bytes:
    """An img2img picture: the source at a quarter of its size, `prompt_strength` of it
    painted over by a drawing of the prompt (the composition of the source stays)."""
    small = source.convert("RGB").resize((max(16, source.width // 4), max(16, source.height // 4)))
    drawing = Image.open(
        io.BytesIO(draw(str(given.get("prompt", "")), int(given.get("seed") or 0), *small.size))
    ).convert("RGB")
    strength = float(given.get("prompt_strength", 0.8))
    buffer = io.BytesIO()
    Image.blend(small, drawing, min(0.9, strength * 0.5)).save(buffer, format=kind)
    return buffer.getvalue()


def data_of(url: Any) -> Image.Image | None:
    """The picture a data URL holds, or None."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    try:
        with Image.open(
            io.BytesIO(base64.b64decode(url.partition(",")[2], validate=True))
        ) as image:
            image.load()
            return image.copy()
    except (ValueError, OSError):
        return None


def version_of(model: str) -> str:
    """The stand-in's version id of a model (what `owner/name:version` names)."""
    return hashlib.sha256(model.encode()).hexdigest()


def problem(status: int, title: str, detail: str, **extra: Any) -> Reply:
    """An error as Replicate gives it: RFC 7807 problem details."""
    return Reply(
        status,
        {"title": title, "detail": detail, "status": status, **extra},
        content_type="application/problem+json",
    )


def validate(given: Any, schema: dict[str, dict]) -> list[dict]:
    """The model's input checked against its schema, as Replicate reports it."""
    if not isinstance(given, dict):
        return [{"type": "type", "field": "input", "description": "Invalid type. Expected: object"}]
    invalid = []
    for name in given:
        if name not in schema:
            invalid.append(
                {
                    "type": "additional_property_not_allowed",
                    "field": "input",
                    "description": f"Additional property {name} is not allowed",
                }
            )
    for name, rule in schema.items():
        if name not in given:
            if rule.get("required"):
                invalid.append(
                    {"type": "required", "field": "input", "description": f"{name} is required"}
                )
            continue
        value = given[name]
        kind = TYPES[rule["type"]]
        if not isinstance(value, kind) or (rule["type"] == "integer" and isinstance(value, bool)):
            invalid.append(
                {
                    "type": "invalid_type",
                    "field": f"input.{name}",
                    "description": f"Invalid type. Expected: {rule['type']}, given: "
                    f"{type(value).__name__}",
                }
            )
            continue
        if "enum" in rule and value not in rule["enum"]:
            invalid.append(
                {
                    "type": "enum",
                    "field": f"input.{name}",
                    "description": f"{name} must be one of the following: "
                    + ", ".join(json.dumps(v) for v in rule["enum"]),
                }
            )
        if rule["type"] == "uri" and not str(value).startswith(("http://", "https://", "data:")):
            invalid.append(
                {
                    "type": "format",
                    "field": f"input.{name}",
                    "description": "Does not match format 'uri'",
                }
            )
        if rule["type"] == "uri" and str(value).startswith("data:"):
            try:
                base64.b64decode(str(value).partition(",")[2], validate=True)
            except ValueError:
                invalid.append(
                    {"type": "format", "field": f"input.{name}", "description": "Invalid data URI"}
                )
        for bound, ok in (("minimum", lambda v, b: v >= b), ("maximum", lambda v, b: v <= b)):
            if bound in rule and not ok(value, rule[bound]):
                invalid.append(
                    {
                        "type": f"number_{bound[:3]}",
                        "field": f"input.{name}",
                        "description": f"Must be {'greater' if bound == 'minimum' else 'less'} "
                        f"than or equal to {rule[bound]}",
                    }
                )
    return invalid
