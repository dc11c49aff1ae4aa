"""Stand-ins for two OpenAI-compatible image servers and their traps, written from
their sources: LocalAI (core/http/endpoints/openai/image.go: generations with
`ref_images`, raw base64; no `/v1/images/edits` route) and stable-diffusion.cpp's
`sd-server` (examples/server/routes_openai.cpp and api.md: generations read only
`prompt`, `n`, `size`, `output_format` and an `<sd_cpp_extra_args>{…}` block in
the prompt, whose `ref_images` and `seed` follow the native schema; edits turn
every `image[]` into a reference and the first one into the init image).

Each records what it made of each request (`made`), so a test can see which
pictures became references and which the init image.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from email.parser import BytesParser
from email.policy import HTTP

from .base import Reply, Request, StandIn, draw

EXTRA = re.compile(r"<sd_cpp_extra_args>(.*?)</sd_cpp_extra_args>", re.S)


def answer(prompt: str, seed: int) -> Reply:
    png = draw(prompt, seed, 128, 96)
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
