"""A stand-in for ComfyUI's server, written from comfyanonymous/ComfyUI's server.py
and execution.py (validate_prompt, validate_inputs, the PromptQueue).

- `POST /prompt {"prompt", "client_id"}`: the workflow is validated node by node
  as ComfyUI does (a class that does not exist; a missing required input; a
  link to a node that is not there or of the wrong type; a number out of its
  range; a value not in its list, a checkpoint that is not installed, an image
  LoadImage cannot find): 400 `{"error": {"type", "message", "details",
  "extra_info"}, "node_errors": {id: {"errors", "dependent_outputs",
  "class_type"}}}`; else `{"prompt_id", "number", "node_errors": {}}`.
- One executor runs the queue in order (ComfyUI runs one prompt at a time);
  the first prompt with a checkpoint loads it (`load` seconds), each takes
  `render` seconds, and its SaveImage nodes' images land in the output folder.
- `GET /history/{id}`: `{}` until done; then `{id: {"prompt", "outputs",
  "status": {"status_str", "completed", "messages"}}}` (`execution_error`,
  `execution_interrupted` when it did not succeed).
- Inpainting: LoadImageMask (a channel of an uploaded picture: `red` of a
  greyscale mask, or `alpha` inverted), ImageToMask, VAEEncodeForInpaint and
  InpaintModelConditioning as nodes.py declares them; the picture saved is the
  LoadImage picture redrawn where the mask is 1 (`made` keeps the mask as the
  nodes read it) and drifted elsewhere.
- `GET /view?filename=&subfolder=&type=`, `POST /upload/image` (multipart
  `image`, `overwrite`, `type`, `subfolder`), `GET /queue`
  (`queue_running`, `queue_pending`), `POST /queue {"delete": [...]}`,
  `POST /interrupt` (with `{"prompt_id"}` only if that prompt is running, as
  ComfyUI does since 2025; `legacy_interrupt` interrupts whatever runs).
"""

from __future__ import annotations

import io
import itertools
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from PIL import Image

from .base import Reply, Request, StandIn, draw, inpaint

CHECKPOINTS = [
    "sd_xl_base_1.0.safetensors",
    "sd_xl_turbo_1.0_fp16.safetensors",
    "sd_xl_base_1.0_inpainting_0.1.safetensors",
]
CHANNELS = ["alpha", "red", "green", "blue"]
SAMPLERS = ["euler", "euler_ancestral", "dpmpp_2m", "dpmpp_2m_sde", "ddim"]
SCHEDULERS = ["normal", "karras", "exponential", "sgm_uniform", "simple"]
INT = {"min": -(2**63), "max": 2**64}


def _int(**bounds) -> tuple:
    return ("INT", {**INT, **bounds})


def _float(**bounds) -> tuple:
    return ("FLOAT", {"min": -1e9, "max": 1e9, **bounds})


# class_type -> required inputs, optional inputs, outputs, output node?
CORE: dict[str, dict[str, Any]] = {
    "CheckpointLoaderSimple": {
        "required": {"ckpt_name": (CHECKPOINTS,)},
        "output": ["MODEL", "CLIP", "VAE"],
    },
    "EmptyLatentImage": {
        "required": {
            "width": _int(min=16, max=16384),
            "height": _int(min=16, max=16384),
            "batch_size": _int(min=1, max=4096),
        },
        "output": ["LATENT"],
    },
    "CLIPTextEncode": {
        "required": {"text": ("STRING",), "clip": ("CLIP",)},
        "output": ["CONDITIONING"],
    },
    "ConditioningSetArea": {
        "required": {
            "conditioning": ("CONDITIONING",),
            "width": _int(min=64, max=16384),
            "height": _int(min=64, max=16384),
            "x": _int(min=0, max=16384),
            "y": _int(min=0, max=16384),
            "strength": _float(min=0.0, max=10.0),
        },
        "output": ["CONDITIONING"],
    },
    "ConditioningCombine": {
        "required": {"conditioning_1": ("CONDITIONING",), "conditioning_2": ("CONDITIONING",)},
        "output": ["CONDITIONING"],
    },
    "KSampler": {
        "required": {
            "model": ("MODEL",),
            "seed": _int(min=0, max=0xFFFFFFFFFFFFFFFF),
            "steps": _int(min=1, max=10000),
            "cfg": _float(min=0.0, max=100.0),
            "sampler_name": (SAMPLERS,),
            "scheduler": (SCHEDULERS,),
            "positive": ("CONDITIONING",),
            "negative": ("CONDITIONING",),
            "latent_image": ("LATENT",),
            "denoise": _float(min=0.0, max=1.0),
        },
        "output": ["LATENT"],
    },
    "VAEDecode": {"required": {"samples": ("LATENT",), "vae": ("VAE",)}, "output": ["IMAGE"]},
    "SaveImage": {
        "required": {"images": ("IMAGE",), "filename_prefix": ("STRING",)},
        "output": [],
        "output_node": True,
    },
    "LoadImage": {"required": {"image": ("INPUT_FILE",)}, "output": ["IMAGE", "MASK"]},
    # nodes.py: LoadImageMask reads one channel of a picture as the mask (alpha inverted:
    # transparent = 1); VAEEncodeForInpaint and InpaintModelConditioning redraw where the
    # mask is 1; ImageToMask takes a channel of an IMAGE.
    "LoadImageMask": {
        "required": {"image": ("INPUT_FILE",), "channel": (CHANNELS,)},
        "output": ["MASK"],
    },
    "ImageToMask": {
        "required": {"image": ("IMAGE",), "channel": (["red", "green", "blue", "alpha"],)},
        "output": ["MASK"],
    },
    "VAEEncode": {"required": {"pixels": ("IMAGE",), "vae": ("VAE",)}, "output": ["LATENT"]},
    # nodes.py ImageScale: an IMAGE at width×height (0 keeps the other side's ratio).
    "ImageScale": {
        "required": {
            "image": ("IMAGE",),
            "upscale_method": (["nearest-exact", "bilinear", "area", "bicubic", "lanczos"],),
            "width": _int(min=0, max=16384),
            "height": _int(min=0, max=16384),
            "crop": (["disabled", "center"],),
        },
        "output": ["IMAGE"],
    },
    "VAEEncodeForInpaint": {
        "required": {
            "pixels": ("IMAGE",),
            "vae": ("VAE",),
            "mask": ("MASK",),
            "grow_mask_by": _int(min=0, max=64),
        },
        "output": ["LATENT"],
    },
    "InpaintModelConditioning": {
        "required": {
            "positive": ("CONDITIONING",),
            "negative": ("CONDITIONING",),
            "vae": ("VAE",),
            "pixels": ("IMAGE",),
            "mask": ("MASK",),
        },
        "optional": {"noise_mask": ("BOOLEAN",)},
        "output": ["CONDITIONING", "CONDITIONING", "LATENT"],
    },
    "SolidMask": {
        "required": {
            "value": _float(min=0.0, max=1.0),
            "width": _int(min=1, max=16384),
            "height": _int(min=1, max=16384),
        },
        "output": ["MASK"],
    },
    "MaskComposite": {
        "required": {
            "destination": ("MASK",),
            "source": ("MASK",),
            "x": _int(min=0, max=16384),
            "y": _int(min=0, max=16384),
            "operation": (["multiply", "add", "subtract", "and", "or", "xor"],),
        },
        "output": ["MASK"],
    },
}
# cubiq/ComfyUI_IPAdapter_plus, when installed.
IPADAPTER_PLUS: dict[str, dict[str, Any]] = {
    "IPAdapterUnifiedLoader": {
        "required": {
            "model": ("MODEL",),
            "preset": (
                [
                    "LIGHT - SD1.5 only (low strength)",
                    "STANDARD (medium strength)",
                    "VIT-G (medium strength)",
                    "PLUS (high strength)",
                    "PLUS FACE (portraits)",
                    "FULL FACE - SD1.5 only (portraits stronger)",
                ],
            ),
        },
        "optional": {"ipadapter": ("IPADAPTER",)},
        "output": ["MODEL", "IPADAPTER"],
    },
    "IPAdapterAdvanced": {
        "required": {
            "model": ("MODEL",),
            "ipadapter": ("IPADAPTER",),
            "image": ("IMAGE",),
            "weight": _float(min=-1.0, max=5.0),
            "weight_type": (["linear", "ease in", "ease out", "ease in-out", "style transfer"],),
            "combine_embeds": (["concat", "add", "subtract", "average", "norm average"],),
            "start_at": _float(min=0.0, max=1.0),
            "end_at": _float(min=0.0, max=1.0),
            "embeds_scaling": (["V only", "K+V", "K+V w/ C penalty", "K+mean(V) w/ C penalty"],),
        },
        "optional": {
            "image_negative": ("IMAGE",),
            "attn_mask": ("MASK",),
            "clip_vision": ("CLIP_VISION",),
        },
        "output": ["MODEL"],
    },
}


def problem(kind: str, message: str, details: str = "", **extra: Any) -> dict:
    return {"type": kind, "message": message, "details": details, "extra_info": extra}


def validate(prompt: Any, nodes: dict[str, dict], files: set[str]) -> tuple[dict | None, dict]:
    """(error, node_errors) as ComfyUI's validate_prompt gives them; (None, {}) if valid."""
    if not isinstance(prompt, dict):
        return problem("invalid_prompt", "Invalid prompt", "the prompt is not an object"), {}
    for node_id, node in prompt.items():
        class_type = node.get("class_type") if isinstance(node, dict) else None
        if class_type is None:
            return (
                problem(
                    "invalid_prompt",
                    "Cannot execute because a node is missing the class_type property.",
                    f"Node ID '#{node_id}'",
                ),
                {},
            )
        if class_type not in nodes:
            return (
                problem(
                    "invalid_prompt",
                    f"Cannot execute because node {class_type} does not exist.",
                    f"Node ID '#{node_id}'",
                ),
                {},
            )
    outputs = [i for i, n in prompt.items() if nodes[n["class_type"]].get("output_node")]
    if not outputs:
        return problem("prompt_no_outputs", "Prompt has no outputs"), {}
    node_errors: dict[str, dict] = {}
    for node_id, node in prompt.items():
        errors = _node_errors(prompt, node, nodes, files)
        if errors:
            node_errors[node_id] = {
                "errors": errors,
                "dependent_outputs": outputs,
                "class_type": node["class_type"],
            }
    if node_errors:
        return problem("prompt_outputs_failed_validation", "Prompt outputs failed validation"), (
            node_errors
        )
    return None, {}


def _node_errors(prompt: dict, node: dict, nodes: dict, files: set[str]) -> list[dict]:
    spec = nodes[node["class_type"]]
    inputs = node.get("inputs") or {}
    errors = []
    every = {**spec["required"], **spec.get("optional", {})}
    for name, rule in every.items():
        if name not in inputs:
            if name in spec["required"]:
                errors.append(
                    problem(
                        "required_input_missing", "Required input is missing", name, input_name=name
                    )
                )
            continue
        value, kind = inputs[name], rule[0]
        if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
            source = prompt.get(value[0])
            if source is None:
                errors.append(problem("bad_linked_input", "Bad linked input", name))
                continue
            made = nodes[source["class_type"]]["output"]
            if not isinstance(value[1], int) or value[1] >= len(made) or made[value[1]] != kind:
                received = (
                    made[value[1]] if isinstance(value[1], int) and value[1] < len(made) else "?"
                )
                errors.append(
                    problem(
                        "return_type_mismatch",
                        "Return type mismatch between linked nodes",
                        f"{name}, received_type({received}) mismatch input_type({kind})",
                        input_name=name,
                    )
                )
            continue
        if isinstance(kind, list):
            if value not in kind:
                errors.append(
                    problem(
                        "value_not_in_list",
                        "Value not in list",
                        f"{name}: '{value}' not in {kind}",
                        input_name=name,
                    )
                )
        elif kind in ("INT", "FLOAT"):
            if not isinstance(value, int | float) or isinstance(value, bool):
                errors.append(
                    problem(
                        "invalid_input_type",
                        f"Failed to convert an input value to a {kind} value",
                        f"{name}, {value}",
                        input_name=name,
                    )
                )
                continue
            bounds = rule[1]
            if value < bounds["min"]:
                errors.append(
                    problem(
                        "value_smaller_than_min",
                        f"Value {value} smaller than min of {bounds['min']}",
                        name,
                    )
                )
            if value > bounds["max"]:
                errors.append(
                    problem(
                        "value_bigger_than_max",
                        f"Value {value} bigger than max of {bounds['max']}",
                        name,
                    )
                )
        elif kind == "STRING" and not isinstance(value, str):
            errors.append(problem("invalid_input_type", "Failed to convert an input value", name))
        elif kind == "INPUT_FILE" and value not in files:
            errors.append(
                problem(
                    "custom_validation_failed",
                    "Custom validation failed for node",
                    f"image - Invalid image file: {value}",
                )
            )
    return errors


INPAINTERS = ("VAEEncodeForInpaint", "InpaintModelConditioning")


def executed(workflow: dict, files: dict[str, bytes]) -> tuple[bytes, Image.Image | None]:
    """What a validated workflow's SaveImage gets: a drawing (304×208) for a txt2img
    workflow; for an inpaint one, its LoadImage picture redrawn where its mask is 1 (at
    the picture's size), and that mask as ComfyUI's nodes read it (mode "L")."""
    node = next((n for n in workflow.values() if n["class_type"] in INPAINTERS), None)
    encode = next((n for n in workflow.values() if n["class_type"] == "VAEEncode"), None)
    if node is None and encode is not None:  # img2img: the picture drawn again, its shape kept
        image = _image(workflow, encode["inputs"]["pixels"], files)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        whole = Image.new("L", image.size, 255)
        return inpaint(buffer.getvalue(), whole, json.dumps(workflow), 0), None
    if node is None:
        return draw(json.dumps(workflow), 0, 304, 208), None
    image = _image(workflow, node["inputs"]["pixels"], files)
    mask = _mask(workflow, node["inputs"]["mask"], files).resize(image.size)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return inpaint(buffer.getvalue(), mask, json.dumps(workflow), 0), mask


def _opened(files: dict[str, bytes], name: str) -> Image.Image:
    with Image.open(io.BytesIO(files[name])) as image:
        image.load()
        return image.copy()


def _image(workflow: dict, link: list, files: dict[str, bytes]) -> Image.Image:
    node = workflow[link[0]]
    if node["class_type"] == "ImageScale":
        inputs = node["inputs"]
        return _image(workflow, inputs["image"], files).resize((inputs["width"], inputs["height"]))
    if node["class_type"] != "LoadImage":
        raise ValueError(f"the stand-in draws over a LoadImage only, not {node['class_type']}")
    return _opened(files, node["inputs"]["image"]).convert("RGB")


def _mask(workflow: dict, link: list, files: dict[str, bytes]) -> Image.Image:
    """A MASK output as nodes.py makes it, 255 where it is 1."""
    node = workflow[link[0]]
    kind, inputs = node["class_type"], node["inputs"]
    if kind == "LoadImageMask" or (kind == "LoadImage" and link[1] == 1):
        picture = _opened(files, inputs["image"])
        if picture.getbands() != ("R", "G", "B", "A"):
            picture = picture.convert("RGBA")
        band = inputs.get("channel", "alpha")[0].upper()
        channel = picture.getchannel(band)
        return channel.point(lambda v: 255 - v) if band == "A" else channel
    if kind == "ImageToMask":
        source = _image(workflow, inputs["image"], files).convert("RGBA")
        return source.getchannel(inputs["channel"][0].upper())
    raise ValueError(f"the stand-in reads a mask from LoadImageMask or ImageToMask, not {kind}")


@dataclass
class Prompt:
    id: str
    number: int
    workflow: dict
    client_id: str = ""
    started: float | None = None
    interrupted: bool = False
    outcome: dict = field(default_factory=dict)


class ComfyUIStandIn(StandIn):
    name = "comfyui"

    def __init__(
        self,
        *,
        render: float = 0.5,
        load: float = 1.0,
        ipadapter: bool = True,
        legacy_interrupt: bool = False,
    ):
        super().__init__()
        self.render_seconds, self.load_seconds = render, load
        self.nodes = {**CORE, **(IPADAPTER_PLUS if ipadapter else {})}
        self.legacy_interrupt = legacy_interrupt
        self.inputs: dict[str, bytes] = {}
        self.outputs: dict[str, bytes] = {}
        self.pending: list[Prompt] = []
        self.running: Prompt | None = None
        self.history: dict[str, Prompt] = {}
        self.loaded: set[str] = set()
        self.interrupted: list[str] = []  # the prompts an interrupt stopped
        self.deleted: list[str] = []  # the prompts taken out of the queue
        self.fail_next_execution: tuple[str, str] | None = None  # (exception type, message)
        self.made: dict[str, Image.Image] = {}  # each inpaint prompt's mask, as nodes read it
        self._numbers = itertools.count()
        self._files = itertools.count(1)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.route("POST", r"(?:/api)?/prompt", self.prompt)
        self.route("GET", r"(?:/api)?/history/(?P<id>[^/]+)", self.get_history)
        self.route("GET", r"(?:/api)?/queue", self.queue)
        self.route("POST", r"(?:/api)?/queue", self.edit_queue)
        self.route("POST", r"(?:/api)?/interrupt", self.interrupt)
        self.route("POST", r"(?:/api)?/upload/image", self.upload)
        self.route("GET", r"(?:/api)?/view", self.view)

    def start(self) -> ComfyUIStandIn:
        super().start()
        threading.Thread(target=self._execute, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        super().stop()

    # --- routes ---------------------------------------------------------------------

    def prompt(self, request: Request) -> Reply:
        body = request.json() or {}
        if "prompt" not in body:
            return Reply(
                400,
                {
                    "error": {
                        "type": "no_prompt",
                        "message": "No prompt provided",
                        "details": "",
                        "extra_info": {},
                    },
                    "node_errors": {},
                },
            )
        error, node_errors = validate(body["prompt"], self.nodes, set(self.inputs))
        if error is not None:
            return Reply(400, {"error": error, "node_errors": node_errors})
        queued = Prompt(
            str(uuid.uuid4()), next(self._numbers), body["prompt"], body.get("client_id", "")
        )
        with self.lock:
            self.pending.append(queued)
        self._wake.set()
        return Reply(200, {"prompt_id": queued.id, "number": queued.number, "node_errors": {}})

    def get_history(self, request: Request) -> Reply:
        done = self.history.get(request.match["id"])
        return Reply(200, {done.id: done.outcome} if done else {})

    def queue(self, request: Request) -> Reply:
        with self.lock:
            running = [self._item(self.running)] if self.running else []
            pending = [self._item(p) for p in self.pending]
        return Reply(200, {"queue_running": running, "queue_pending": pending})

    @staticmethod
    def _item(prompt: Prompt) -> list:
        return [prompt.number, prompt.id, prompt.workflow, {"client_id": prompt.client_id}, ["9"]]

    def edit_queue(self, request: Request) -> Reply:
        body = request.json() or {}
        with self.lock:
            if body.get("clear"):
                self.deleted += [p.id for p in self.pending]
                self.pending.clear()
            for prompt_id in body.get("delete") or []:
                for prompt in [p for p in self.pending if p.id == prompt_id]:
                    self.pending.remove(prompt)
                    self.deleted.append(prompt.id)
        return Reply(200, raw=b"", content_type="text/plain")

    def interrupt(self, request: Request) -> Reply:
        try:
            body = request.json() or {}
        except ValueError:
            body = {}
        with self.lock:
            running = self.running
            wanted = body.get("prompt_id") if isinstance(body, dict) else None
            if running is not None and (
                self.legacy_interrupt or not wanted or wanted == running.id
            ):
                running.interrupted = True
        return Reply(200, raw=b"", content_type="text/plain")

    def upload(self, request: Request) -> Reply:
        head = f"Content-Type: {request.headers.get('content-type', '')}\r\n\r\n".encode()
        message = BytesParser(policy=HTTP).parsebytes(head + request.body)
        if not message.is_multipart():
            return Reply(400, raw=b"", content_type="text/plain")
        fields, image, name = {}, None, ""
        for part in message.iter_parts():
            field_name = part.get_param("name", header="content-disposition")
            if field_name == "image" and part.get_filename():
                image, name = part.get_payload(decode=True), part.get_filename()
            else:
                fields[field_name] = part.get_payload(decode=True).decode()
        if image is None or not name or "/" in name or ".." in name:
            return Reply(400, raw=b"", content_type="text/plain")
        subfolder = fields.get("subfolder", "")
        path = f"{subfolder}/{name}" if subfolder else name
        if fields.get("overwrite") not in ("true", "1"):
            stem, _, ext = name.rpartition(".")
            n = 1
            while path in self.inputs and self.inputs[path] != image:
                name = f"{stem} ({n}).{ext}"
                path = f"{subfolder}/{name}" if subfolder else name
                n += 1
        self.inputs[path] = image
        return Reply(
            200, {"name": name, "subfolder": subfolder, "type": fields.get("type", "input")}
        )

    def view(self, request: Request) -> Reply:
        name = (request.query.get("filename") or [""])[0]
        subfolder = (request.query.get("subfolder") or [""])[0]
        kind = (request.query.get("type") or ["output"])[0]
        if not name or name.startswith("/") or ".." in name:
            return Reply(400, raw=b"", content_type="text/plain")
        store = self.outputs if kind == "output" else self.inputs
        data = store.get(f"{subfolder}/{name}" if subfolder else name)
        if data is None:
            return Reply(404, raw=b"", content_type="text/plain")
        return Reply(200, raw=data, content_type="image/png")

    # --- the executor --------------------------------------------------------------

    def _execute(self) -> None:
        while not self._stop.is_set():
            with self.lock:
                prompt = self.pending.pop(0) if self.pending else None
                self.running = prompt
            if prompt is None:
                self._wake.wait(0.05)
                self._wake.clear()
                continue
            prompt.started = time.monotonic()
            started_at = int(time.time() * 1000)
            messages = [["execution_start", {"prompt_id": prompt.id, "timestamp": started_at}]]
            checkpoints = {
                n["inputs"]["ckpt_name"]
                for n in prompt.workflow.values()
                if n["class_type"] == "CheckpointLoaderSimple"
            }
            seconds = self.render_seconds + self.load_seconds * len(checkpoints - self.loaded)
            self.loaded |= checkpoints
            until = prompt.started + seconds
            while time.monotonic() < until and not prompt.interrupted and not self._stop.is_set():
                time.sleep(0.01)
            failure, self.fail_next_execution = self.fail_next_execution, None
            outputs: dict = {}
            if prompt.interrupted:
                self.interrupted.append(prompt.id)
                messages.append(
                    [
                        "execution_interrupted",
                        {
                            "prompt_id": prompt.id,
                            "node_id": "3",
                            "node_type": "KSampler",
                            "executed": [],
                        },
                    ]
                )
                status = "error"
            elif failure is not None:
                messages.append(
                    [
                        "execution_error",
                        {
                            "prompt_id": prompt.id,
                            "node_id": "3",
                            "node_type": "KSampler",
                            "exception_type": failure[0],
                            "exception_message": failure[1],
                            "traceback": [],
                        },
                    ]
                )
                status = "error"
            else:
                picture, mask = executed(prompt.workflow, self.inputs)
                if mask is not None:
                    self.made[prompt.id] = mask
                for node_id, node in prompt.workflow.items():
                    if node["class_type"] == "SaveImage":
                        name = f"{node['inputs']['filename_prefix']}_{next(self._files):05d}_.png"
                        self.outputs[name] = picture
                        outputs[node_id] = {
                            "images": [{"filename": name, "subfolder": "", "type": "output"}]
                        }
                messages.append(["execution_success", {"prompt_id": prompt.id}])
                status = "success"
            prompt.outcome = {
                "prompt": self._item(prompt),
                "outputs": outputs,
                "status": {
                    "status_str": status,
                    "completed": status == "success",
                    "messages": messages,
                },
                "meta": {},
            }
            with self.lock:
                self.history[prompt.id] = prompt
                self.running = None
