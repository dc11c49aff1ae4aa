"""Touch-ups driven step by step: the endpoint's refusals (before any hold), the money on
every path (delivered: captured once; failed, cancelled, expired: released), the take
it makes, and which characters' sheets go with it. tests/stack/test_real_server.py runs the
delivered path on daphne and real Celery workers."""

import io
from datetime import timedelta

import pytest
from django.utils import timezone
from PIL import Image, ImageChops

from ledger.models import Hold
from mangagen.jobs import regions, rendering, services
from mangagen.jobs.events import EventType
from mangagen.jobs.kinds import touchup as touchup_kind
from mangagen.jobs.models import Job, JobKind, JobState, PanelState, RenderAttempt, TouchUp
from mangagen.renderers import CharacterSpec, PanelSpec, RenderError
from mangagen.renderers.providers.procedural import ProceduralRenderer
from mangagen.storyboards.models import KeptArt
from tests.support import factories
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants

CAST = [{"name": "Aiko", "description": "red scarf"}, {"name": "Kenji"}]
PANELS = [
    {
        "description": "Aiko and Kenji on a rooftop.",
        "shot": "wide",
        "characters": ["Aiko", "Kenji"],
        "blocking": {"Aiko": "left", "Kenji": "right"},
    },
    {"description": "Kenji jumps.", "shot": "action", "characters": ["Kenji"]},
]
BOX = [0.1, 0.2, 0.3, 0.4]

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(characters=CAST, panels=PANELS),
]


def pixels(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


def take_bytes(take: KeptArt) -> bytes:
    with take.image.open("rb") as handle:
        return handle.read()


def changed_outside_and_in(before: Image.Image, after: Image.Image, box=BOX):
    """What changed between two takes past the box and its feather (None: nothing), and
    inside the box."""
    width, height = before.size
    feather = regions.feather_pixels(width, height)
    x, y, w, h = box
    inner = (round(x * width), round(y * height), round((x + w) * width), round((y + h) * height))
    outside = Image.new("L", before.size, 255)
    outside.paste(
        0, (inner[0] - feather, inner[1] - feather, inner[2] + feather, inner[3] + feather)
    )
    difference = ImageChops.difference(before, after).convert("L")
    return ImageChops.multiply(difference, outside).getbbox(), difference.crop(inner).getbbox()


@pytest.fixture
def finished(board, user, account, run):
    """The board drawn and approved: both panels kept, 2 credits spent."""
    run.finish(run.generate(user, board))
    assert balance(account) == (8, 0)
    return board


@pytest.fixture
def touch(person, run):
    def post(board, index=1, body=None, **kwargs):
        with run.commits():
            return person.post(
                f"/api/storyboards/{board.pk}/panels/{index}/touchup/",
                {"box": BOX, "prompt": "a red umbrella"} if body is None else body,
                content_type="application/json",
                **kwargs,
            )

    return post


def test_a_box_touch_up_is_a_new_current_take_for_one_credit_and_keeps_the_outside(
    finished, account, touch, run, person, enqueued
):
    older = KeptArt.objects.get(storyboard=finished, art_hash=finished.panels.get(index=1).art_hash)
    answer = touch(finished)
    assert answer.status_code == 202, answer.content
    job = Job.objects.get(pk=answer.json()["job"])
    assert answer.json() == {"job": job.pk, "panel": 1, "attempt": 1}
    assert job.kind == JobKind.TOUCHUP and job.confirmed
    assert enqueued == [((job.pk, 1, 1), "render")]  # confirmed work, never speculation's queue
    assert balance(account) == (7, 1)  # one hold of one credit
    assert run.render() == "delivered"
    job.refresh_from_db()
    assert job.state == JobState.COMPLETED
    assert balance(account) == (7, 0)  # captured once, when shown
    hold = RenderAttempt.objects.get(job=job, index=1, attempt=1).hold
    assert hold.state == Hold.State.CAPTURED and hold.amount == 1
    types = [e.type for e in job.events.order_by("seq")]
    assert EventType.PANEL_RENDERING in types and EventType.PANEL_DELIVERED in types

    takes = person.get(f"/api/storyboards/{finished.pk}/panels/1/takes/").json()["takes"]
    assert len(takes) == 2 and takes[0]["current"] and takes[1]["id"] == older.pk
    newer = KeptArt.objects.get(pk=takes[0]["id"])
    assert newer.art_hash == older.art_hash  # same panel, another take
    before, after = pixels(take_bytes(older)), pixels(take_bytes(newer))
    assert before.size == after.size
    assert before.size == after.size
    outside, inside = changed_outside_and_in(before, after)
    assert outside is None  # outside: identical
    assert inside is not None  # inside: drawn again

    chosen = person.post(f"/api/storyboards/{finished.pk}/panels/1/takes/{older.pk}/choose/")
    assert chosen.status_code == 204
    takes = person.get(f"/api/storyboards/{finished.pk}/panels/1/takes/").json()["takes"]
    assert takes[0]["id"] == older.pk
    assert balance(account) == (7, 0)  # choosing costs nothing
    assert_ledger_invariants()


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"box": [0.5, 0.5, 0.6, 0.2]}, 400),  # past the right edge
        ({"box": [-0.1, 0, 0.5, 0.5]}, 400),
        ({"box": [0.1, 0.1, 0, 0.5]}, 400),  # empty
        ({"box": [0, 0, 1, 1]}, 400),  # the whole picture: that is a Redo
        ({"box": "0,0,1,1"}, 400),
        ({"prompt": "no region"}, 400),
    ],
)
def test_a_bad_region_is_refused_with_nothing_held(finished, account, touch, run, body, status):
    answer = touch(finished, body=body)
    assert answer.status_code == status and answer.json()["error"] == "invalid"
    assert balance(account) == (8, 0) and run.queued == []
    assert not TouchUp.objects.exists()


def test_a_panel_with_nothing_kept_is_refused_with_nothing_held(board, account, touch, run):
    answer = touch(board)
    assert answer.status_code == 409 and answer.json()["error"] == "nothing_to_touch_up"
    assert balance(account) == (10, 0) and not Job.objects.exists()


def test_a_strangers_panel_is_not_found(finished, account, make_user, client, run):
    stranger = make_user("stranger")
    theirs = factories.funded_account(stranger, 5, key="stranger")
    client.force_login(stranger)
    answer = client.post(
        f"/api/storyboards/{finished.pk}/panels/1/touchup/", {"box": BOX}, "application/json"
    )
    assert answer.status_code == 404
    assert balance(account) == (8, 0) and balance(theirs) == (5, 0) and run.queued == []


def test_a_renderer_that_cannot_is_refused_before_any_hold(
    finished, account, touch, run, monkeypatch
):
    monkeypatch.setattr(ProceduralRenderer, "can_touch_up", False)
    answer = touch(finished)
    assert answer.status_code == 409 and answer.json()["error"] == "touchup_unsupported"
    assert balance(account) == (8, 0) and run.queued == []


def test_no_credits_is_a_402_with_where_to_buy(finished, account, touch, run):
    from ledger import services as ledger

    ledger.authorize(account=account, amount=8, key="spend-it-all", reference="t", expires_in=60)
    answer = touch(finished)
    assert answer.status_code == 402
    body = answer.json()
    assert body["error"] == "insufficient_credits" and body["purchase_url"] == "/credits/"
    assert run.queued == [] and Job.objects.filter(kind=JobKind.TOUCHUP).count() == 0


def test_a_failed_touch_up_releases_its_hold_and_keeps_the_older_take(
    finished, account, touch, run
):
    job = Job.objects.get(pk=touch(finished).json()["job"])
    assert balance(account) == (7, 1)
    with_takes = KeptArt.objects.filter(storyboard=finished).count()
    rendering.fail_render(job_id=job.pk, index=1, attempt=1, error="The render failed.")
    job.refresh_from_db()
    assert job.state == JobState.FAILED
    assert balance(account) == (8, 0)  # released: nothing charged
    assert KeptArt.objects.filter(storyboard=finished).count() == with_takes
    assert run.render() == "stale"  # the task, redelivered, does nothing
    assert balance(account) == (8, 0)
    assert_ledger_invariants()


def test_a_cancelled_touch_up_releases_its_hold(finished, account, touch, run):
    job = Job.objects.get(pk=touch(finished).json()["job"])
    services.cancel_job(job=job, reason="Cancelled by its owner.")
    assert balance(account) == (8, 0)
    assert run.render() == "stale"
    assert balance(account) == (8, 0)
    assert_ledger_invariants()


def test_a_touch_up_left_behind_is_released_by_the_sweep(finished, account, touch, run):
    job = Job.objects.get(pk=touch(finished).json()["job"])
    Job.objects.filter(pk=job.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert services.expire_due_jobs() == 1
    job.refresh_from_db()
    assert job.state == JobState.EXPIRED
    assert balance(account) == (8, 0)
    assert_ledger_invariants()


def test_a_touch_up_of_the_panel_awaiting_a_decision_rides_its_job(
    board, user, account, touch, run
):
    job = run.generate(user, board)
    assert run.render() == "delivered"  # panel 1 shown, awaiting a decision
    answer = touch(board)
    assert answer.status_code == 202 and answer.json()["job"] == job.pk
    assert answer.json()["attempt"] == 2
    assert balance(account) == (8, 1)
    assert run.render() == "delivered"
    job.refresh_from_db()
    panel = job.panels.get(index=1)
    assert job.state == JobState.AWAITING_DECISION and panel.state == PanelState.DELIVERED
    assert KeptArt.objects.filter(storyboard=board).count() == 2
    assert balance(account) == (8, 0)
    # A failed touch-up of it leaves the panel shown, as it was, and charges nothing.
    touch(board)
    image = panel.image.name
    rendering.fail_render(job_id=job.pk, index=1, attempt=3, error="The render failed.")
    panel.refresh_from_db()
    assert panel.state == PanelState.DELIVERED and panel.image.name == image
    assert balance(account) == (8, 0)
    run.approve(job, 1)  # and the job goes on
    assert_ledger_invariants()


def test_a_touch_up_while_the_job_draws_another_panel_is_refused(board, user, account, touch, run):
    job = run.generate(user, board)
    run.render()
    run.approve(job, 1)  # panel 2 is being drawn now
    answer = touch(board)
    assert answer.status_code == 409 and answer.json()["error"] == "touchup_busy"
    assert balance(account) == (8, 1)  # panel 2's hold only


def test_only_the_sheets_of_the_characters_the_region_covers_go_with_it():
    spec = PanelSpec(
        style="shonen",
        description="Aiko and Kenji.",
        shot="wide",
        characters=(
            CharacterSpec("Aiko", position="left"),
            CharacterSpec("Kenji", position="right"),
            CharacterSpec("Mei"),  # the blocking does not say: she goes with it
        ),
    )
    mask = regions.box_mask([0.05, 0.1, 0.2, 0.5], width=160, height=120)
    names = [c.name for c in touchup_kind.covered(spec, box=regions.bounds(mask)).characters]
    assert names == ["Aiko", "Mei"]
    across = touchup_kind.covered(spec, box=[0.3, 0.1, 0.5, 0.5])  # all three thirds
    assert [c.name for c in across.characters] == ["Aiko", "Kenji", "Mei"]


def test_the_procedural_renderer_changes_the_inside_of_the_region():
    renderer = ProceduralRenderer(width=160, height=120, cold_start_seconds=0, render_seconds=0)
    spec = PanelSpec(style="shonen", description="A street.", shot="medium")
    original = renderer.draw(spec, 7)
    mask = regions.box_mask([0.25, 0.25, 0.5, 0.5], width=160, height=120)
    from mangagen.renderers.base import TouchUpSpec

    drawn, _ = renderer.draw_touch_up(
        TouchUpSpec(panel=spec, image=original, mask=mask, prompt="rain"), 8
    )
    result = pixels(regions.composite(original, drawn, mask))
    inside = ImageChops.difference(pixels(original), result).crop((40, 30, 120, 90))
    assert inside.getbbox() is not None


def test_generate_while_a_touch_up_is_drawn_is_refused_not_sent_to_its_job(
    finished, account, touch, person
):
    touch(finished)
    answer = person.post(f"/api/storyboards/{finished.pk}/generate/")
    assert answer.status_code == 409 and answer.json()["error"] == "job_error"
    assert balance(account) == (7, 1)  # the touch-up's hold alone


def test_a_painted_mask_of_any_size_is_the_region(finished, account, person, run):
    painted = Image.new("L", (40, 30), 0)
    painted.paste(255, (20, 0, 40, 15))  # the top right quarter, at a quarter of the size
    data = io.BytesIO()
    painted.save(data, format="PNG")
    data.seek(0)
    data.name = "mask.png"
    with run.commits():
        answer = person.post(
            f"/api/storyboards/{finished.pk}/panels/2/touchup/", {"mask": data, "prompt": "sky"}
        )
    assert answer.status_code == 202, answer.content
    touch = TouchUp.objects.get()
    assert touch.box == [0.5, 0.0, 0.5, 0.5] and touch.prompt == "sky"
    assert run.render() == "delivered"
    assert balance(account) == (7, 0)


def test_a_mask_that_is_not_a_picture_is_refused(finished, account, person, run):
    data = io.BytesIO(b"not a picture")
    data.name = "mask.png"
    answer = person.post(f"/api/storyboards/{finished.pk}/panels/1/touchup/", {"mask": data})
    assert answer.status_code == 400 and answer.json()["error"] == "invalid"
    assert balance(account) == (8, 0) and run.queued == []


def test_a_provider_picture_that_cannot_be_composited_fails_the_render_not_the_worker(
    finished, account, touch, run, monkeypatch
):
    monkeypatch.setattr(
        ProceduralRenderer, "draw_touch_up", lambda self, spec, seed: (b"not a picture", {})
    )
    job = Job.objects.get(pk=touch(finished).json()["job"])
    with pytest.raises(RenderError) as raised:
        run.render()
    assert not raised.value.retryable  # the task fails it at once: released, as above
    assert job.panels.get().state == PanelState.RENDERING


def test_a_touch_up_the_judge_redraws_is_redrawn_only_in_its_region_and_charged_once(
    finished, account, touch, run, settings
):
    """The judge's redraw of a touch-up is a touch-up too: composited into the take, so
    the outside stays the older take's, and the person pays the one credit."""
    from tests.support.providers.openai_compatible import ChatStandIn

    # Panel 2 is an action shot: drawn with another seed, the whole picture changes.
    older = KeptArt.objects.get(storyboard=finished, art_hash=finished.panels.get(index=2).art_hash)
    with ChatStandIn() as chat:
        for name, value in chat.environment().items():
            setattr(settings, name, value)
        settings.JUDGE_MIN_SCORE, settings.JUDGE_MAX_REDRAWS = 0.6, 1
        settings.JUDGE_TIMEOUT_SECONDS = 10.0
        chat.scores = [0.2, 0.9]
        answer = touch(finished, index=2)
        assert answer.status_code == 202, answer.content
        assert run.render() == "delivered"
        assert len(chat.made) == 2  # the first touch-up and its redraw, both judged
    job = Job.objects.get(pk=answer.json()["job"])
    assert job.panels.get(index=2).judge_check["redraws"] == 1
    assert balance(account) == (7, 0)  # one credit, whatever the judge redrew
    newer = (
        KeptArt.objects.filter(storyboard=finished, art_hash=older.art_hash)
        .exclude(pk=older.pk)
        .get()
    )
    before, after = pixels(take_bytes(older)), pixels(take_bytes(newer))
    outside, _ = changed_outside_and_in(before, after)
    assert outside is None
    assert_ledger_invariants()
