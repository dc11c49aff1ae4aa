"""A stand-in for a RunPod serverless endpoint running runpod-workers/worker-comfyui,
written from RunPod's serverless docs (`/run`, `/status`, `/cancel`, `/health`;
IN_QUEUE, IN_PROGRESS, COMPLETED, FAILED, CANCELLED, TIMED_OUT; `delayTime` and
`executionTime` in milliseconds) and worker-comfyui's README and handler.py
(its input `{"workflow", "images": [{"name", "image"}]}`, each image uploaded
to its ComfyUI before the workflow is queued, an inpaint workflow run as the
ComfyUI stand-in runs it; its 5.x output
`{"images": [{"filename", "type": "base64", "data"}]}`, a workflow ComfyUI
refuses becoming the job's `error`).

A cold start shows only as time IN_QUEUE: the job waits for a worker of the
fleet, which boots `cold_boot` seconds if it was idle longer than `idle`.
"""

from __future__ import annotations

import base64
import time
import uuid
from dataclasses import dataclass
from typing import Any

from .base import FleetStandIn, Reply, Request
from .comfyui import CORE, IPADAPTER_PLUS, executed, validate


@dataclass
class Job:
    id: str
    input: Any
    submitted: float
    status: str = "IN_QUEUE"
    started: float | None = None
    finished: float | None = None
    output: Any = None
    error: str | None = None
    worker: int | None = None
    saved: float = 0.0


class RunPodStandIn(FleetStandIn):
    name = "runpod"

    def __init__(
        self,
        *,
        key: str = "rp_test",
        endpoint: str = "abc123",
        cold_boot: float = 4.0,
        render: float = 1.0,
        capacity: int = 2,
        idle: float = 5.0,
    ):
        super().__init__(cold_boot=cold_boot, render=render, capacity=capacity, idle=idle)
        self.key, self.endpoint = key, endpoint
        self.jobs: dict[str, Job] = {}
        self.nodes = {**CORE, **IPADAPTER_PLUS}
        self.made: dict[str, Any] = {}  # each inpaint job's mask, as ComfyUI's nodes read it
        prefix = r"/v2/(?P<endpoint>[^/]+)"
        self.route("POST", prefix + r"/run", self.run)
        self.route("GET", prefix + r"/status/(?P<id>[^/]+)", self.status)
        self.route("POST", prefix + r"/status/(?P<id>[^/]+)", self.status)
        self.route("POST", prefix + r"/cancel/(?P<id>[^/]+)", self.cancel)
        self.route("GET", prefix + r"/health", self.health)

    def authenticate(self, request: Request) -> Reply | None:
        given = request.headers.get("authorization", "")
        if given not in (self.key, f"Bearer {self.key}"):
            return Reply(401, {"error": "Unauthorized"})
        if not request.path.startswith(f"/v2/{self.endpoint}/"):
            return Reply(404, {"error": "endpoint not found"})
        return None

    def run(self, request: Request) -> Reply:
        body = request.json()
        if not isinstance(body, dict) or "input" not in body:
            return Reply(400, {"error": "input is required"})
        job = Job(id=f"{uuid.uuid4()}-u1", input=body["input"], submitted=time.monotonic())
        with self.lock:
            self.jobs[job.id] = job
        self.fleet.submit(job)
        return Reply(200, {"id": job.id, "status": "IN_QUEUE"})

    def status(self, request: Request) -> Reply:
        job = self.jobs.get(request.match["id"])
        if job is None:
            return Reply(404, {"error": "request does not exist"})
        return Reply(200, self.shown(job))

    def cancel(self, request: Request) -> Reply:
        job = self.jobs.get(request.match["id"])
        if job is None:
            return Reply(404, {"error": "request does not exist"})
        with self.fleet.lock:
            if job.status in ("IN_QUEUE", "IN_PROGRESS"):
                job.saved = self.fleet.cancel(job, render=self.render_seconds)
                job.status, job.finished = "CANCELLED", time.monotonic()
        return Reply(200, {"id": job.id, "status": job.status})

    def health(self, request: Request) -> Reply:
        with self.lock:
            queued = sum(j.status == "IN_QUEUE" for j in self.jobs.values())
            running = sum(j.status == "IN_PROGRESS" for j in self.jobs.values())
        return Reply(
            200,
            {
                "jobs": {"inQueue": queued, "inProgress": running},
                "workers": {"running": running, "idle": 0},
            },
        )

    def cancelled(self) -> list[Job]:
        with self.lock:
            return [j for j in self.jobs.values() if j.status == "CANCELLED"]

    def shown(self, job: Job) -> dict:
        now = time.monotonic()
        shown: dict[str, Any] = {"id": job.id, "status": job.status}
        if job.started is not None:
            shown["delayTime"] = int((job.started - job.submitted) * 1000)
            shown["executionTime"] = int(((job.finished or now) - job.started) * 1000)
            shown["workerId"] = f"worker-{job.worker}"
        if job.status == "COMPLETED":
            shown["output"] = job.output
        if job.status == "FAILED":
            shown["error"] = job.error
        return shown

    # --- the worker: worker-comfyui's handler, briefly ---------------------------------

    def start_job(self, job: Job, now: float) -> None:
        if job.status == "IN_QUEUE":
            job.status, job.started = "IN_PROGRESS", now

    def finish_job(self, job: Job, now: float) -> bool:
        if job.status != "IN_PROGRESS":
            return True
        if job.started is None or now - job.started < self.render_seconds:
            return False
        job.finished = now
        error = self._handle(job)
        if error:
            job.status, job.error = "FAILED", error
        else:
            job.status = "COMPLETED"
        return True

    def _handle(self, job: Job) -> str:
        given = job.input if isinstance(job.input, dict) else {}
        workflow, images = given.get("workflow"), given.get("images")
        if workflow is None:
            return "Missing 'workflow' parameter"
        if images is not None and (
            not isinstance(images, list) or not all("name" in i and "image" in i for i in images)
        ):
            return "'images' must be a list of objects with 'name' and 'image' keys"
        uploaded: dict[str, bytes] = {}
        for image in images or []:
            encoded = str(image["image"]).partition(",")[2] or str(image["image"])
            try:
                uploaded[image["name"]] = base64.b64decode(encoded, validate=True)
            except ValueError:
                return f"Failed to upload one or more input images: {image['name']}"
        error, node_errors = validate(workflow, self.nodes, set(uploaded))
        if error is not None:
            details = [
                f"Node {node_id} ({e['type']}): {e['details']}"
                for node_id, node in node_errors.items()
                for e in node["errors"]
            ]
            return f"Error queuing workflow: {error['message']}:\n" + "\n".join(details)
        png, mask = executed(workflow, uploaded)
        if mask is not None:
            self.made[job.id] = mask
        job.output = {
            "images": [
                {
                    "filename": "ComfyUI_00001_.png",
                    "type": "base64",
                    "data": base64.b64encode(png).decode(),
                }
            ]
        }
        return ""
