"""GET /api/credits/ and /api/credits/transfers/ (docs/api.md, "Credits and payments")."""

import pytest

from ledger import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def account(user, client):
    client.force_login(user)
    account = services.account_for(user)
    services.grant(account=account, amount=10, key="seed", reason="welcome credits")
    return account


def test_credits_show_balance_and_open_holds(client, account):
    hold = services.authorize(account=account, amount=2, key="h", reference="job 1 panel 1")
    done = services.authorize(account=account, amount=1, key="h2", reference="job 1 panel 2")
    services.capture(hold=done)
    body = client.get("/api/credits/").json()
    assert body["available"] == 7 and body["held"] == 2
    assert [h["id"] for h in body["holds"]] == [hold.pk]
    assert set(body["holds"][0]) >= {"id", "amount", "state", "reference", "expires_at"}
    assert body["holds"][0]["reference"] == "job 1 panel 1"


def test_transfers_are_paginated_newest_first_with_their_effects(client, account):
    for i in range(3):
        hold = services.authorize(account=account, amount=2, key=f"h{i}", reference=f"p{i}")
        services.capture(hold=hold, amount=1)
    body = client.get("/api/credits/transfers/?page_size=4").json()
    assert body["count"] == 7
    assert len(body["results"]) == 4 and body["next"]
    newest = body["results"][0]
    assert newest["kind"] == "post"
    assert (newest["available_delta"], newest["held_delta"]) == (1, -2)
    everything = client.get("/api/credits/transfers/?page_size=50").json()["results"]
    assert sum(t["available_delta"] for t in everything) == 7
    assert sum(t["held_delta"] for t in everything) == 0
    assert everything[-1]["reason"] == "welcome credits"


def test_transfers_show_only_your_own(client, account, make_user):
    other = services.account_for(make_user())
    services.grant(account=other, amount=99, key="other", reason="not yours")
    results = client.get("/api/credits/transfers/").json()["results"]
    assert [t["reason"] for t in results] == ["welcome credits"]


def test_me(client, account):
    assert client.get("/api/me/").json() == {
        "username": "aiko",
        "credits": {"available": 10, "held": 0},
    }


@pytest.mark.parametrize("url", ["/api/me/", "/api/credits/", "/api/credits/transfers/"])
def test_anonymous_callers_get_403_in_the_error_shape(client, url):
    response = client.get(url)
    assert response.status_code == 403
    assert response.json()["error"] == "not_authenticated"
    assert response.json()["detail"]
