"""A render kind is one declaration: a kind that only this test declares (2 credits, drawn
by the procedural renderer) runs through the worker path every kind runs, under the
task policy every render task has, with exactly its price held and captured."""

from __future__ import annotations

import pytest
from celery import shared_task

from ledger.models import Hold
from mangagen.kernel import paid_render
from mangagen.render_kinds import failures, worker
from mangagen.render_kinds.kind import (
    Checked,
    RenderKind,
    Request,
    Work,
    named,
    register,
    registered,
)
from mangagen.renderers import PanelSpec, RenderError, RenderResult
from mangagen.renderers.base import Verb
from mangagen.renderers.gpu_pool import Priority, Withdrawn
from tests.support.factories import balance, funded_account

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]


class Poster(RenderKind):
    """A poster of a comic: what a render of it names is its hold (`ref`, the pk)."""

    name = "poster (test)"
    credits = 2
    verb = Verb.RENDER
    priority = Priority.CONFIRMED

    def __init__(self) -> None:
        self.kept: dict[int, RenderResult] = {}

    def prepare(self, ref: int) -> Work | str:
        if Hold.objects.get(pk=ref).state != Hold.State.PENDING:
            return "stale"
        spec = PanelSpec(style="manga", description="Aiko on a rooftop.", shot="wide")
        request = Request(self.verb, spec, spec.default_seed())
        return Work(ref, self.renderer(), request, ticket=f"poster:{ref}", priority=self.priority)

    def keep(self, work: Work, first: RenderResult, checked: Checked) -> str:
        refused = paid_render.capture(hold=Hold.objects.get(pk=work.ref), reason="poster shown")
        if refused:
            return "discarded"
        self.kept[work.ref] = checked.result
        return "shown"

    def withdrawn(self, work: Work, withdrawn: Withdrawn) -> str:
        return "withdrawn"

    def fail(self, ref: int, *, error: str, detail: str = "") -> None:
        reason = paid_render.failure_reason(error=error, detail=detail)
        paid_render.release(Hold.objects.get(pk=ref), reason=reason)


POSTER = register(Poster())


@shared_task(bind=True, name="tests.render_kinds.render_poster", max_retries=3)
def render_poster(self, hold_id: int) -> str:
    return failures.run(self, hold_id, POSTER)


def place(user) -> Hold:
    return POSTER.place_hold(
        owner=user, key=f"poster:{user.pk}", reference="a poster", expires_in=600
    )


def test_a_kind_declared_here_alone_is_held_drawn_and_captured_at_its_price(user, settings):
    assert settings.RENDERER == "procedural"
    funded_account(user, 10)
    hold = place(user)
    assert (hold.amount, balance(user)) == (2, (8, 2))  # exactly its price, held
    assert render_poster.apply(args=(hold.pk,)).get() == "shown"
    hold.refresh_from_db()
    assert hold.state == Hold.State.CAPTURED and hold.captured_amount == 2
    assert balance(user) == (8, 0)  # exactly its price, spent
    drawn = POSTER.kept[hold.pk]
    assert drawn.renderer == "procedural" and drawn.image.startswith(b"\x89PNG")
    # Run again (a redelivered task), it finds nothing to draw and charges nothing more.
    assert render_poster.apply(args=(hold.pk,)).get() == "stale"
    assert balance(user) == (8, 0)


def test_its_failure_goes_through_the_one_policy_and_releases_its_price(
    user, settings, monkeypatch
):
    funded_account(user, 10)
    hold = place(user)

    def refused(work: Work) -> RenderResult:
        raise RenderError("the provider said no", retryable=False)

    monkeypatch.setattr(worker, "draw", refused)
    assert render_poster.apply(args=(hold.pk,)).get() == "failed"
    hold.refresh_from_db()
    assert hold.state == Hold.State.RELEASED and balance(user) == (10, 0)


def test_a_kind_is_known_by_its_name_and_its_price_is_checked():
    assert named("poster (test)") is POSTER
    assert {"panel", "redo", "touch-up", "sheet", "judge redraw"} <= set(registered())

    class Priceless(Poster):
        name = "priceless (test)"
        credits = -1

    with pytest.raises(ValueError):
        register(Priceless())
    with pytest.raises(LookupError):
        named("priceless (test)")
