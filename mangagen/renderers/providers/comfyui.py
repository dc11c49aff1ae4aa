"""ComfyUI (`RENDERER=comfyui`), by polling alone (its websocket is not needed).

Submit: each reference picture is uploaded (`POST /upload/image`, multipart
`image`, named by its content so a sheet is uploaded once however often it is
used), then `POST /prompt {"prompt": <workflow>, "client_id"}` with the
workflow filled: `COMFYUI_WORKFLOW` (or the shipped SDXL one) for a panel
without references, `COMFYUI_REFERENCE_WORKFLOW` (or the shipped SDXL +
IP-Adapter one) for a panel with. A 400 with `node_errors` (a model that is
not there, a node that does not exist) fails the render at once.
Poll: `GET /history/{prompt_id}` is `{}` until the prompt ran; meanwhile
`GET /queue` says whether it waits (`queue_pending`) or runs
(`queue_running`). Done: its output node's first image, through
`GET /view?filename=&subfolder=&type=`; an `execution_error` fails it.
Withdraw: a prompt still waiting is deleted from the queue
(`POST /queue {"delete": [id]}`); the running one is interrupted with
`POST /interrupt {"prompt_id"}` only after `/queue` says it is the one
running (a ComfyUI too old to read the body would otherwise interrupt
someone else's).

Touch-ups: the picture and the mask (greyscale, white = redraw) are uploaded
the same way and `COMFYUI_INPAINT_WORKFLOW` (or the shipped SDXL inpainting
one) is queued with `{{image}}` and `{{mask}}` their uploaded names (what
LoadImage and LoadImageMask take); its reference slots, if any, as a panel's.

Roughs: `COMFYUI_ROUGH_WORKFLOW` (or the shipped SDXL Turbo one: one step at CFG 1), at a
rough's size, without references. A final from its rough: the rough uploaded the same
way and `COMFYUI_FROM_ROUGH_WORKFLOW` (or the shipped SDXL img2img one, denoise 0.55)
queued with `{{rough}}` its uploaded name.

`{{reference_N}}` is the uploaded file's name (what a LoadImage node takes);
a workflow's reference slots beyond the panel's references load the first
one at `{{reference_N_weight}}` 0.

Uploads stay on the ComfyUI server: its API has no way to delete a file from
its input folder (only an extension could), so a sheet sent there is the
provider's to keep, named `mangagen-<hash>.png`, however the comic it came from
is deleted. An operator who must not leave them there cleans that folder on the
ComfyUI host, or sets COMFYUI_UPLOAD_REFERENCES=off: then nothing is uploaded,
and every panel is drawn from its description alone (`max_references` 0).
"""

from __future__ import annotations

import hashlib
import uuid
from urllib.parse import urlencode

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
from ..templates import SLOTS, fill, references_in
from ..workflows import FROM_ROUGH, INPAINT, ROUGH, checkpoint_of, shipped


class ComfyUIAdapter:
    name = "comfyui"
    resumable = True
    can_touch_up = True  # through the inpaint workflow

    def __init__(
        self,
        *,
        base_url: str,
        workflow: dict,
        reference_workflow: dict,
        model: str,
        intake: Intake,
        inpaint_workflow: dict | None = None,
        upload_references: bool = True,
        rough_workflow: dict | None = None,
        from_rough_workflow: dict | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.workflow = workflow
        self.reference_workflow = reference_workflow
        self.inpaint_workflow = inpaint_workflow or shipped(INPAINT)
        self.rough_workflow = rough_workflow or shipped(ROUGH)
        self.from_rough_workflow = from_rough_workflow or shipped(FROM_ROUGH)
        self.model = model
        self.draft_model = checkpoint_of(self.rough_workflow) or f"{model} (rough)"
        self.intake = intake
        # No uploads, no references: the provider layer then sends none (see above).
        self.max_references = (
            min(SLOTS, references_in(reference_workflow)) if upload_references else 0
        )
        self.client_id = uuid.uuid4().hex

    def submit(self, request: RenderRequest, call: Call) -> Submission:
        if request.touch_up:
            return self._queue(self._touch_up(request, call), call)
        if request.draft:
            return self._queue(fill(self.rough_workflow, request.values()), call)
        if request.from_rough:
            rough = self._upload(request.rough, call)
            return self._queue(fill(self.from_rough_workflow, request.values(rough=rough)), call)
        names = [self._upload(r.image, call) for r in request.references]
        values = request.values(names)
        for i in range(len(names) + 1, SLOTS + 1):
            values[f"reference_{i}"] = names[0] if names else ""
        return self._queue(fill(self.reference_workflow if names else self.workflow, values), call)

    def _touch_up(self, request: RenderRequest, call: Call) -> dict:
        """The inpaint workflow filled: the picture and the mask (white = redraw, what
        LoadImageMask's red channel reads) uploaded, and the references its slots take."""
        image = self._upload(request.image, call)
        mask = self._upload(
            provider_mask(request.mask, Polarity.WHITE, width=request.width, height=request.height),
            call,
        )
        slots = min(SLOTS, references_in(self.inpaint_workflow))
        names = [self._upload(r.image, call) for r in request.references[:slots]]
        values = request.values(names, image=image, mask=mask)
        # A LoadImage node must name a file that is there: empty slots load one, at weight 0.
        for i in range(len(names) + 1, SLOTS + 1):
            values[f"reference_{i}"] = names[0] if names else image
        return fill(self.inpaint_workflow, values)

    def _queue(self, workflow: dict, call: Call) -> Submission:
        """A filled workflow queued (a panel's, a touch-up's, a rough's or a
        final-from-rough's)."""
        queued = call("POST", "/prompt", json={"prompt": workflow, "client_id": self.client_id})
        body = queued.body if isinstance(queued.body, dict) else {}
        if not body.get("prompt_id"):
            raise RenderError(f"ComfyUI queued no prompt: {queued.body!r}"[:300], retryable=True)
        return Submission(id=str(body["prompt_id"]))

    def _upload(self, image: bytes, call: Call) -> str:
        name = f"mangagen-{hashlib.sha256(image).hexdigest()[:24]}.png"
        uploaded = call(
            "POST",
            "/upload/image",
            files={"image": (name, image, "image/png")},
            data={"overwrite": "true", "type": "input"},
        )
        body = uploaded.body if isinstance(uploaded.body, dict) else {}
        if not body.get("name"):
            raise RenderError(f"ComfyUI did not take the upload: {uploaded.body!r}", retryable=True)
        subfolder = body.get("subfolder") or ""
        return f"{subfolder}/{body['name']}" if subfolder else str(body["name"])

    def poll(self, submission: Submission, call: Call) -> Status:
        history = call("GET", f"/history/{submission.id}").body
        entry = history.get(submission.id) if isinstance(history, dict) else None
        if isinstance(entry, dict):
            return self._finished(entry)
        queue = call("GET", "/queue").body or {}
        if submission.id in _ids(queue.get("queue_pending")):
            return Status(state=ProviderState.QUEUED)
        return Status(state=ProviderState.RENDERING)

    @staticmethod
    def _finished(entry: dict) -> Status:
        status = entry.get("status") or {}
        messages = {m[0]: m[1] for m in status.get("messages") or [] if len(m) == 2}
        if "execution_interrupted" in messages:
            return Status(cancelled=True)
        if status.get("status_str") == "error" or "execution_error" in messages:
            error = messages.get("execution_error") or {}
            kind = str(error.get("exception_type", ""))
            return Status(
                failed=f"{error.get('node_type', 'a node')}: "
                f"{error.get('exception_message', 'execution error')}".strip(),
                retryable="OutOfMemory" in kind,  # the GPU was full then; it may not be later
            )
        return Status(done=True, output=entry.get("outputs") or {})

    def fetch(self, submission: Submission, status: Status, call: Call) -> Picture:
        images = [
            image
            for node in (status.output or {}).values()
            if isinstance(node, dict)
            for image in node.get("images") or []
            if isinstance(image, dict) and image.get("filename")
        ]
        if not images:
            raise RenderError("ComfyUI's prompt finished with no image.", retryable=False)
        first = next((i for i in images if i.get("type") == "output"), images[0])
        query = urlencode(
            {
                "filename": first["filename"],
                "subfolder": first.get("subfolder", ""),
                "type": first.get("type", "output"),
            }
        )
        return self.intake.fetch(f"{self.base_url}/view?{query}")

    def cancel(self, submission: Submission, status: Status | None, call: Call) -> bool:
        queue = call("GET", "/queue").body or {}
        if submission.id in _ids(queue.get("queue_pending")):
            call("POST", "/queue", json={"delete": [submission.id]})
            return True
        if submission.id in _ids(queue.get("queue_running")):
            call("POST", "/interrupt", json={"prompt_id": submission.id})
            return True
        return False


def _ids(items: object) -> set[str]:
    """The prompt ids of /queue's items: `[number, prompt_id, prompt, extra, outputs]`."""
    if not isinstance(items, list):
        return set()
    return {str(item[1]) for item in items if isinstance(item, list) and len(item) > 1}


def build() -> RemoteRenderer:
    """A ComfyUI server through the provider layer: its workflows, shipped or the
    operator's (COMFYUI_* settings)."""
    from .. import workflows

    plain = workflows.load(settings.COMFYUI_WORKFLOW or workflows.shipped_path(workflows.TXT2IMG))
    references = workflows.load(
        settings.COMFYUI_REFERENCE_WORKFLOW or workflows.shipped_path(workflows.REFERENCES)
    )
    adapter = ComfyUIAdapter(
        base_url=settings.COMFYUI_BASE_URL,
        workflow=plain,
        reference_workflow=references,
        model=workflows.checkpoint_of(plain) or settings.COMFYUI_WORKFLOW,
        intake=intake(settings.COMFYUI_BASE_URL),
        inpaint_workflow=inpaint_workflow(),
        upload_references=settings.COMFYUI_UPLOAD_REFERENCES,
        rough_workflow=rough_workflow(),
        from_rough_workflow=from_rough_workflow(),
    )
    return remote(adapter, provider_http("ComfyUI", settings.COMFYUI_BASE_URL))


register(RendererName.COMFYUI, verbs=Verb, build=build)
