"""The provider layer: a remote render's whole life, the same for every adapter.

An adapter (Replicate, RunPod, ComfyUI, AUTOMATIC1111) only says how its
provider speaks: `submit` a request, `poll` it, `fetch` the picture, `cancel`
it. `RemoteRenderer` owns everything else:

- capacity: a slot of the GPU pool (GPU_POOL_SIZE requests in flight at the
  provider, confirmed work first) for the whole render;
- waiting: polls every `poll_seconds`, beats (`while_waiting`), tells
  `on_state` each change (queued at the provider, booting, rendering, the
  provider not answering) and gives up past `deadline_seconds` (cancelling);
- a second life: a render sent again after its worker died follows the
  render it had submitted (kept in Redis by ticket) rather than paying for
  another, where the adapter allows it (`resumable`);
- withdrawal: every wait watches the render's ticket; withdrawn (its job
  ended: the person left, cancelled, a newer speculation replaced it), the
  render is cancelled at the provider at once and Withdrawn is raised with
  `cancelled_at_provider` and what the phases took by then. Any other way
  out before the picture is in (a failure, the task's time limit) cancels
  there too: nobody will see that render, so nobody should pay for it;
- the picture: through the adapter's Intake (hosts, size, format, re-encoded);
- the phases: `metadata["phases"]` = queued (the pool's wait, plus the
  provider's when it queues explicitly or only briefly), cold_start (a
  provider's wait for a worker, Replicate's `starting` or RunPod's
  `IN_QUEUE`, once it lasts `BOOT_MIN_SECONDS`: Replicate's own docs put a
  worker's boot behind a `starting` that lasts more than a few seconds) and
  render (running). Times the provider reports itself (RunPod's `delayTime`
  and `executionTime`, Replicate's timestamps) are preferred to our polls'.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import redis

from .base import (
    FromRoughSpec,
    OnState,
    PanelSpec,
    ProviderState,
    Renderer,
    RenderError,
    RenderResult,
    SheetSpec,
    StateChange,
    TouchUpSpec,
    Waiting,
)
from .gpu_pool import GpuPool, Priority, Slot, Withdrawn
from .intake import Picture
from .provider_http import Answer, ProviderHTTP
from .render_request import (
    RenderRequest,
    from_rough_request,
    panel_request,
    rough_request,
    shaped,
    sheet_request,
    touchup_request,
)

logger = logging.getLogger(__name__)

BOOT_MIN_SECONDS = 1.0


@dataclass(frozen=True)
class Submission:
    """A render the provider accepted: its id there, and what the adapter keeps of it."""

    id: str
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Status:
    """One look at a submitted render. `state` while it runs; then `done` (with
    `output` for `fetch`), `failed` (the provider's message), or `cancelled` (by the
    provider or someone else). `waited` and `ran` are the seconds the provider itself
    reports it waited and ran, when it does."""

    state: ProviderState = ProviderState.STARTING
    done: bool = False
    failed: str = ""
    retryable: bool = False
    cancelled: bool = False
    output: Any = None
    waited: float | None = None
    ran: float | None = None


class Call(Protocol):
    def __call__(self, method: str, path: str, **body: Any) -> Answer: ...


class Adapter(Protocol):
    """How one provider speaks. `call` sends HTTP with the render's retry and
    withdrawal rules; each method raises RenderError when the provider refuses.
    `resumable`: a submission is known by its id alone, so a render sent again after
    its worker died can follow the one already at the provider. An adapter that can
    redraw a region says `can_touch_up = True`; its `submit` then sends a request whose
    `mask` is set (a touch-up) to the provider's inpaint API, the mask converted to the
    provider's polarity there (mangagen/renderers/masks.py `provider_mask`)."""

    name: str
    model: str
    max_references: int
    resumable: bool

    def submit(self, request: RenderRequest, call: Call) -> Submission: ...

    def poll(self, submission: Submission, call: Call) -> Status: ...

    def fetch(self, submission: Submission, status: Status, call: Call) -> Picture: ...

    def cancel(self, submission: Submission, status: Status | None, call: Call) -> bool:
        """Stops the render at the provider; True if it did (False: already finished,
        or not this provider's to stop: another render is the one running)."""
        ...


class Watch:
    """One render's waits: sliced, beating, and raising Withdrawn as soon as its ticket
    is withdrawn."""

    def __init__(
        self,
        pool: GpuPool | None,
        ticket: str,
        while_waiting: Callable[[], None] | None,
        check_seconds: float,
    ):
        self.pool, self.ticket = pool, ticket
        self.while_waiting = while_waiting
        self.check_seconds = check_seconds
        self._beat = time.monotonic()

    def check(self) -> None:
        if self.pool is None:
            return
        try:
            gone = self.pool.withdrawn(self.ticket)
        except redis.RedisError:
            gone = False  # Redis away: no verdict; the render goes on
        if gone:
            raise Withdrawn(self.ticket)

    def pause(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        while True:
            self.check()
            if self.while_waiting is not None and time.monotonic() - self._beat >= 1:
                self._beat = time.monotonic()
                self.while_waiting()
            left = until - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, self.check_seconds))


class Reporter:
    """Tells `on_state` each change of state once; a failing listener never fails the
    render (the job page is told, or not: the render goes on)."""

    def __init__(self, on_state: OnState | None):
        self.on_state = on_state
        self.last: tuple | None = None

    def __call__(self, change: StateChange) -> None:
        key = (change.state, change.detail if change.retry_in is not None else "")
        if self.on_state is None or key == self.last:
            return
        self.last = key
        try:
            self.on_state(change)
        except Exception:
            logger.warning("Could not report a render's state %s", change.state, exc_info=True)


class PhaseClock:
    """What a submitted render's phases took (see the module's docstring)."""

    def __init__(self) -> None:
        self.submitted = time.monotonic()
        self.running_since: float | None = None
        self.finished: float | None = None
        self.queued_there = False
        self.waited: float | None = None
        self.ran: float | None = None
        self.state = ProviderState.STARTING

    def see(self, status: Status) -> ProviderState:
        now = time.monotonic()
        if status.state == ProviderState.QUEUED:
            self.queued_there = True
        if status.state == ProviderState.RENDERING and self.running_since is None:
            self.running_since = now
        if status.done or status.failed or status.cancelled:
            self.finished = now
            self.running_since = self.running_since or now
        if status.waited is not None:
            self.waited = status.waited
        if status.ran is not None:
            self.ran = status.ran
        state = status.state
        if state == ProviderState.STARTING and now - self.submitted >= BOOT_MIN_SECONDS:
            state = ProviderState.BOOTING
        self.state = state
        return state

    def phases(self, queued: float) -> dict[str, float]:
        now = time.monotonic()
        waited = self.waited
        if waited is None:
            waited = (self.running_since or now) - self.submitted
        ran = self.ran
        if ran is None:
            ran = (self.finished or now) - self.running_since if self.running_since else 0.0
        cold = 0.0
        if not self.queued_there and waited >= BOOT_MIN_SECONDS:
            cold, waited = waited, 0.0
        return {
            "queued": round(queued + waited, 3),
            "cold_start": round(cold, 3),
            "render": round(max(0.0, ran), 3),
        }


class RemoteRenderer(Renderer):
    """A renderer whose pictures are drawn by a remote provider, through `adapter`."""

    def __init__(
        self,
        *,
        adapter: Adapter,
        http: ProviderHTTP,
        pool: GpuPool | None,
        width: int,
        height: int,
        poll_seconds: float = 0.5,
        deadline_seconds: float = 240.0,
        check_seconds: float = 0.1,
    ):
        self.adapter = adapter
        self.http = http
        self.pool = pool
        self.name = adapter.name
        self.model = adapter.model
        self.width, self.height = width, height
        self.poll_seconds = poll_seconds
        self.deadline_seconds = deadline_seconds
        self.check_seconds = check_seconds

    def panel_work(self, spec: PanelSpec, seed: int) -> RenderRequest:
        """A panel at its cell's shape (`spec.aspect`), about the provider's pixels."""
        width, height = shaped(spec.aspect, self.width, self.height)
        return panel_request(
            spec, seed, width=width, height=height, max_references=self.adapter.max_references
        )

    def rough_work(self, spec: PanelSpec, seed: int) -> RenderRequest:
        """A rough, for the adapter's draft model or workflow (`draft`)."""
        return rough_request(spec, seed, width=self.width, height=self.height)

    def from_rough_work(self, spec: FromRoughSpec, seed: int) -> RenderRequest:
        """A final with its rough (`rough`), which the adapter sends as its provider
        takes it, or leaves out where it takes none (the seed is still the rough's)."""
        return from_rough_request(
            spec,
            seed,
            width=self.width,
            height=self.height,
            max_references=self.adapter.max_references,
        )

    def sheet_work(self, spec: SheetSpec, seed: int) -> RenderRequest:
        return sheet_request(spec, seed, width=self.width, height=self.height)

    @property
    def can_touch_up(self) -> bool:  # type: ignore[override]
        """Whether the adapter can redraw a region (it says so with `can_touch_up`, and
        its `submit` sends a request with a `mask` to the provider's inpaint API)."""
        return bool(getattr(self.adapter, "can_touch_up", False))

    def touchup_work(self, spec: TouchUpSpec, seed: int) -> RenderRequest:
        return touchup_request(
            spec,
            seed,
            width=self.width,
            height=self.height,
            max_references=self.adapter.max_references,
        )

    def perform(self, work: RenderRequest, waiting: Waiting) -> RenderResult:
        """One render's life at the provider: a slot, submit, poll, fetch, and cancel on
        any way out before the picture is in. Raises RenderError, or Withdrawn."""
        request = work
        ticket = waiting.ticket or f"anonymous:{uuid.uuid4()}"
        watch = Watch(self.pool, ticket, waiting.while_waiting, self.check_seconds)
        report = Reporter(waiting.on_state)
        started = time.monotonic()
        with self._slot(ticket, Priority(waiting.priority), waiting.while_waiting) as slot:
            queued = slot.queued_seconds if slot is not None else 0.0

            def call(method: str, path: str, **body: Any) -> Answer:
                return self.http.call(method, path, pause=watch.pause, on_state=report, **body)

            watch.check()  # withdrawn while it waited for a slot: nothing reached the provider
            submission = self._resumed(ticket)
            if submission is None:
                submission = self.adapter.submit(request, call)
                self._remember(ticket, submission)
            try:
                picture, clock = self._follow(submission, call, watch, report, queued)
            finally:
                self._forget(ticket)
        phases = clock.phases(queued)
        return picture.result(
            renderer=self.name,
            seconds=time.monotonic() - started,
            cold=phases["cold_start"] > 0,
            metadata={
                "phases": phases,
                "provider": self.name,
                # A rough's timings are learned apart from the finals': its draft model's.
                "model": getattr(self.adapter, "draft_model", "") or self.model
                if request.draft
                else self.model,
                "from_rough": request.from_rough,
                "submission": submission.id,
                "seed": request.seed,
                "prompt": request.prompt,
                "references": [r.name for r in request.references],
            },
        )

    def _follow(
        self, submission: Submission, call: Call, watch: Watch, report: Reporter, queued: float
    ) -> tuple[Picture, PhaseClock]:
        """Polls a submitted render to its end and fetches its picture; on any other
        way out, cancels it at the provider."""
        clock = PhaseClock()
        status: Status | None = None
        try:
            while True:
                status = self.adapter.poll(submission, call)
                state = clock.see(status)
                if status.done:
                    break
                if status.failed:
                    raise RenderError(
                        f"{self.http.name} failed the render: {status.failed}",
                        retryable=status.retryable,
                    )
                if status.cancelled:
                    raise RenderError(
                        f"{self.http.name} cancelled the render by itself.", retryable=True
                    )
                report(StateChange(state))
                if time.monotonic() - clock.submitted > self.deadline_seconds:
                    seconds = f"{self.deadline_seconds:.0f} s"
                    raise RenderError(
                        f"{self.http.name} did not finish the render in {seconds}.",
                        retryable=True,
                    )
                watch.pause(self.poll_seconds)
            return self.adapter.fetch(submission, status, call), clock
        except Withdrawn as exc:
            cancelled = self._cancel(submission, status)
            raise Withdrawn(
                exc.ticket,
                cancelled_at_provider=cancelled,
                phases=clock.phases(queued),
                state=str(clock.state),
            ) from exc
        except BaseException:
            self._cancel(submission, status)
            raise

    def _cancel(self, submission: Submission, status: Status | None) -> bool:
        """Best effort, once: a render nobody will see is stopped at the provider."""
        if status is not None and (status.done or status.failed or status.cancelled):
            return False

        def call(method: str, path: str, **body: Any) -> Answer:
            return self.http.call(method, path, retries=1, pause=time.sleep, **body)

        try:
            return self.adapter.cancel(submission, status, call)
        except Exception:
            logger.warning(
                "Could not cancel %s render %s", self.http.name, submission.id, exc_info=True
            )
            return False

    # A render whose worker died after submitting it is sent again (same ticket): it
    # follows the render already at the provider instead of paying for a second one.
    # Only for adapters whose submission is its id (`resumable`).

    def _key(self, ticket: str) -> str:
        return f"{self.pool.prefix}:submitted:{ticket}" if self.pool is not None else ""

    def _resumed(self, ticket: str) -> Submission | None:
        if self.pool is None or not getattr(self.adapter, "resumable", False):
            return None
        try:
            found = self.pool.client.get(self._key(ticket))
        except redis.RedisError:
            return None
        return Submission(id=found.decode()) if found else None

    def _remember(self, ticket: str, submission: Submission) -> None:
        if self.pool is None or not getattr(self.adapter, "resumable", False):
            return
        with contextlib.suppress(redis.RedisError):
            self.pool.client.set(self._key(ticket), submission.id, ex=3600)

    def _forget(self, ticket: str) -> None:
        if self.pool is not None:
            with contextlib.suppress(redis.RedisError):
                self.pool.client.delete(self._key(ticket))

    @contextlib.contextmanager
    def _slot(
        self, ticket: str, priority: Priority, while_waiting: Callable[[], None] | None
    ) -> Iterator[Slot | None]:
        if self.pool is None:
            yield None
            return
        # The provider pays its own cold starts: the pool only bounds requests in flight.
        with self.pool.container(
            ticket=ticket, priority=priority, cold_start_seconds=0, while_waiting=while_waiting
        ) as slot:
            yield slot
