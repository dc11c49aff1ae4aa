"""Speculation: gates, silence for the ineligible, attach, bounds, outcomes, metrics."""

from datetime import timedelta

import pytest
from django.utils import timezone

from mangagen.jobs import dispatch
from mangagen.jobs import services as jobs
from mangagen.jobs.models import Job, JobState
from mangagen.storyboards import services as storyboards
from speculation import report, services
from speculation.models import Outcome, Speculation
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.speculation import THREE_PANELS, fund, make_board

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(panels=THREE_PANELS),
]


@pytest.fixture
def speculate(client, user, enqueued, django_capture_on_commit_callbacks):
    client.force_login(user)

    def go(board):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(f"/api/storyboards/{board.pk}/speculate/")

    return go


# --- gates ----------------------------------------


def test_zero_credits_get_no_hint_no_job_no_hold_no_task(user, board, speculate, enqueued):
    response = speculate(board)
    assert response.status_code == 200
    assert response.json() == {"job": None, "hint": False, "reason": "insufficient_credits"}
    assert not Job.objects.exists()
    assert balance(user) == (0, 0)
    assert enqueued == []
    assert Speculation.objects.get().outcome == Outcome.DECLINED


def test_a_hold_is_placed_and_panel_one_goes_to_the_speculative_queue(
    user, board, speculate, enqueued
):
    fund(user, 3)
    response = speculate(board)
    assert response.status_code == 202
    body = response.json()
    assert body["hint"] is True and body["job"]
    job = Job.objects.get(pk=body["job"])
    assert job.confirmed is False
    assert job.confirm_by - timezone.now() > timedelta(minutes=9)
    assert balance(user) == (2, 1)
    assert enqueued == [((job.pk, 1, 1), "speculative")]


def test_the_same_storyboard_speculated_twice_is_one_job(user, board, speculate, enqueued):
    fund(user, 3)
    first = speculate(board).json()
    second = speculate(board).json()
    assert first["job"] == second["job"]
    assert balance(user) == (2, 1)
    assert len(enqueued) == 1


def test_a_newer_speculation_replaces_the_older(user, board, speculate, make_user):
    fund(user, 1)
    other = make_board(user, "Another")
    first = speculate(board).json()
    second = speculate(other).json()
    assert second["hint"] is True and second["job"] != first["job"]
    assert Job.objects.get(pk=first["job"]).state == JobState.CANCELLED
    assert Speculation.objects.get(job_id=first["job"]).outcome == Outcome.INVALIDATED
    assert balance(user) == (0, 1)


def test_an_edited_storyboard_invalidates_its_speculation(user, board, speculate):
    fund(user, 2)
    first = speculate(board).json()
    storyboards.update_storyboard(storyboard=board, panels=[{"description": "New."}])
    second = speculate(board).json()
    assert second["job"] != first["job"]
    assert Speculation.objects.get(job_id=first["job"]).outcome == Outcome.INVALIDATED
    assert balance(user) == (1, 1)


@pytest.mark.parametrize(
    "setup, reason",
    [
        (lambda s: setattr(s, "SPECULATION_ENABLED", False), "disabled"),
        (lambda s: setattr(s, "SPECULATION_MAX_INFLIGHT", 0), "capacity"),
        (lambda s: setattr(s, "SPECULATION_BACKLOG_MAX", -1), "busy"),
    ],
)
def test_gates_decline_silently(user, board, speculate, settings, enqueued, setup, reason):
    fund(user, 3)
    setup(settings)
    assert speculate(board).json() == {"job": None, "hint": False, "reason": reason}
    assert balance(user) == (3, 0) and enqueued == [] and not Job.objects.exists()


def test_an_incomplete_storyboard_is_declined(user, speculate):
    fund(user, 3)
    board = make_board(user, panels=[{"description": ""}])
    assert speculate(board).json()["reason"] == "incomplete"


def test_the_global_cap_counts_everyones_unconfirmed_jobs(
    user, board, speculate, settings, make_user
):
    settings.SPECULATION_MAX_INFLIGHT = 1
    someone = make_user()
    fund(someone, 1)
    services.speculate(user=someone, storyboard=make_board(someone))
    fund(user, 1)
    assert speculate(board).json()["reason"] == "capacity"


def test_backlog_of_confirmed_work_sheds_speculation(user, board, speculate, settings, make_user):
    settings.SPECULATION_BACKLOG_MAX = 0
    busy = make_user()
    fund(busy, 1)
    jobs.generate(user=busy, storyboard=make_board(busy))  # a confirmed render waiting
    fund(user, 1)
    assert speculate(board).json()["reason"] == "busy"


def test_another_persons_storyboard_is_404(board, client, make_user):
    client.force_login(make_user())
    assert client.post(f"/api/storyboards/{board.pk}/speculate/").status_code == 404


def test_a_body_that_is_not_an_object_carries_no_token(user, board, client):
    client.force_login(user)
    url = f"/api/storyboards/{board.pk}/speculate/"
    assert client.post(url, [], content_type="application/json").status_code == 200
    assert client.post(url + "leave/", [1], content_type="application/json").status_code == 400


# --- attach ----------------------------------------


def test_generate_attaches_and_panel_one_is_delivered_with_no_new_render(
    run, user, board, speculate, enqueued, client, django_capture_on_commit_callbacks
):
    fund(user, 3)
    job_id = speculate(board).json()["job"]
    run.render_all()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/storyboards/{board.pk}/generate/")
    assert response.status_code == 200
    assert (response.json()["job"], response.json()["attached"]) == (job_id, True)
    assert enqueued == []  # no new render
    job = client.get(f"/api/jobs/{job_id}/").json()
    assert job["confirmed"] is True and job["panels"][0]["state"] == "delivered"
    # Generate's answer carries panel one, so that Review shows it without a page load.
    delivered = [{"index": 1, "image_url": job["panels"][0]["image_url"], "check": None}]
    assert response.json()["delivered"] == delivered
    assert job["panels"][0]["attempts"] == 1
    assert client.get(job["panels"][0]["image_url"]).status_code == 200
    assert balance(user) == (2, 0)
    speculation = Speculation.objects.get(job_id=job_id)
    assert speculation.outcome == Outcome.HIT and speculation.generate_at
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post(f"/api/storyboards/{board.pk}/generate/")
    assert again.json()["job"] == job_id  # a double click: the same job
    assert balance(user) == (2, 0)


def test_generate_after_editing_panel_three_keeps_panel_one(
    user, board, speculate, run, client, django_capture_on_commit_callbacks
):
    fund(user, 3)
    job_id = speculate(board).json()["job"]
    run.render_all()
    panels = [{"description": "One."}, {"description": "Two."}, {"description": "Three, edited."}]
    board = storyboards.update_storyboard(storyboard=board, panels=panels)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/api/storyboards/{board.pk}/generate/").json()["attached"] is True
    job = Job.objects.get(pk=job_id)
    assert job.panels.get(index=1).state == "delivered"
    assert job.panels.get(index=1).attempts == 1
    assert job.panels.get(index=3).spec["description"] == "Three, edited."
    assert job.version == board.version


def test_an_unconfirmed_job_reveals_nothing(
    user, board, speculate, run, client, django_capture_on_commit_callbacks
):
    fund(user, 3)
    job_id = speculate(board).json()["job"]
    run.render_all()
    job = Job.objects.get(pk=job_id)
    panel = job.panels.get(index=1)
    assert panel.state == "ready" and panel.image
    assert client.get(f"/media/{panel.image.name}").status_code == 404
    body = client.get(f"/api/jobs/{job_id}/").json()
    assert all(p["image_url"] is None for p in body["panels"])
    events = client.get(f"/api/jobs/{job_id}/events/").json()["events"]
    assert all("image_url" not in e["data"] for e in events)
    assert "panel.delivered" not in [e["type"] for e in events]


# --- bounds ----------------------------------------


def test_leaving_review_cancels_and_releases(user, board, speculate, client):
    fund(user, 3)
    job_id = speculate(board).json()["job"]
    response = client.post(f"/api/jobs/{job_id}/cancel/?if_unconfirmed=1")
    assert response.json()["state"] == "cancelled"
    assert balance(user) == (3, 0)
    assert Speculation.objects.get(job_id=job_id).outcome == Outcome.ABANDONED
    assert_ledger_invariants()


def test_leaving_review_after_generate_keeps_the_job(
    user, board, speculate, client, django_capture_on_commit_callbacks
):
    fund(user, 3)
    job_id = speculate(board).json()["job"]
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/api/storyboards/{board.pk}/generate/")
    response = client.post(f"/api/jobs/{job_id}/cancel/?if_unconfirmed=1")
    assert response.json()["state"] != "cancelled"


def test_confirm_by_expiry_releases(user, board, speculate, settings):
    settings.SPECULATION_CONFIRM_SECONDS = 1
    fund(user, 3)
    job_id = speculate(board).json()["job"]
    assert jobs.expire_due_jobs(now=timezone.now() + timedelta(seconds=2)) == 1
    assert Job.objects.get(pk=job_id).state == JobState.EXPIRED
    assert balance(user) == (3, 0)
    assert Speculation.objects.get(job_id=job_id).outcome == Outcome.EXPIRED


def test_confirmed_renders_never_queue_behind_speculative_ones(
    user, board, speculate, enqueued, make_user, django_capture_on_commit_callbacks
):
    fund(user, 3)
    speculate(board)
    other = make_user()
    fund(other, 3)
    with django_capture_on_commit_callbacks(execute=True):
        jobs.generate(user=other, storyboard=make_board(other))
    queues = [queue for _, queue in enqueued]
    assert queues == ["speculative", "render"]


# --- metrics ----------------------------------------


def test_outcomes_feed_the_metrics(
    user, board, speculate, run, client, make_user, django_capture_on_commit_callbacks
):
    fund(user, 5)
    hit = speculate(board).json()["job"]
    run.render_all()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/api/storyboards/{board.pk}/generate/")
    other = make_board(user, "Left")
    left = speculate(other).json()["job"]
    run.render_all()
    client.post(f"/api/jobs/{left}/cancel/?if_unconfirmed=1")
    broke = make_user()
    services.speculate(user=broke, storyboard=make_board(broke))

    # The hit's panel one took 4 s on the GPU, all before Generate, and was on screen
    # 0.5 s after it: figures the report must carry through exactly.
    hit_job = Job.objects.get(pk=hit)
    hit_job.panels.filter(index=1).update(
        render_seconds=4.0, delivered_at=hit_job.confirmed_at + timedelta(seconds=0.5)
    )

    day = report.report()[0]
    assert day.outcomes == {"hit": 1, "abandoned": 1, "declined": 1}
    assert day.declined == {"insufficient_credits": 1}
    assert day.hit_rate == 0.5
    assert day.renders_wasted == 1
    assert (day.credits_held, day.credits_captured, day.credits_released) == (2, 1, 1)
    assert day.gpu_cost_wasted == pytest.approx(0.004)
    assert day.latency_hidden_seconds == pytest.approx(4.0)
    assert day.ttfp_attached["n"] == 1 and day.ttfp_attached["p50"] == pytest.approx(0.5)
    assert day.always_warm_cost == pytest.approx(21.0)
    assert Job.objects.get(pk=hit).confirmed


def test_the_admin_speculation_page_shows_the_figures(
    client, make_user, user, board, speculate, run, django_capture_on_commit_callbacks
):
    fund(user, 2)
    speculate(board)
    run.render_all()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/api/storyboards/{board.pk}/generate/")  # a hit
    broke = make_user()
    services.speculate(user=broke, storyboard=make_board(broke))  # declined: no credits
    client.force_login(make_user("ops", is_staff=True, is_superuser=True))
    page = client.get("/admin/speculation/speculation/").content.decode()
    periods = report.report()
    assert [p.label for p in periods] == ["Last day", "Last week", "Last month"]
    for label in ("Last day", "Last week", "Last month"):
        assert f"<th>{label}</th>" in page
    # Every period sees the one hit, its held and captured credit, the one decline.
    assert page.count('<td class="hit-rate">100%</td>') == 3
    assert page.count("<td>1 / 0 / 0 / 0</td>") == 3
    assert page.count("<td>1 / 0 / 1</td>") == 3
    assert page.count("<td>insufficient_credits: 1</td>") == 3
    assert f"<td>${periods[0].always_warm_cost:.2f}</td>" in page


def test_confirming_moves_a_waiting_render_to_the_render_queue(
    run, user, board, speculate, enqueued, client, django_capture_on_commit_callbacks
):
    fund(user, 3)
    job_id = speculate(board).json()["job"]
    assert enqueued == [((job_id, 1, 1), "speculative")]  # still waiting behind other speculation
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/api/storyboards/{board.pk}/generate/")
    assert enqueued[-1] == ((job_id, 1, 1), "render")  # the same attempt, now with confirmed work
    run.render_all()
    job = Job.objects.get(pk=job_id)
    assert job.panels.get(index=1).state == "delivered"
    assert balance(user) == (2, 0)  # charged once, though two copies were sent


def test_attaching_places_the_look_ahead_after_the_click_not_in_it(
    run,
    user,
    board,
    speculate,
    enqueued,
    client,
    django_capture_on_commit_callbacks,
    settings,
    monkeypatch,
):
    """The Generate that attaches only shows panel one; panel two's hold and
    render are placed by a worker right after (here: when its task runs)."""
    settings.SPECULATION_LOOKAHEAD = 1
    fund(user, 3)
    job_id = speculate(board).json()["job"]
    run.render_all()
    sent = []
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert client.post(f"/api/storyboards/{board.pk}/generate/").json()["attached"]
    assert Job.objects.get(pk=job_id).panels.get(index=2).hold is None  # not in the request
    assert balance(user) == (2, 0)
    monkeypatch.setattr(dispatch, "send_lookahead", sent.append)
    for callback in callbacks:
        callback()
    assert sent == [(job_id,)]
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.queue_lookahead(job_id=job_id) == 1  # what the worker does
        assert jobs.queue_lookahead(job_id=job_id) == 0  # and again: nothing more
    assert enqueued == [((job_id, 2, 1), "speculative")]
    assert balance(user) == (1, 1)
    assert_ledger_invariants()
