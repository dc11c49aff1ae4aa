"""A rough as a render kind: free (never held, never charged), in the GPU pool's lowest
queue (it never takes a container a final waits for), drawn by the provider's draft
model (`rough`), kept as the panel's rough and pushed to its comic's open pages."""

from __future__ import annotations

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from mangagen.jobs.specs import storyboard_panel_spec
from mangagen.kernel import storage
from mangagen.observability import metrics
from mangagen.observability.metrics import RoughOutcome
from mangagen.render_kinds.kind import Checked, RenderKind, Request, Work, register
from mangagen.renderers import RenderResult
from mangagen.renderers.base import Verb
from mangagen.renderers.gpu_pool import Priority, Withdrawn
from mangagen.storyboards.models import Storyboard

from .lock_objects import try_lock_rough
from .models import LIVE_STATES, Rough, RoughState
from .push import push_on_commit
from .selectors import rough_json

# What the person is told of a rough that could not be drawn (the provider's own words
# are for the log).
NOT_DRAWN = "The rough could not be drawn; try again."


class RoughKind(RenderKind):
    """A rough of a panel: `ref` is its row's pk. Answers "ready", or "stale" (nothing to
    draw: drawn again, or its panel changed), "discarded", "withdrawn", "failed"."""

    name = "rough"
    credits = 0
    verb = Verb.ROUGH
    priority = Priority.ROUGH

    def prepare(self, ref: int) -> Work | str:
        renderer = self.renderer()
        with transaction.atomic():
            rough = try_lock_rough(pk=ref)
            if rough is None or rough.state not in LIVE_STATES:
                return self._counted(RoughOutcome.STALE)
            storyboard = Storyboard.objects.get(pk=rough.storyboard_id)
            panel = storyboard.panels.filter(art_hash=rough.art_hash).order_by("index").first()
            newer = Rough.objects.filter(
                storyboard_id=rough.storyboard_id, art_hash=rough.art_hash, pk__gt=rough.pk
            ).exists()
            if panel is None or newer:  # the panel changed, or its rough is drawn again
                _end(rough, state=RoughState.FAILED, error="")
                return self._counted(RoughOutcome.STALE)
            rough.state = RoughState.DRAWING
            rough.save(update_fields=["state"])
            _push(rough)
            spec = storyboard_panel_spec(storyboard, panel, aspect=rough.aspect)
        return Work(
            ref,
            renderer,
            Request(self.verb, spec, rough.seed),
            ticket=rough.ticket,
            priority=self.priority,
        )

    def keep(self, work: Work, first: RenderResult, checked: Checked) -> str:
        result = checked.result
        phases = metrics.phases_of(first.metadata, first.seconds)
        with storage.deleted_if_raised() as saved, transaction.atomic():
            rough = try_lock_rough(pk=work.ref)
            if rough is None or rough.state != RoughState.DRAWING:
                return self._counted(RoughOutcome.DISCARDED)
            rough.image.save("rough.png", ContentFile(result.image), save=False)
            saved.append(rough.image.name)
            rough.state = RoughState.READY
            rough.faces = result.metadata.get("faces") or {}
            rough.seconds = result.seconds
            rough.gpu_seconds = round(phases.get("cold_start", 0.0) + phases.get("render", 0.0), 3)
            rough.drawn_at = timezone.now()
            rough.save()
            _forget_older(rough)
            _push(rough)
        metrics.rough_seconds.observe(result.seconds)
        return self._counted(RoughOutcome.READY)

    def withdrawn(self, work: Work, withdrawn: Withdrawn) -> str:
        """Drawn again with another seed while it waited (or its comic was deleted)."""
        with transaction.atomic():
            rough = try_lock_rough(pk=work.ref)
            if rough is not None and rough.state in LIVE_STATES:
                _end(rough, state=RoughState.FAILED, error="")
        return self._counted(RoughOutcome.WITHDRAWN)

    def fail(self, ref: int, *, error: str, detail: str = "") -> None:
        """Nothing to release: the rough says failed, and asking again draws it again."""
        with transaction.atomic():
            rough = try_lock_rough(pk=ref)
            if rough is not None and rough.state in LIVE_STATES:
                _end(rough, state=RoughState.FAILED, error=NOT_DRAWN)
        self._counted(RoughOutcome.FAILED)

    def describe(self, ref: int) -> str:
        return f"rough {ref}"

    @staticmethod
    def _counted(outcome: RoughOutcome) -> str:
        metrics.roughs.labels(outcome=outcome).inc()
        return outcome


ROUGH = register(RoughKind())


def _end(rough: Rough, *, state: str, error: str) -> None:
    rough.state = state
    rough.error = error
    rough.save(update_fields=["state", "error"])
    _push(rough)


def _push(rough: Rough) -> None:
    """Tells the comic's open pages, for every panel this rough is the rough of (none
    when a newer rough of its art hash was asked for: that one is the panels')."""
    if Rough.objects.filter(
        storyboard_id=rough.storyboard_id, art_hash=rough.art_hash, pk__gt=rough.pk
    ).exists():
        return
    indices = Storyboard.objects.get(pk=rough.storyboard_id).panels.filter(art_hash=rough.art_hash)
    for index in indices.values_list("index", flat=True):
        push_on_commit(storyboard_id=rough.storyboard_id, data=rough_json(rough, index=index))


def _forget_older(rough: Rough) -> None:
    """The pictures of the art hash's older roughs leave the storage once this one is
    kept (their rows stay: what roughs cost is counted from them)."""
    older = Rough.objects.filter(
        storyboard_id=rough.storyboard_id, art_hash=rough.art_hash, pk__lt=rough.pk
    ).exclude(image="")
    names = list(older.values_list("image", flat=True))
    older.update(image="")
    storage.deleted_on_commit(names)
