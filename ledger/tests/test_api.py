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


def test_history_is_paginated_newest_first_a_row_per_hold_with_its_effect(client, account):
    for i in range(3):
        hold = services.authorize(account=account, amount=2, key=f"h{i}", reference=f"p{i}")
        services.capture(hold=hold, amount=1)
    services.authorize(account=account, amount=1, key="open", reference="p3")
    body = client.get("/api/credits/transfers/?page_size=3").json()
    assert body["count"] == 5  # the grant and four holds: a hold and its capture are one row
    assert len(body["results"]) == 3 and body["next"]
    newest, captured = body["results"][:2]
    assert (newest["kind"], newest["outcome"]) == ("pending", "pending")
    assert (newest["available_delta"], newest["held_delta"]) == (-1, 1)
    assert (captured["outcome"], captured["outcome_words"]) == ("captured", "paid")
    assert (captured["available_delta"], captured["held_delta"]) == (-1, 0)
    assert captured["resolved_at"]
    everything = client.get("/api/credits/transfers/?page_size=50").json()["results"]
    assert sum(t["available_delta"] for t in everything) == 10 - 3 - 1  # three paid, one held
    assert sum(t["held_delta"] for t in everything) == 1
    assert everything[-1]["description"] == "welcome credits"


def test_transfers_show_only_your_own(client, account, make_user):
    other = services.account_for(make_user())
    services.grant(account=other, amount=99, key="other", reason="not yours")
    results = client.get("/api/credits/transfers/").json()["results"]
    assert [t["description"] for t in results] == ["welcome credits"]


def test_me(client, account):
    assert client.get("/api/me/").json() == {
        "username": "aiko",
        "credits": {"available": 10, "held": 0},
        "credits_as_of": 1,  # the one grant
    }


@pytest.mark.parametrize("url", ["/api/me/", "/api/credits/", "/api/credits/transfers/"])
def test_anonymous_callers_get_403_in_the_error_shape(client, url):
    response = client.get(url)
    assert response.status_code == 403
    assert response.json()["error"] == "not_authenticated"
    assert response.json()["detail"]


def test_figures_grow_as_of_with_every_change_and_read_one_snapshot(account, make_user):
    from ledger import selectors

    first = selectors.figures_of(user_id=account.user_id)
    assert (first.available, first.held) == (10, 0)
    hold = services.authorize(account=account, amount=2, key="f1", reference="r")
    held = selectors.figures_of(user_id=account.user_id)
    assert (held.available, held.held) == (8, 2) and held.as_of > first.as_of
    services.release(hold=hold, reason="back", key="f1:release")
    back = selectors.figures_of(user_id=account.user_id)
    # The same figures as at first, read later: the later reading is the greater.
    assert (back.available, back.held) == (10, 0) and back.as_of > held.as_of
    # Another person's journal is not counted in yours.
    other = services.account_for(make_user())
    services.grant(account=other, amount=5, key="f-other", reason="theirs")
    assert selectors.figures_of(user_id=account.user_id) == back
    assert selectors.figures_of(user_id=make_user().pk) == selectors.Figures(0, 0, 0)
