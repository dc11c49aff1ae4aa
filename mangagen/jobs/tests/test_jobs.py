"""The job state machine and its charging rule, driven step by step.

Renders run in-process here (the task's enqueue is recorded, then the
service is called); test_jobs_worker.py runs the same flows on a real
Celery worker.
"""

import io
import zipfile
from datetime import timedelta

import pytest
from django.utils import timezone

from ledger import services as ledger
from ledger.errors import InsufficientCredits
from ledger.models import Hold
from mangagen.jobs import selectors, services, tasks
from mangagen.jobs.events import EventType
from mangagen.jobs.models import Job, JobState
from mangagen.render_kinds import worker
from mangagen.renderers import RenderError
from mangagen.storyboards import services as storyboards
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants

CAST = [{"name": "Aiko", "description": "red scarf"}, {"name": "Kenji"}]
PANELS = [
    {"description": "A rooftop at night.", "shot": "establishing"},
    {
        "description": "Aiko runs.",
        "shot": "action",
        "characters": ["Aiko"],
        "dialogue": [{"speaker": "Aiko", "text": "Run!"}],
    },
    {"description": "Kenji jumps.", "shot": "action", "characters": ["Kenji"]},
]

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(characters=CAST, panels=PANELS),
]


def event_types(job):
    return [e.type for e in job.events.order_by("seq")]


@pytest.fixture
def generate(user, board, run):
    """Generate, as the person presses it: (the job, how it came)."""

    def go():
        with run.commits():
            return services.generate(user=user, storyboard=board)

    return go


def test_generate_places_one_hold_and_queues_panel_one(account, generate, enqueued):
    job, how = generate()
    assert how == "created" and job.confirmed and job.state == JobState.QUEUED
    assert balance(account) == (9, 1)
    assert enqueued == [((job.pk, 1, 1), "render")]
    assert event_types(job) == ["job.state", "panel.queued", "credits"]
    assert job.expires_at > timezone.now() + timedelta(hours=1)


def test_delivery_captures_the_hold_and_shows_the_image(account, generate, run, client, user):
    job, _ = generate()
    assert run.render() == "delivered"
    job.refresh_from_db()
    panel = job.panels.get(index=1)
    assert job.state == JobState.AWAITING_DECISION
    assert panel.state == "delivered" and panel.hold.state == Hold.State.CAPTURED
    assert balance(account) == (9, 0)
    url = selectors.image_url(panel, job)
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response.content[:8] == b"\x89PNG\r\n\x1a\n"
    types = event_types(job)
    assert types[-5:] == [
        "panel.rendering",
        "panel.ready",
        "panel.delivered",
        "credits",
        "job.state",
    ]
    delivered = job.events.get(type="panel.delivered")
    assert delivered.data["image_url"] == url
    assert_ledger_invariants()


def test_images_are_only_for_their_owner(account, generate, run, client, make_user):
    job, _ = generate()
    run.render()
    url = selectors.image_url(job.panels.get(index=1), job)
    client.force_login(make_user())
    assert client.get(url).status_code == 404
    client.logout()
    assert client.get(url).status_code == 302  # to the login page


def test_approve_all_then_completed(account, generate, run, user):
    job, _ = generate()
    for index in (1, 2, 3):
        assert run.render() == "delivered"
        job = run.approve(job, index)
    assert job.state == JobState.COMPLETED
    assert balance(account) == (7, 0)  # three renders shown, three credits
    assert event_types(job)[-2:] == ["job.state", "job.done"]
    assert job.events.get(type="job.done").data["reader_url"].endswith(f"/jobs/{job.pk}/read/")
    assert_ledger_invariants()


def test_redo_renders_again_under_a_new_hold(account, generate, run, enqueued):
    job, _ = generate()
    run.render()
    first = job.panels.get(index=1).image.name
    with run.commits():
        services.redo_panel(job=job, index=1)
    assert enqueued == [((job.pk, 1, 2), "render")]
    assert balance(account) == (8, 1)
    run.render()
    panel = job.panels.get(index=1)
    assert panel.attempts == 2 and panel.state == "delivered"
    assert panel.image.name != first
    assert balance(account) == (8, 0)  # paid for both renders shown
    assert_ledger_invariants()


def test_cancel_releases_the_hold_and_the_render_is_dropped(account, generate, run):
    job, _ = generate()
    with run.commits():
        services.cancel_job(job=job)
    assert balance(account) == (10, 0)
    assert run.render() == "stale"
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED
    assert services.cancel_job(job=job).state == JobState.CANCELLED  # idempotent
    assert_ledger_invariants()


def test_cancel_while_the_renderer_draws(account, generate, run, monkeypatch):
    job, _ = generate()
    from mangagen.renderers.providers.procedural import ProceduralRenderer

    original = ProceduralRenderer.render

    def render_then_cancel(self, spec, seed, **kwargs):
        result = original(self, spec, seed, **kwargs)
        services.cancel_job(job=job)
        return result

    monkeypatch.setattr(ProceduralRenderer, "render", render_then_cancel)
    assert run.render() == "discarded"
    assert balance(account) == (10, 0)
    assert not job.panels.get(index=1).image


def test_a_failed_render_releases_its_hold_and_can_be_retried(account, generate, run):
    job, _ = generate()
    (job_id, index, attempt), _ = run.take()
    with run.commits():
        services.fail_render(job_id=job_id, index=index, attempt=attempt, error="GPU on fire")
    job.refresh_from_db()
    panel = job.panels.get(index=1)
    assert panel.state == "failed" and panel.error == "GPU on fire"
    assert job.state == JobState.AWAITING_DECISION
    assert balance(account) == (10, 0)
    with run.commits():
        services.redo_panel(job=job, index=1)
    assert run.render() == "delivered"
    assert balance(account) == (9, 0)


def flaky_renders(monkeypatch, *errors: RenderError) -> list[RenderError]:
    """The worker path raises each of `errors` in turn, then renders for real."""
    real, left = worker.perform, list(errors)

    def flaky(kind, ref):
        if left:
            raise left.pop(0)
        return real(kind, ref)

    monkeypatch.setattr(worker, "perform", flaky)
    return left


@pytest.mark.parametrize(
    "failures, outcome, credits",
    [(2, "delivered", (9, 0)), (tasks.MAX_RENDER_RETRIES + 1, "failed", (10, 0))],
)
def test_the_task_retries_retryable_errors_up_to_its_limit(
    failures, outcome, credits, account, generate, run, monkeypatch
):
    job, _ = generate()
    (job_id, index, attempt), _ = run.take()
    flaky_renders(monkeypatch, *[RenderError("busy", retryable=True)] * failures)
    with run.commits():
        assert tasks.render_panel.apply(args=(job_id, index, attempt)).get() == outcome
    retries = job.events.filter(type=EventType.PANEL_RETRYING).count()
    assert retries == min(failures, tasks.MAX_RENDER_RETRIES)
    assert job.panels.get(index=1).state == outcome
    assert balance(account) == credits


def test_the_task_fails_an_error_that_cannot_be_retried(account, generate, run, monkeypatch):
    job, _ = generate()
    (job_id, index, attempt), _ = run.take()
    flaky_renders(monkeypatch, RenderError("provider refused", retryable=False))
    with run.commits():
        assert tasks.render_panel.apply(args=(job_id, index, attempt)).get() == "failed"
    assert not job.events.filter(type=EventType.PANEL_RETRYING).exists()
    assert job.panels.get(index=1).state == "failed"
    assert balance(account) == (10, 0)


def test_generate_without_credits_makes_nothing(user, generate, enqueued):
    with pytest.raises(InsufficientCredits):
        generate()
    assert not Job.objects.exists()
    assert enqueued == []


def test_approve_without_credits_for_the_next_panel_changes_nothing(user, generate, run):
    account = ledger.account_for(user)
    ledger.grant(account=account, amount=1, key="one", reason="x")
    job, _ = generate()
    run.render()
    with pytest.raises(InsufficientCredits):
        services.approve_panel(job=job, index=1)
    job.refresh_from_db()
    assert job.state == JobState.AWAITING_DECISION
    assert job.panels.get(index=1).state == "delivered"


def test_repeated_generate_returns_the_same_job(account, generate, enqueued):
    job, _ = generate()
    again, how = generate()
    assert (again.pk, how) == (job.pk, "existing")
    assert balance(account) == (9, 1)
    assert len(enqueued) == 1


def test_generate_after_an_edit_replaces_the_job(account, board, generate):
    job, _ = generate()
    storyboards.update_storyboard(
        storyboard=board, panels=[*PANELS[:2], {"description": "New end."}]
    )
    new, how = generate()
    assert how == "created" and new.pk != job.pk
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED
    assert balance(account) == (9, 1)


def test_illegal_transitions_are_refused(account, generate, run):
    job, _ = generate()
    with pytest.raises(services.IllegalTransition, match="queued"):
        services.approve_panel(job=job, index=1)
    run.render()
    with pytest.raises(services.IllegalTransition, match="Panel 1"):
        services.approve_panel(job=job, index=2)


def test_incomplete_storyboard_cannot_start(user, account, board):
    storyboards.update_storyboard(storyboard=board, panels=[{"description": ""}])
    with pytest.raises(services.StoryboardIncomplete):
        services.generate(user=user, storyboard=board)
    assert balance(account) == (10, 0)


# --- unconfirmed jobs (what speculation creates) -------------------------------------------------


@pytest.fixture
def unconfirmed(user, board, account, run):
    with run.commits():
        return services.start_job(
            user=user,
            storyboard=board,
            confirmed=False,
            confirm_by=timezone.now() + timedelta(minutes=10),
        )


def test_an_unconfirmed_render_is_never_shown_or_charged(
    unconfirmed, run, enqueued, account, client, user
):
    assert enqueued[0][1] == "speculative"
    assert run.render() == "ready"
    panel = unconfirmed.panels.get(index=1)
    assert panel.state == "ready" and panel.image
    assert selectors.image_url(panel, unconfirmed) is None
    client.force_login(user)
    assert client.get(f"/media/{panel.image.name}").status_code == 404
    body = client.get(f"/api/jobs/{unconfirmed.pk}/").json()
    assert [p["image_url"] for p in body["panels"]] == [None, None, None]
    events = client.get(f"/api/jobs/{unconfirmed.pk}/events/").json()["events"]
    assert not any("image_url" in e["data"] for e in events)
    assert balance(account) == (9, 1)


def test_confirming_delivers_the_ready_panel_at_once(unconfirmed, run, user, account):
    run.render()
    with run.commits():
        job, how = services.generate(user=user, storyboard=unconfirmed.storyboard)
    assert (job.pk, how) == (unconfirmed.pk, "attached")
    panel = job.panels.get(index=1)
    assert panel.state == "delivered" and panel.attempts == 1  # no new render
    assert balance(account) == (9, 0)


def test_confirming_after_an_edit_keeps_matching_renders_only(
    unconfirmed, run, board, user, account, enqueued
):
    run.render()
    edited = [{"description": "A different rooftop."}, *PANELS[1:]]
    storyboards.update_storyboard(storyboard=board, panels=edited)
    with run.commits():
        job, _ = services.generate(user=user, storyboard=board)
    panel = job.panels.get(index=1)
    assert panel.state == "pending" and panel.hold.state == "pending"
    assert panel.spec["description"] == "A different rooftop."
    assert enqueued[-1] == ((job.pk, 1, 2), "render")
    assert balance(account) == (9, 1)  # the stale render's hold released, a new one placed
    run.render()
    assert job.panels.get(index=1).state == "delivered"


def test_an_unconfirmed_job_expires_at_confirm_by(unconfirmed, account, run):
    with run.commits():
        assert services.expire_due_jobs(now=timezone.now() + timedelta(minutes=11)) == 1
    unconfirmed.refresh_from_db()
    assert unconfirmed.state == JobState.EXPIRED
    assert balance(account) == (10, 0)
    assert services.expire_due_jobs(now=timezone.now() + timedelta(minutes=12)) == 0


def test_a_confirmed_job_expires_after_its_ttl(account, generate):
    job, _ = generate()
    assert not services.expire_job_if_due(job_id=job.pk)
    assert services.expire_job_if_due(job_id=job.pk, now=timezone.now() + timedelta(hours=3))
    assert balance(account) == (10, 0)


def test_seq_counts_up_with_no_gaps(account, generate, run):
    job, _ = generate()
    run.render()
    with run.commits():
        services.redo_panel(job=job, index=1)
    run.render()
    seqs = list(job.events.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    job.refresh_from_db()
    assert job.last_seq == seqs[-1]


# --- exports ----------------------------------------


def test_pdf_and_cbz_of_a_finished_comic(account, generate, run, user, client):
    job, _ = generate()
    for index in (1, 2, 3):
        run.render()
        run.approve(job, index)
    client.force_login(user)
    base = f"/comics/{job.storyboard_id}/jobs/{job.pk}"
    pdf = client.get(f"{base}/comic.pdf", follow=True)  # the comic's export, not the job's
    assert pdf.status_code == 200 and b"".join(pdf.streaming_content).startswith(b"%PDF")
    cbz = zipfile.ZipFile(
        io.BytesIO(b"".join(client.get(f"{base}/comic.cbz", follow=True).streaming_content))
    )
    assert "001.png" in cbz.namelist() and "ComicInfo.xml" in cbz.namelist()
    assert client.get(f"{base}/read/").url == f"/comics/{job.storyboard_id}/read/"
    assert client.get(f"{base}/comic.exe").status_code == 404


# --- look-ahead ----------------------------------------


@pytest.fixture
def ahead(settings):
    settings.SPECULATION_LOOKAHEAD = 1


def test_the_next_panel_renders_ahead_and_is_delivered_when_reached(
    ahead, account, generate, run, enqueued
):
    job, _ = generate()
    run.render()  # panel 1 delivered; panel 2 enqueued ahead
    assert enqueued == [((job.pk, 2, 1), "speculative")]
    assert balance(account) == (8, 1)
    assert run.render() == "ready"
    ahead_panel = job.panels.get(index=2)
    assert ahead_panel.lookahead and ahead_panel.state == "ready"
    assert selectors.image_url(ahead_panel, job) is None  # not shown before it is reached
    run.approve(job, 1)
    assert job.panels.get(index=2).state == "delivered"
    assert job.panels.get(index=2).attempts == 1  # no new render
    assert enqueued == [((job.pk, 3, 1), "speculative")]
    assert balance(account) == (7, 1)
    assert_ledger_invariants()


def test_abandoned_look_ahead_releases_its_hold(ahead, account, generate, run):
    job, _ = generate()
    run.render()
    run.render()
    with run.commits():
        services.cancel_job(job=job)
    assert balance(account) == (9, 0)  # panel 1 was shown and paid; panel 2 released
    assert_ledger_invariants()


def test_no_look_ahead_without_credits_for_it(ahead, user, generate, run, enqueued):
    ledger.grant(account=ledger.account_for(user), amount=1, key="one", reason="x")
    job, _ = generate()
    assert run.render() == "delivered"
    assert enqueued == []
    assert job.panels.get(index=2).state == "pending"


def test_a_rendered_panel_is_lettered_ahead_of_its_first_request(
    account, generate, run, client, user, settings, monkeypatch
):
    """The worker draws the lettering right after the render commits, so the
    request that first shows the panel does not draw it."""
    from mangagen.jobs import lettered_images

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    job, _ = generate()
    assert run.render() == "delivered"
    drawn = []
    monkeypatch.setattr(lettered_images, "compose_panel", lambda *a, **k: drawn.append(a))
    client.force_login(user)
    url = selectors.image_url(job.panels.get(index=1), job)
    response = client.get(url)
    assert response.status_code == 200 and response.content.startswith(b"\x89PNG")
    assert drawn == []  # served from what the worker drew


def test_a_frozen_account_still_gets_the_panel_it_paid_for(
    account, generate, run, settings, client, user
):
    """Flagged between Generate and delivery: the look-ahead's new hold is refused
    (AccountFlagged), as when credits run out; the delivery it rides on stands (it
    was rolled back with it: the render thrown away, approve refused)."""
    settings.SPECULATION_LOOKAHEAD = 1
    job, _ = generate()
    ledger.flag_account(account=account, reason="dispute")
    assert run.render() == "delivered"
    job.refresh_from_db()
    assert job.panels.get(index=1).state == "delivered"
    assert job.panels.get(index=2).state == "pending"  # nothing ahead
    assert balance(account) == (9, 0)  # panel one paid, nothing else held
    client.force_login(user)
    image = client.get(selectors.image_url(job.panels.get(index=1), job))
    assert image.status_code == 200
