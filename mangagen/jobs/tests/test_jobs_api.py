"""The jobs part of docs/api.md: generate, job, decisions, cancel (also by beacon), events."""

import pytest
from django.test import Client

from ledger import services as ledger
from mangagen.jobs import dispatch, services
from tests.support import factories

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders", "enqueued", "person"),
]


@pytest.fixture
def renders(monkeypatch):
    """Renders run in-process right after commit, as if a worker were instant."""

    def run_now(args, queue):
        services.perform_render(job_id=args[0], index=args[1], attempt=args[2])

    monkeypatch.setattr(dispatch, "send_render", run_now)


@pytest.fixture
def funded(user):
    factories.funded_account(user, 5)


def post(client, url):
    return client.post(url, {}, content_type="application/json")


def test_generate_with_no_credits_is_402_with_a_purchase_url(client, board):
    response = post(client, f"/api/storyboards/{board.pk}/generate/")
    assert response.status_code == 402
    body = response.json()
    assert body["error"] == "insufficient_credits" and body["purchase_url"] == "/credits/"
    assert client.get(body["purchase_url"]).status_code == 200


def test_the_whole_job_through_the_api(
    client, board, funded, renders, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        started = post(client, f"/api/storyboards/{board.pk}/generate/")
    assert started.status_code == 201
    assert started.json()["attached"] is False
    assert started.json()["delivered"] == []  # nothing was drawn before the click
    job_id = started.json()["job"]
    with django_capture_on_commit_callbacks(execute=True):
        again = post(client, f"/api/storyboards/{board.pk}/generate/")
    assert again.status_code == 200
    assert (again.json()["job"], again.json()["attached"]) == (job_id, False)
    # By now panel one was drawn and shown: the repeat carries it, as the job does.
    panel_one = client.get(f"/api/jobs/{job_id}/").json()["panels"][0]
    assert again.json()["delivered"] == [
        {"index": 1, "image_url": panel_one["image_url"], "check": None}
    ]

    job = client.get(f"/api/jobs/{job_id}/").json()
    assert job["state"] == "awaiting_decision" and job["confirmed"] is True
    assert set(job) >= {"id", "storyboard", "version", "panels", "created_at", "confirm_by"}
    first = job["panels"][0]
    assert first["state"] == "delivered" and first["attempts"] == 1
    assert client.get(first["image_url"]).status_code == 200

    with django_capture_on_commit_callbacks(execute=True):
        redo = post(client, f"/api/jobs/{job_id}/panels/1/redo/")
    assert redo.status_code == 202
    assert redo.json()["panels"][0]["attempts"] == 2
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, f"/api/jobs/{job_id}/panels/1/approve/").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        done = post(client, f"/api/jobs/{job_id}/panels/2/approve/")
    assert done.json().get("state") == "completed", done.json()
    assert client.get("/api/me/").json()["credits"] == {"available": 2, "held": 0}

    events = client.get(f"/api/jobs/{job_id}/events/").json()["events"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["type"] == "job.done"
    tail = client.get(f"/api/jobs/{job_id}/events/?after={len(events) - 2}").json()["events"]
    assert [e["seq"] for e in tail] == [len(events) - 1, len(events)]
    assert client.get(f"/api/jobs/{job_id}/events/?after=x").status_code == 400


def test_a_decision_out_of_turn_is_409(
    client, board, funded, renders, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job_id = post(client, f"/api/storyboards/{board.pk}/generate/").json()["job"]
    response = post(client, f"/api/jobs/{job_id}/panels/2/approve/")
    assert response.status_code == 409 and response.json()["error"] == "illegal_transition"
    assert post(client, f"/api/jobs/{job_id}/panels/9/approve/").status_code == 404


def test_cancel_by_beacon_with_a_form_token(user, board, funded):
    job, _ = services.generate(user=user, storyboard=board)
    beacon = Client(enforce_csrf_checks=True)
    beacon.force_login(user)
    beacon.get("/")  # any page sets the CSRF cookie
    csrf = beacon.cookies["csrftoken"].value
    refused = beacon.post(f"/api/jobs/{job.pk}/cancel/")
    assert refused.status_code == 403
    response = beacon.post(f"/api/jobs/{job.pk}/cancel/", {"csrfmiddlewaretoken": csrf})
    assert response.status_code == 200 and response.json()["state"] == "cancelled"
    assert ledger.account_for(user).held == 0


@pytest.mark.parametrize(
    "method, url",
    [
        ("get", "/api/jobs/{job}/"),
        ("post", "/api/jobs/{job}/cancel/"),
        ("post", "/api/jobs/{job}/panels/1/approve/"),
        ("post", "/api/jobs/{job}/panels/1/redo/"),
        ("get", "/api/jobs/{job}/events/"),
        ("post", "/api/storyboards/{board}/generate/"),
        ("get", "/comics/{board}/jobs/{job}/"),
        ("get", "/comics/{board}/jobs/{job}/read/"),
        ("get", "/comics/{board}/jobs/{job}/comic.pdf"),
    ],
)
def test_another_persons_job_is_404(client, user, board, funded, make_user, method, url):
    job, _ = services.generate(user=user, storyboard=board)
    client.force_login(make_user())
    response = getattr(client, method)(url.format(job=job.pk, board=board.pk))
    assert response.status_code == 404
    job.refresh_from_db()
    assert job.state == "queued"


def test_deleting_a_storyboard_cancels_its_live_job_and_releases(client, user, board, funded):
    services.generate(user=user, storyboard=board)
    assert ledger.account_for(user).held == 1
    assert client.delete(f"/api/storyboards/{board.pk}/").status_code == 204
    account = ledger.account_for(user)
    assert (account.available, account.held) == (5, 0)


def test_the_dashboard_leads_back_to_a_live_job_and_a_finished_comic(
    client, user, board, funded, renders, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job, _ = services.generate(user=user, storyboard=board)
    page = client.get("/").content.decode()
    assert f'href="/comics/{board.pk}/jobs/{job.pk}/"' in page and "Rendering" in page
    for index in (1, 2):
        with django_capture_on_commit_callbacks(execute=True):
            services.approve_panel(job=job, index=index)
    page = client.get("/").content.decode()
    assert f'href="/comics/{board.pk}/read/"' in page  # the comic's pages
