"""Who may do what: ownership, CSRF, rate limits, anonymous callers, production settings."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.throttling import ScopedRateThrottle

from ledger import services as ledger
from mangagen.jobs import services as jobs
from mangagen.storyboards import services as storyboards

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def owned(user, enqueued, settings):
    """A storyboard and a job of `user`, with an enqueue that goes nowhere."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    ledger.grant(account=ledger.account_for(user), amount=5, key="seed", reason="x")
    board = storyboards.create_storyboard(owner=user, title="Mine", story="Aiko ran.")
    board = storyboards.update_storyboard(
        storyboard=board,
        characters=[{"name": "Aiko", "description": "red scarf"}],
        panels=[{"description": "x", "characters": ["Aiko"]}],
    )
    job, _ = jobs.generate(user=user, storyboard=board)
    return {"board": board.pk, "job": job.pk}


ENDPOINTS = [
    ("get", "/api/storyboards/{board}/"),
    ("patch", "/api/storyboards/{board}/"),
    ("delete", "/api/storyboards/{board}/"),
    ("post", "/api/storyboards/{board}/draft/"),
    ("post", "/api/storyboards/{board}/speculate/"),
    ("post", "/api/storyboards/{board}/generate/"),
    ("get", "/api/jobs/{job}/"),
    ("post", "/api/jobs/{job}/cancel/"),
    ("post", "/api/jobs/{job}/panels/1/approve/"),
    ("post", "/api/jobs/{job}/panels/1/redo/"),
    ("get", "/api/jobs/{job}/events/"),
    # Added with pages, kept panels, character sheets and the Review token:
    ("get", "/api/storyboards/{board}/quote/"),
    ("get", "/api/storyboards/{board}/pages/"),
    ("get", "/api/storyboards/{board}/export/"),
    ("get", "/api/storyboards/{board}/panels/1/takes/"),
    ("post", "/api/storyboards/{board}/panels/1/takes/1/choose/"),
    ("post", "/api/storyboards/{board}/characters/Aiko/sheet/"),
    ("put", "/api/storyboards/{board}/characters/Aiko/sheet/"),
    ("delete", "/api/storyboards/{board}/characters/Aiko/sheet/"),
    ("post", "/api/storyboards/{board}/speculate/leave/"),
]
PAGES = [
    "/comics/{board}/story/",
    "/comics/{board}/review/",
    "/comics/{board}/read/",
    "/comics/{board}/jobs/{job}/",
    "/comics/{board}/jobs/{job}/read/",
    "/comics/{board}/jobs/{job}/comic.pdf",
]


@pytest.mark.parametrize("method, url", ENDPOINTS)
def test_another_signed_in_person_gets_404_everywhere(client, owned, make_user, method, url):
    client.force_login(make_user())
    response = getattr(client, method)(url.format(**owned), {}, content_type="application/json")
    assert response.status_code == 404, response.content
    assert response.json()["error"] == "not_found"


@pytest.mark.parametrize("url", PAGES)
def test_another_persons_pages_are_404(client, owned, make_user, url):
    client.force_login(make_user())
    assert client.get(url.format(**owned)).status_code == 404


def test_the_stranger_changed_nothing(client, owned, make_user, user):
    client.force_login(make_user())
    for method, url in ENDPOINTS:
        getattr(client, method)(
            url.format(**owned), {"title": "x"}, content_type="application/json"
        )
    client.force_login(user)
    assert client.get(f"/api/storyboards/{owned['board']}/").json()["title"] == "Mine"
    assert client.get(f"/api/jobs/{owned['job']}/").json()["state"] == "queued"


@pytest.mark.parametrize(
    "method, url",
    [*ENDPOINTS, ("get", "/api/me/"), ("get", "/api/credits/"), ("get", "/api/credits/transfers/")],
)
def test_anonymous_api_callers_get_403(client, owned, method, url):
    response = getattr(client, method)(url.format(**owned), {}, content_type="application/json")
    assert response.status_code == 403
    assert response.json()["error"] == "not_authenticated"


@pytest.mark.parametrize("url", ["/", "/credits/", "/comics/new/", *PAGES])
def test_anonymous_page_visitors_are_sent_to_login(client, owned, url):
    response = client.get(url.format(**owned))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


STATE_CHANGING = [
    ("post", "/api/storyboards/", {"title": "t"}),
    ("patch", "/api/storyboards/{board}/", {"title": "t"}),
    ("delete", "/api/storyboards/{board}/", {}),
    ("post", "/api/storyboards/{board}/draft/", {}),
    ("post", "/api/storyboards/{board}/speculate/", {}),
    ("post", "/api/storyboards/{board}/generate/", {}),
    ("post", "/api/jobs/{job}/cancel/", {}),
    ("post", "/api/jobs/{job}/panels/1/approve/", {}),
    ("post", "/api/jobs/{job}/panels/1/redo/", {}),
    ("post", "/api/storyboards/{board}/panels/1/takes/1/choose/", {}),
    ("post", "/api/storyboards/{board}/characters/Aiko/sheet/", {}),
    ("delete", "/api/storyboards/{board}/characters/Aiko/sheet/", {}),
    ("post", "/api/storyboards/{board}/speculate/leave/", {"token": "t"}),
    ("post", "/api/credits/checkout/", {"pack": "starter"}),
    ("post", "/credits/demo/", {}),
    ("post", "/accounts/logout/", {}),
]


@pytest.mark.parametrize("method, url, body", STATE_CHANGING)
def test_csrf_is_required_on_every_state_change(owned, user, method, url, body):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    response = getattr(browser, method)(url.format(**owned), body, content_type="application/json")
    assert response.status_code == 403
    browser.get("/")  # the page sets the csrftoken cookie
    token = browser.cookies["csrftoken"].value
    allowed = getattr(browser, method)(
        url.format(**owned), body, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert allowed.status_code != 403 or "CSRF" not in allowed.content.decode()


@pytest.mark.parametrize(
    "scope, method, url",
    [
        ("speculate", "post", "/api/storyboards/{board}/speculate/"),
        ("generate", "post", "/api/storyboards/{board}/generate/"),
        ("draft", "post", "/api/storyboards/{board}/draft/"),
        ("checkout", "post", "/api/credits/checkout/"),
        ("storyboards", "post", "/api/storyboards/"),
        ("storyboards", "patch", "/api/storyboards/{board}/"),
    ],
)
def test_rate_limits_answer_429_with_retry_after(
    client, owned, user, monkeypatch, scope, method, url
):
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {scope: "3/min"})
    client.force_login(user)
    codes = [
        getattr(client, method)(
            url.format(**owned), {"pack": "starter"}, content_type="application/json"
        )
        for _ in range(5)
    ]
    assert [c.status_code == 429 for c in codes] == [False, False, False, True, True]
    limited = codes[-1]
    assert int(limited["Retry-After"]) > 0
    assert limited.json()["error"] == "throttled"


def test_rate_limits_are_per_person(client, owned, user, make_user, monkeypatch):
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"draft": "1/min"})
    client.force_login(user)
    url = f"/api/storyboards/{owned['board']}/draft/"
    assert client.post(url).status_code == 200
    assert client.post(url).status_code == 429
    other = make_user()
    board = storyboards.create_storyboard(owner=other, title="t", story="Kenji ran.")
    client.force_login(other)
    assert client.post(f"/api/storyboards/{board.pk}/draft/").status_code == 200


def run_settings(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "ALLOWED_HOSTS")} | env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "env, complaint",
    [
        ({"DEBUG": "off", "ALLOWED_HOSTS": "comics.example"}, "SECRET_KEY must be set"),
        ({"DEBUG": "off", "SECRET_KEY": "k" * 60}, "ALLOWED_HOSTS must be set"),
    ],
)
def test_production_refuses_to_start_without_its_settings(env, complaint):
    done = run_settings(env)
    assert done.returncode != 0
    assert complaint in done.stderr


def test_production_settings_pass_check_deploy():
    done = run_settings(
        {
            "DEBUG": "off",
            "SECRET_KEY": "a-long-random-production-secret-" + "x" * 40,
            "ALLOWED_HOSTS": "comics.example",
        }
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "no issues" in done.stdout
