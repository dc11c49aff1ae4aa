"""Stand-ins for two OpenAI-compatible image servers and their traps, written from
their sources: LocalAI (core/http/endpoints/openai/image.go: generations with
`ref_images`, raw base64; no `/v1/images/edits` route) and stable-diffusion.cpp's
`sd-server` (examples/server/routes_openai.cpp and api.md: generations read only
`prompt`, `n`, `size`, `output_format` and an `<sd_cpp_extra_args>{…}` block in
the prompt, whose `ref_images` and `seed` follow the native schema; edits turn
every `image[]` into a reference and the first one into the init image).

Each records what it made of each request (`made`), so a test can see which
pictures became references and which the init image.

And OpenAI's own `/v1/images/edits` (openai-python's ImageEditParams and the API
reference): multipart `image` (or `image[]`, up to 16), `prompt`, an optional
`mask` whose fully transparent pixels are edited (a PNG with an alpha channel,
of the first image's size; it applies to the first image), `model`, `n`,
`size`, `quality`, `background`, `output_format`…; an unknown parameter (a
`seed`; `response_format` for a GPT image model) is a 400 as OpenAI answers
it. The answer is `b64_json`: the first image redrawn where the mask is
transparent, drifted elsewhere.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import time
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP

from PIL import Image, UnidentifiedImageError

from .base import Reply, Request, StandIn, draw, inpaint, multipart

EXTRA = re.compile(r"<sd_cpp_extra_args>(.*?)</sd_cpp_extra_args>", re.S)


def answer(prompt: str, seed: int) -> Reply:
    return pictures(draw(prompt, seed, 128, 96))


def pictures(png: bytes) -> Reply:
    """An images endpoint's answer: one picture, as `b64_json`."""
    return Reply(200, {"created": 0, "data": [{"b64_json": base64.b64encode(png).decode()}]})


def raw_base64(value: object) -> bytes | None:
    """The bytes of raw base64 (no data URL), or None."""
    try:
        return base64.b64decode(str(value), validate=True)
    except (ValueError, binascii.Error):
        return None


class LocalAIStandIn(StandIn):
    name = "localai"

    def __init__(self) -> None:
        super().__init__()
        self.made: list[dict] = []
        self.route("POST", r"/v1/images/generations", self.generations)

    def generations(self, request: Request) -> Reply:
        body = request.json() or {}
        references = []
        for value in body.get("ref_images") or []:
            decoded = raw_base64(value)
            if decoded is None:  # a data URL is not base64: LocalAI's decode fails
                return Reply(
                    500, {"error": {"code": 500, "message": "illegal base64 data", "type": ""}}
                )
            references.append(decoded)
        self.made.append({"prompt": body.get("prompt"), "ref_images": references})
        return answer(str(body.get("prompt")), int(body.get("seed") or 0))


class SdCppStandIn(StandIn):
    name = "sdcpp"

    def __init__(self) -> None:
        super().__init__()
        self.made: list[dict] = []
        self.route("POST", r"/v1/images/generations", self.generations)
        self.route("POST", r"/v1/images/edits", self.edits)

    def generations(self, request: Request) -> Reply:
        body = request.json() or {}
        prompt = str(body.get("prompt", ""))
        extra = {}
        match = EXTRA.search(prompt)
        if match:
            try:
                extra = json.loads(match.group(1))
            except ValueError:
                return Reply(400, {"error": "invalid sd_cpp_extra_args"})
            prompt = EXTRA.sub("", prompt)
        references = [raw_base64(v.partition(",")[2] or v) for v in extra.get("ref_images", [])]
        if any(r is None for r in references):
            return Reply(400, {"error": "invalid params"})
        made = {"prompt": prompt, "ref_images": references, "init_image": None}
        made["seed"] = extra.get("seed", -1)
        self.made.append(made)
        return answer(prompt, int(made["seed"]))

    def edits(self, request: Request) -> Reply:
        head = f"Content-Type: {request.headers.get('content-type', '')}\r\n\r\n".encode()
        message = BytesParser(policy=HTTP).parsebytes(head + request.body)
        fields, images = {}, []
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if name in ("image[]", "image"):
                images.append(part.get_payload(decode=True))
            else:
                fields[name] = part.get_payload(decode=True).decode()
        if not images:
            return Reply(400, {"error": "at least one image[] required"})
        # The trap: every image a reference, and the first one the init image too.
        self.made.append(
            {"prompt": fields.get("prompt"), "ref_images": images, "init_image": images[0]}
        )
        return answer(str(fields.get("prompt")), 0)


# GPT image models' sizes and qualities (the images API reference).
GPT_SIZES = {"1024x1024", "1536x1024", "1024x1536", "auto"}
GPT_QUALITIES = {"low", "medium", "high", "auto"}
EDIT_FIELDS = {
    "model",
    "prompt",
    "n",
    "size",
    "quality",
    "background",
    "input_fidelity",
    "output_format",
    "output_compression",
    "partial_images",
    "stream",
    "user",
    "response_format",
}


def invalid(
    message: str, param: str | None = None, code: str | None = None, *, status: int = 400
) -> Reply:
    """An error as OpenAI's API answers a request it refuses."""
    return Reply(
        status,
        {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": code,
            }
        },
    )


def key_refused(request: Request, key: str) -> Reply | None:
    """The 401 OpenAI answers a request without `key` as its bearer token; None with it."""
    if request.headers.get("authorization") != f"Bearer {key}":
        return invalid("Incorrect API key provided.", code="invalid_api_key", status=401)
    return None


class OpenAIStandIn(StandIn):
    name = "openai"

    def __init__(self, *, key: str = "sk-test") -> None:
        super().__init__()
        self.key = key
        self.made: list[dict] = []  # each edit: its fields, its images and the region
        self.generated: list[dict] = []  # each generation's body
        self.route("POST", r"/v1/images/edits", self.edits)
        self.route("POST", r"/v1/images/generations", self.generations)

    def authenticate(self, request: Request) -> Reply | None:
        return key_refused(request, self.key)

    def generations(self, request: Request) -> Reply:
        body = request.json() or {}
        model = str(body.get("model", "gpt-image-1"))
        if not model.startswith("dall-e"):
            if body.get("quality", "auto") not in GPT_QUALITIES:
                return invalid(f"Invalid value: '{body['quality']}'.", "quality")
            if body.get("size", "auto") not in GPT_SIZES:
                return invalid(f"Invalid value: '{body['size']}'.", "size")
        self.generated.append(body)
        return answer(str(body.get("prompt")), 0)

    def edits(self, request: Request) -> Reply:
        try:
            fields, files = multipart(request)
        except ValueError:
            return invalid(
                "Invalid Content-Type header (application/json), expected multipart/form-data."
            )
        for name in fields:
            if name not in EDIT_FIELDS:
                return invalid(f"Unknown parameter: '{name}'.", name, "unknown_parameter")
        model = fields.get("model", "gpt-image-1")
        if "response_format" in fields and not model.startswith("dall-e"):
            return invalid("Unknown parameter: 'response_format'.", "response_format")
        if not fields.get("prompt"):
            return invalid("Missing required parameter: 'prompt'.", "prompt")
        given = files.get("image", []) + files.get("image[]", [])
        if not given:
            return invalid("Missing required parameter: 'image'.", "image")
        try:
            images = [_picture(data) for _, data in given]
        except ValueError:
            return invalid("Invalid image file or mode for image 1.", "image")
        first = images[0]
        mask = None
        if "mask" in files:
            try:
                mask = _picture(files["mask"][0][1], png=True)
            except ValueError:
                return invalid("Invalid mask image: it must be a PNG file.", "mask")
            if "A" not in mask.getbands():
                return invalid(
                    "Invalid mask image format - mask image missing alpha channel", "mask"
                )
            if mask.size != first.size:
                return invalid(
                    "Invalid mask image format - mask size does not match image size", "mask"
                )
        # The fully transparent pixels are edited; without a mask, all of the picture.
        region = (
            mask.getchannel("A").point(lambda v: 255 if v == 0 else 0)
            if mask is not None
            else Image.new("L", first.size, 255)
        )
        self.made.append({"fields": fields, "images": [data for _, data in given], "mask": region})
        buffer = io.BytesIO()
        first.convert("RGB").save(buffer, format="PNG")
        return pictures(inpaint(buffer.getvalue(), region, fields["prompt"], 0))


def _picture(data: bytes, *, png: bool = False) -> Image.Image:
    try:
        with Image.open(io.BytesIO(data)) as image:
            if png and image.format != "PNG":
                raise ValueError("not a PNG")
            image.load()
            return image.copy()
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError("not a picture") from exc


# --- Chat completions with pictures (the judge's provider) --------------------------------

DATA_URL = re.compile(r"data:image/(png|jpeg|gif|webp);base64,(.*)\Z", re.S)
ROLES = {"system", "developer", "user", "assistant"}


class ChatStandIn(StandIn):
    """OpenAI's `POST /v1/chat/completions` as a vision model takes it (the API reference:
    `messages[].content` text or an array of parts, `{"type": "text", "text"}` and
    `{"type": "image_url", "image_url": {"url", "detail"?}}`, where `url` is an
    http(s) URL or a `data:image/{png,jpeg,gif,webp};base64,…` URL; images only in
    `user` messages; JSON mode (`response_format` `json_object`) refused unless the
    messages say "JSON"). Errors as OpenAI answers them.

    Told what to answer: `scores` (one per request, in order; then `score`), each
    as `{"score", "characters", "reason"}` in the message's content; or `contents`, raw
    contents to answer first (nonsense, say); `delay` seconds before each answer.
    `made` records each request as the model saw it: its texts and its pictures
    (decoded bytes)."""

    name = "chat"

    def __init__(self, *, key: str = "sk-judge", score: float = 0.9) -> None:
        super().__init__()
        self.key = key
        self.score = score
        self.scores: list[float] = []
        self.characters: dict[str, float] = {}
        self.contents: list[str] = []
        self.delay = 0.0
        self.on_ask: Callable[[], None] | None = None  # called at each request (a test's hook)
        self.made: list[dict] = []
        self.route("POST", r"/v1/chat/completions", self.completions)

    def environment(self) -> dict[str, str]:
        """The settings that point the judge here."""
        return {
            "JUDGE": "openai",
            "JUDGE_BASE_URL": f"{self.url}/v1",
            "JUDGE_API_KEY": self.key,
            "JUDGE_MODEL": "gpt-4o-mini",
        }

    def authenticate(self, request: Request) -> Reply | None:
        return key_refused(request, self.key)

    def completions(self, request: Request) -> Reply:
        try:
            body = request.json()
        except ValueError:
            return invalid("We could not parse the JSON body of your request.")
        if not isinstance(body, dict) or not body.get("model"):
            return invalid("you must provide a model parameter", "model")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return invalid("[] is too short - 'messages'", "messages")
        texts: list[str] = []
        images: list[bytes] = []
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") not in ROLES:
                return invalid(f"Invalid value for 'messages[{i}].role'.", f"messages[{i}].role")
            content = message.get("content")
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if not isinstance(parts, list):
                return invalid(f"Invalid type for 'messages[{i}].content'.", f"messages[{i}]")
            for j, part in enumerate(parts):
                where = f"messages[{i}].content[{j}]"
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text" and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif kind == "image_url":
                    if message["role"] != "user":
                        return invalid(
                            "Image URLs are only allowed for messages with role 'user', "
                            f"but this message with role '{message['role']}' contains an "
                            "image URL.",
                            where,
                        )
                    picture = self._picture(part.get("image_url"))
                    if picture is None:
                        return invalid(
                            "Invalid image URL: expected a URL or a base64 data URL of a "
                            "PNG, JPEG, GIF or WebP image.",
                            where,
                            "invalid_image_url",
                        )
                    images.append(picture)
                else:
                    return invalid(f"Invalid content part at '{where}'.", where)
        if (body.get("response_format") or {}).get("type") == "json_object" and not any(
            "json" in t.lower() for t in texts
        ):
            return invalid(
                "'messages' must contain the word 'json' in some form, to use "
                "'response_format' of type 'json_object'.",
                "messages",
            )
        with self.lock:
            self.made.append({"model": body["model"], "texts": texts, "images": images})
            if self.contents:
                content = self.contents.pop(0)
            else:
                score = self.scores.pop(0) if self.scores else self.score
                content = json.dumps(
                    {
                        "score": score,
                        "characters": dict(self.characters),
                        "reason": f"scored {score}",
                    }
                )
        if self.on_ask is not None:
            self.on_ask()
        if self.delay:
            time.sleep(self.delay)
        return Reply(
            200,
            {
                "id": f"chatcmpl-{len(self.made)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            },
        )

    @staticmethod
    def _picture(value: object) -> bytes | None:
        """The picture an `image_url` part carries (a data URL's bytes, checked to be
        an image of its type), or None when OpenAI would refuse it."""
        if not isinstance(value, dict) or not isinstance(value.get("url"), str):
            return None
        if value.get("detail", "auto") not in ("auto", "low", "high"):
            return None
        match = DATA_URL.match(value["url"])
        if match is None:
            return None
        data = raw_base64(match.group(2))
        if data is None:
            return None
        try:
            with Image.open(io.BytesIO(data)) as image:
                image.verify()
                kind = (image.format or "").lower()
        except (UnidentifiedImageError, OSError):
            return None
        return data if kind == match.group(1) else None
