"""Bounded resources (issue #14 §3): per-person caps on comics and live jobs, a throttle
on storyboard writes, and a daily quota on chat-model drafting."""

from datetime import UTC, datetime

import pytest
from rest_framework.throttling import ScopedRateThrottle

from ledger import services as ledger
from mangagen.kernel import quotas
from mangagen.storyboards import services as storyboards

pytestmark = pytest.mark.django_db


def complete_board(owner, title="t"):
    board = storyboards.create_storyboard(owner=owner, title=title, story="Aiko ran.")
    return storyboards.update_storyboard(storyboard=board, panels=[{"description": "x"}])


def test_a_person_may_keep_only_so_many_storyboards(client, user, make_user, settings):
    settings.MAX_STORYBOARDS_PER_PERSON = 2

    def start():
        return client.post("/api/storyboards/", {"title": "t"}, content_type="application/json")

    client.force_login(user)
    made = [start(), start()]
    refused = start()
    assert [m.status_code for m in made] == [201, 201]
    assert refused.status_code == 429
    assert refused.json()["error"] == "too_many_storyboards"
    assert "delete one" in refused.json()["detail"]
    client.delete(f"/api/storyboards/{made[0].json()['id']}/")
    assert start().status_code == 201
    client.force_login(make_user())  # the cap is per person
    assert start().status_code == 201


def test_a_person_may_render_only_so_many_comics_at_once(client, user, settings, enqueued):
    settings.MAX_LIVE_JOBS_PER_PERSON = 2
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    ledger.grant(account=ledger.account_for(user), amount=10, key="seed", reason="x")
    boards = [complete_board(user, f"b{n}") for n in range(3)]
    client.force_login(user)
    codes = [client.post(f"/api/storyboards/{b.pk}/generate/").status_code for b in boards]
    assert codes == [201, 201, 429]
    again = client.post(f"/api/storyboards/{boards[0].pk}/generate/")
    assert again.status_code == 200  # its own live job is not another one
    third = client.post(f"/api/storyboards/{boards[2].pk}/generate/").json()
    assert third["error"] == "too_many_live_jobs"
    first_job = again.json()["job"]
    client.post(f"/api/jobs/{first_job}/cancel/")
    assert client.post(f"/api/storyboards/{boards[2].pk}/generate/").status_code == 201
    account = ledger.account_for(user)
    account.refresh_from_db()
    assert account.held == 2  # the refused Generate held nothing


@pytest.mark.parametrize("method", ["post", "patch", "delete"])
def test_storyboard_writes_are_throttled_and_reads_are_not(client, user, monkeypatch, method):
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"storyboards": "2/min"})
    boards = [storyboards.create_storyboard(owner=user, title=f"t{n}") for n in range(4)]
    client.force_login(user)

    def write(n):
        if method == "post":
            return client.post("/api/storyboards/", {"title": "t"}, content_type="application/json")
        url = f"/api/storyboards/{boards[n].pk}/"
        return getattr(client, method)(url, {"title": "u"}, content_type="application/json")

    codes = [write(n).status_code for n in range(3)]
    assert codes[-1] == 429 and 429 not in codes[:2]
    assert client.get("/api/storyboards/").status_code == 200
    assert client.get(f"/api/storyboards/{boards[3].pk}/").status_code == 200


def test_chat_drafts_have_a_daily_quota(client, user, settings, monkeypatch):
    from mangagen.drafting.draft import Draft
    from mangagen.storyboards import services as board_services

    calls = []

    class Drafter:
        name = "openai"

        def draft(self, **kwargs):
            calls.append(kwargs)
            return Draft(panels=[{"description": "drawn"}])

    monkeypatch.setattr(board_services, "get_drafter", lambda: Drafter())
    settings.DRAFTER, settings.DRAFT_DAILY_QUOTA = "openai", 2
    board = storyboards.create_storyboard(owner=user, title="t", story="Aiko ran.")
    client.force_login(user)
    codes = [client.post(f"/api/storyboards/{board.pk}/draft/").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    assert len(calls) == 2  # the refused draft never reached the chat model
    refused = client.post(f"/api/storyboards/{board.pk}/draft/")
    assert refused.json()["error"] == "draft_quota"
    assert 0 < int(refused["Retry-After"]) <= 86400


def test_the_quota_counts_per_day_and_not_for_the_free_drafter(user, settings):
    settings.DRAFTER, settings.DRAFT_DAILY_QUOTA = "openai", 1
    monday = datetime(2026, 11, 30, 23, 59, tzinfo=UTC)
    quotas.take_draft(user=user, now=monday)
    with pytest.raises(quotas.LimitReached) as refused:
        quotas.take_draft(user=user, now=monday)
    assert refused.value.retry_after == 60
    quotas.take_draft(user=user, now=datetime(2026, 12, 1, 0, 0, 1, tzinfo=UTC))
    settings.DRAFTER = "rules"
    for _ in range(5):
        quotas.take_draft(user=user, now=monday)
