"""Checked before shown (mangagen/jobs/judging.py): every render the worker lands is
judged against its characters' sheets before it is kept ready or delivered; under
JUDGE_MIN_SCORE it is drawn again (another seed, while the pool has room) and the
best-scored render is shown, the person charged once for it. The judge is the chat
stand-in over real HTTP (tests/support/providers/openai_compatible.py)."""

from __future__ import annotations

import io
import time
from datetime import timedelta

import pytest
from django.utils import timezone
from PIL import Image
from prometheus_client import REGISTRY

from ledger.models import Hold
from mangagen.characters import services as sheets
from mangagen.jobs import judging, liveness, services
from mangagen.jobs.models import Job, JobPanel, PanelState, RenderAttempt
from mangagen.renderers import PanelSpec, RenderResult
from mangagen.renderers.gpu_pool import GpuPool, Priority
from tests.support import factories
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.providers.openai_compatible import ChatStandIn

CAST = [{"name": "Aiko", "description": "red scarf"}]
PANELS = [
    # (action shots: the simulated GPU draws another seed differently)
    {"description": "Aiko runs through the station.", "shot": "action", "characters": ["Aiko"]},
    {"description": "Aiko runs on.", "shot": "action", "characters": ["Aiko"]},
]
SHEET = factories.png((200, 200), (10, 10, 200))

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(characters=CAST, panels=PANELS),
]


@pytest.fixture
def chat(settings):
    with ChatStandIn() as standin:
        for name, value in standin.environment().items():
            setattr(settings, name, value)
        settings.JUDGE_MIN_SCORE, settings.JUDGE_MAX_REDRAWS = 0.6, 1
        settings.JUDGE_TIMEOUT_SECONDS = 10.0
        yield standin


@pytest.fixture
def aikos_sheet(board):
    """Aiko's character sheet on the board, what the judge compares each render with."""
    sheets.upload_sheet(storyboard=board, name="Aiko", image=SHEET)
    board.refresh_from_db()


def pixels(picture: bytes) -> bytes:
    with Image.open(io.BytesIO(picture)) as image:
        return image.convert("RGB").tobytes()


def shown(job: Job, index: int = 1) -> JobPanel:
    return job.panels.get(index=index)


def counted(verdict: str) -> float:
    return REGISTRY.get_sample_value("mangagen_judge_total", {"verdict": verdict}) or 0.0


def redraws_counted() -> float:
    return REGISTRY.get_sample_value("mangagen_judge_redraws_total") or 0.0


def api_panel(person, job: Job, index: int = 1) -> dict:
    answer = person.get(f"/api/jobs/{job.pk}/")
    assert answer.status_code == 200, answer.content
    return answer.json()["panels"][index - 1]


def test_a_low_render_is_drawn_again_and_the_better_one_shown_charged_once(
    user, account, board, aikos_sheet, chat, run, person
):
    chat.scores = [0.2, 0.9]
    redrawn, redraws = counted("redrawn"), redraws_counted()
    assert balance(account) == (10, 0)
    job = run.generate(user, board)
    assert balance(account) == (9, 1)
    assert run.render() == "delivered"
    panel = shown(job)
    assert panel.state == PanelState.DELIVERED
    assert panel.judge_check["score"] == 0.9 and panel.judge_check["redraws"] == 1
    # One capture, for the panel shown: the redraw was never charged.
    assert balance(account) == (9, 0)
    assert list(RenderAttempt.objects.filter(job=job).values_list("attempt", flat=True)) == [1]
    assert Hold.objects.filter(account=account, state=Hold.State.CAPTURED).count() == 1
    assert_ledger_invariants()
    # The judge saw both renders, each with Aiko's sheet and the description; the one
    # shown is the second.
    first, second = chat.made
    assert pixels(first["images"][1]) == pixels(SHEET) == pixels(second["images"][1])
    assert all("Aiko runs through the station." in " ".join(m["texts"]) for m in chat.made)
    assert pixels(first["images"][0]) != pixels(second["images"][0])
    with panel.image.open("rb") as stored:
        assert pixels(stored.read()) == pixels(second["images"][0])
    assert (counted("redrawn") - redrawn, redraws_counted() - redraws) == (1, 1)
    check = api_panel(person, job)["check"]
    assert check["score"] == 0.9 and check["redraws"] == 1 and check["reason"] == "scored 0.9"
    assert check["sheets"] == ["Aiko"] and check["low"] is False


def test_a_redraw_that_scores_lower_leaves_the_first_shown_and_flagged(
    user, account, board, aikos_sheet, chat, run, person
):
    chat.scores = [0.4, 0.1]
    job = run.generate(user, board)
    assert run.render() == "delivered"
    first, _ = chat.made
    with shown(job).image.open("rb") as stored:
        assert pixels(stored.read()) == pixels(first["images"][0])
    check = api_panel(person, job)["check"]
    assert (check["score"], check["redraws"], check["low"]) == (0.4, 1, True)
    assert balance(account) == (9, 0)


def test_a_render_that_passes_is_shown_at_once_with_no_redraw(
    user, account, board, aikos_sheet, chat, run, person
):
    chat.scores = [0.8]
    passed = counted("passed")
    job = run.generate(user, board)
    assert run.render() == "delivered"
    assert len(chat.made) == 1
    assert api_panel(person, job)["check"]["redraws"] == 0
    assert counted("passed") - passed == 1
    assert balance(account) == (9, 0)


def test_no_redraw_takes_a_container_another_persons_render_wants(
    user, account, board, aikos_sheet, chat, run, settings
):
    """A pool of one: while the judge looks at the first render, another person's
    render takes the container: no redraw, the low render shown, flagged."""
    settings.GPU_POOL_SIZE = 1
    taken = []
    chat.on_ask = lambda: taken.append(
        GpuPool().try_acquire(ticket="someone else's panel one", priority=Priority.CONFIRMED)
    )
    chat.scores = [0.2, 0.9]
    kept_low = counted("kept_low")
    job = run.generate(user, board)
    assert run.render() == "delivered"
    assert taken[0] is not None  # the other render had the container
    assert len(chat.made) == 1  # nothing was drawn again
    check = shown(job).judge_check
    assert (check["score"], check["redraws"], check["low"]) == (0.2, 0, True)
    assert counted("kept_low") - kept_low == 1
    assert balance(account) == (9, 0)


def test_a_render_withdrawn_while_the_judge_looks_is_not_drawn_again(
    user, account, board, aikos_sheet, chat, run
):
    """Its job ended (the ticket withdrawn, as ending a job does on commit) while the
    judge looked: no redraw is drawn for it."""
    job = run.generate(user, board)
    chat.on_ask = lambda: GpuPool().withdraw(liveness.ticket(job.pk, 1, 1))
    chat.scores = [0.2, 0.9]
    run.render()
    assert len(chat.made) == 1


def test_a_judge_that_is_down_lets_the_render_through_unchecked(
    user, account, board, aikos_sheet, chat, run, person
):
    chat.fail_next(503, {"error": {"message": "overloaded"}})
    unchecked = counted("unchecked")
    job = run.generate(user, board)
    assert run.render() == "delivered"
    assert api_panel(person, job)["check"] is None
    assert counted("unchecked") - unchecked == 1
    assert balance(account) == (9, 0)


def test_without_a_judge_nothing_is_asked(
    user, account, board, aikos_sheet, chat, run, person, settings
):
    settings.JUDGE = "none"
    job = run.generate(user, board)
    assert run.render() == "delivered"
    assert chat.made == [] and api_panel(person, job)["check"] is None


def test_a_speculated_render_is_checked_before_the_person_attaches(
    user, account, board, aikos_sheet, chat, run, person
):
    chat.scores = [0.3, 0.7]
    with run.commits():
        job = services.start_job(
            user=user,
            storyboard=board,
            confirmed=False,
            confirm_by=timezone.now() + timedelta(minutes=10),
        )
    assert run.render() == "ready"  # judged and redrawn during Review
    assert len(chat.made) == 2
    assert api_panel(person, job)["check"]["score"] == 0.7
    assert balance(account) == (9, 1)  # held, not yet charged
    with run.commits():
        answer = person.post(f"/api/storyboards/{board.pk}/generate/")  # Generate attaches
    assert answer.status_code == 200 and answer.json()["attached"] is True
    # Review shows panel one from the answer: already checked.
    [first] = answer.json()["delivered"]
    assert (first["check"]["score"], first["check"]["redraws"]) == (0.7, 1)
    panel = shown(job)
    assert panel.state == PanelState.DELIVERED
    assert (panel.judge_check["score"], panel.judge_check["redraws"]) == (0.7, 1)
    assert len(chat.made) == 2  # already checked: nothing asked at the click
    assert balance(account) == (9, 0)
    assert_ledger_invariants()


def test_every_panel_shown_costs_one_credit_whatever_the_judge_redraws(
    user, account, board, aikos_sheet, chat, run
):
    chat.scores = [0.1, 0.2, 0.1, 0.95]
    job = run.generate(user, board)
    assert run.render() == "delivered"
    assert balance(account) == (9, 0)
    run.approve(job, 1)
    assert run.render() == "delivered"
    assert balance(account) == (8, 0)
    assert len(chat.made) == 4
    assert [p.judge_check["redraws"] for p in job.panels.order_by("index")] == [1, 1]
    assert_ledger_invariants()


def test_room_for_a_redraw_is_a_free_container_and_time_left(settings):
    settings.GPU_POOL_SIZE = 1
    pool = GpuPool()
    first = RenderResult(b"", "image/png", 1, 1, "procedural", 1.0, False)
    now = time.monotonic()
    assert judging.room_for_a_redraw(first, now)
    slot = pool.try_acquire(ticket="busy", priority=Priority.CONFIRMED)
    assert slot is not None
    assert not judging.room_for_a_redraw(first, now)
    pool.release(slot)
    assert judging.room_for_a_redraw(first, now)
    # A render as long as the task's time limit leaves no time for another.
    slow = RenderResult(b"", "image/png", 1, 1, "procedural", 200.0, False)
    settings.RENDER_TASK_TIME_LIMIT = 300
    assert not judging.room_for_a_redraw(slow, now)


def test_a_redraw_waiting_for_a_container_is_withdrawn_with_the_render_it_redraws(settings):
    """Someone took the container between the room check and the redraw's ask: the
    redraw waits in the speculative queue under its own ticket, and when the render it
    redraws is withdrawn (its job ended), so is the redraw."""
    import threading

    from mangagen.renderers.providers.procedural import ProceduralRenderer
    from tests.support.waiting import wait_for

    settings.GPU_POOL_SIZE = 1
    pool = GpuPool()
    taken = pool.try_acquire(ticket="someone else's panel one", priority=Priority.CONFIRMED)
    assert taken is not None
    renderer = ProceduralRenderer(cold_start_seconds=0, render_seconds=0)
    spec = PanelSpec(style="shonen", description="Aiko runs.", shot="action")
    outcome: dict = {}

    def redraw_it():
        outcome["result"] = judging.run_redraw(
            lambda seed, ticket, beat: renderer.render(
                spec, seed, ticket=ticket, priority=Priority.SPECULATIVE, while_waiting=beat
            ),
            seed=7,
            ticket="job:1:panel:1:attempt:1",
            n=1,
        )

    thread = threading.Thread(target=redraw_it)
    thread.start()
    wait_for(lambda: pool.state().waiting_speculative == 1, what="the redraw to wait")
    pool.withdraw("job:1:panel:1:attempt:1")  # what ending the job does
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert outcome == {"result": None}
    assert pool.state().waiting_speculative == 0
    pool.release(taken)
