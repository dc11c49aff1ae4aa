"""A panel's final as the rough pages fixed it: at its page cell's shape, and drawn from
its rough when one is ready (docs/api.md, "Rough pages").

The first attempt of a panel whose rough is ready asks the provider for `from-rough`:
the rough's picture and seed go with the request, so the composition the person approved
is kept (each provider takes the rough its own way: mangagen/renderers/providers/). A
rough still being drawn is waited for up to ROUGH_WAIT_SECONDS (speculation's panel one
starts while Review's roughs are drawn); after that the final starts without it. A redo
asks for another picture: drawn with the next seed, without the rough.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace

import redis
from django.conf import settings

from mangagen.pages.shapes import cell_aspects
from mangagen.render_kinds.kind import Request
from mangagen.renderers import PanelSpec, Renderer, registry
from mangagen.renderers.base import FromRoughSpec, Verb
from mangagen.renderers.gpu_pool import GpuPool
from mangagen.roughs.models import Rough
from mangagen.roughs.selectors import ready_rough, rough_in_flight

from .models import Job, JobPanel

# How often a final waiting for its rough looks again.
LOOK_SECONDS = 0.1


def cell_aspect(job: Job, panel: JobPanel) -> str:
    """The shape of the panel's page cell in the comic's layout now ("" for a strip)."""
    return cell_aspects(storyboard=job.storyboard).get(panel.index, "")


def request_for(job: Job, panel: JobPanel, spec: PanelSpec, *, attempt: int) -> Request:
    """The request of `attempt` of the panel (its job and panel rows locked by the
    caller), noted on the panel: its cell's shape and whether it is drawn from a rough."""
    rough = ready_rough(storyboard_id=job.storyboard_id, art_hash=panel.art_hash)
    picture = _picture(rough) if attempt == 1 and rough is not None else None
    panel.aspect = spec.aspect
    panel.from_rough = picture is not None
    panel.save(update_fields=["aspect", "from_rough"])
    if picture is not None:
        assert rough is not None
        return Request(Verb.FROM_ROUGH, FromRoughSpec(spec, picture), rough.seed)
    return Request(Verb.RENDER, spec, spec.default_seed() + attempt - 1)


def once_the_rough_is_in(
    job: Job, panel: JobPanel, request: Request, *, attempt: int, beat: Callable[[], None]
) -> Request:
    """`request`, or, when it is a first attempt whose rough was still being drawn and
    lands within ROUGH_WAIT_SECONDS, the request from that rough. Holds no lock while it
    waits; `beat` keeps the render alive for the sweeps meanwhile."""
    if attempt != 1 or request.verb != Verb.RENDER or settings.ROUGH_WAIT_SECONDS <= 0:
        return request
    waited_for = rough_in_flight(storyboard_id=job.storyboard_id, art_hash=panel.art_hash)
    if waited_for is None:
        return request
    with contextlib.suppress(redis.RedisError):  # ahead of the other roughs, if it waits
        GpuPool().hasten(waited_for.ticket)
    deadline = time.monotonic() + settings.ROUGH_WAIT_SECONDS
    beaten = time.monotonic()
    rough: Rough | None = None
    while time.monotonic() < deadline:
        rough = ready_rough(storyboard_id=job.storyboard_id, art_hash=panel.art_hash)
        if rough is not None:
            break
        if rough_in_flight(storyboard_id=job.storyboard_id, art_hash=panel.art_hash) is None:
            return request  # it failed: the final goes on without it
        if time.monotonic() - beaten >= 1:
            beat()
            beaten = time.monotonic()
        time.sleep(LOOK_SECONDS)
    picture = _picture(rough) if rough is not None else None
    if rough is None or picture is None:
        return request
    JobPanel.objects.filter(pk=panel.pk, attempts=attempt).update(from_rough=True)
    spec = request.spec
    return replace(
        request, verb=Verb.FROM_ROUGH, spec=FromRoughSpec(spec, picture), seed=rough.seed
    )


def renderer_of(request: Request, renderer: Renderer) -> Renderer:
    """The renderer a panel's request is drawn by: the panels' one (`renderer`), or for a
    final from its rough the provider RENDERER_FOR names for `from-rough`, if any."""
    if request.verb != Verb.FROM_ROUGH or not settings.RENDERER_FOR.get(str(Verb.FROM_ROUGH)):
        return renderer
    return registry.renderer_for(Verb.FROM_ROUGH)


def _picture(rough: Rough) -> bytes | None:
    """The rough's picture, or None when its file has left the storage."""
    try:
        with rough.image.open("rb") as handle:
            return handle.read()
    except (FileNotFoundError, ValueError):
        return None
