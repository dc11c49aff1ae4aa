"""Admission by expected benefit, budgets, and the Review page's token."""

from datetime import timedelta

import pytest
from django.utils import timezone

from ledger import services as ledger
from mangagen.jobs import services as jobs
from mangagen.jobs.models import Job, JobState
from mangagen.renderers import observed
from mangagen.renderers.gpu_pool import GpuPool, Priority
from speculation import admission, services
from speculation.models import DeclineReason, Outcome, Speculation
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.remote_renders import finished
from tests.support.speculation import fund, make_board

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders", "enqueued")]


@pytest.fixture
def cold_gpu(settings):
    """A provider whose containers are cold: panel one would take 20 + 2 s."""
    settings.RENDER_COLD_START_SECONDS = 20
    settings.RENDER_SECONDS = 2
    settings.GPU_POOL_SIZE = 2


def hits(user, n):
    """n speculations of this person that Generate attached to."""
    ledger.grant(account=ledger.account_for(user), amount=n, key=f"hits-{user.pk}", reason="x")
    for i in range(n):
        board = make_board(user, f"Hit {i}")
        assert services.speculate(user=user, storyboard=board).outcome == Outcome.LIVE
        assert jobs.generate(user=user, storyboard=board)[1] == "attached"


def visits(seconds, n, *, make_user, per_person=admission.DWELL_PER_PERSON):
    """n past Review visits whose speculation started a job and that ended with
    Generate after `seconds`, by people who made `per_person` visits each."""
    now = timezone.now()
    for start in range(0, n, per_person):
        person = make_user()
        board = make_board(person, "Old")
        for _ in range(min(per_person, n - start)):
            job = Job.objects.create(
                owner=person,
                storyboard=board,
                version=board.version,
                style=board.style,
                confirmed=True,
                state=JobState.COMPLETED,
            )
            row = Speculation.objects.create(
                user=person,
                storyboard=board,
                version=board.version,
                job=job,
                outcome=Outcome.HIT,
                generate_at=now,
            )
            Speculation.objects.filter(pk=row.pk).update(
                created_at=now - timedelta(seconds=seconds)
            )


def test_one_person_cannot_poison_everyones_dwell(user, client, cold_gpu, make_user):
    """A speculate/leave loop of zero-second visits (~500 of them) once made every
    person's speculation `late`. Declined asks are not visits that count, and a
    person counts for DWELL_PER_PERSON visits at most."""
    visits(seconds=60, n=100, make_user=make_user)  # what real people did
    fund(user, 200)
    client.force_login(user)
    board = make_board(user, "Loop")
    for i in range(120):  # the loop: ask, leave at once
        token = f"loop-{i}"
        client.post(
            f"/api/storyboards/{board.pk}/speculate/",
            {"token": token},
            content_type="application/json",
        )
        client.post(f"/api/storyboards/{board.pk}/speculate/leave/", {"token": token})
    for i in range(300):  # and beacons naming asks that never came
        client.post(f"/api/storyboards/{board.pk}/speculate/leave/", {"token": f"none-{i}"})
    observed = admission.observed_dwell()
    assert sum(1 for d in observed if d < 5) <= admission.DWELL_PER_PERSON
    someone = make_user()
    fund(someone, 5)
    speculation = services.speculate(user=someone, storyboard=make_board(someone))
    assert speculation.outcome == Outcome.LIVE  # still worth it for everyone else


def test_the_prior_dwell_is_sane_before_anyone_visits():
    dwell = admission.dwell()
    assert dwell.observed == ()
    assert 25 < dwell.median < 35
    assert dwell.chance_longer_than(0) == 1
    assert dwell.chance_longer_than(120) < 0.1


def test_quick_deciders_make_a_cold_render_late(user, cold_gpu, make_user):
    board = make_board(user)
    fund(user, 5)
    visits(seconds=6, n=200, make_user=make_user)
    assert admission.dwell().chance_longer_than(22) < 0.2
    speculation = services.speculate(user=user, storyboard=board)
    assert (speculation.outcome, speculation.reason) == (Outcome.DECLINED, DeclineReason.LATE)
    assert balance(user) == (5, 0)  # no hold placed


def test_long_readers_make_the_same_render_worth_it(user, cold_gpu, make_user):
    board = make_board(user)
    fund(user, 5)
    visits(seconds=60, n=200, make_user=make_user)
    speculation = services.speculate(user=user, storyboard=board)
    assert speculation.outcome == Outcome.LIVE
    assert speculation.predicted_seconds == pytest.approx(22, abs=0.5)
    assert balance(user) == (4, 1)


def test_a_warm_container_makes_even_quick_deciders_worth_it(user, cold_gpu, make_user):
    board = make_board(user)
    fund(user, 5)
    visits(seconds=6, n=200, make_user=make_user)
    pool = GpuPool()
    # An earlier render booted a container (no wait here) and gave it back: now warm.
    earlier = pool.try_acquire(ticket="earlier", priority=Priority.CONFIRMED, cold_start_seconds=0)
    pool.release(earlier)
    speculation = services.speculate(user=user, storyboard=board)
    assert speculation.outcome == Outcome.LIVE
    assert speculation.predicted_seconds == pytest.approx(2, abs=0.5)


def test_what_was_observed_of_the_provider_decides_not_the_prior(user, cold_gpu, make_user):
    """The prior says 20 + 2 s, too late for quick deciders; the provider was seen to
    boot in 2 s and draw in 0.5 s, which makes the same render worth starting."""
    board = make_board(user)
    fund(user, 5)
    visits(seconds=6, n=200, make_user=make_user)
    for _ in range(observed.MIN_SAMPLES):
        observed.record(finished(2.0, 0.5, provider="procedural", model="simulated"))
    speculation = services.speculate(user=user, storyboard=board)
    assert speculation.outcome == Outcome.LIVE
    assert speculation.predicted_seconds == pytest.approx(2.5, abs=0.3)


def test_confirmed_work_waiting_for_the_gpu_sheds_speculation(user, settings):
    settings.GPU_POOL_SIZE = 1
    board = make_board(user)
    fund(user, 5)
    pool = GpuPool()
    assert pool.try_acquire(ticket="busy", priority=Priority.CONFIRMED)
    assert pool.try_acquire(ticket="waiting", priority=Priority.CONFIRMED) is None
    speculation = services.speculate(user=user, storyboard=board)
    assert speculation.reason == DeclineReason.BUSY
    assert balance(user) == (5, 0)


def abandon(user, n):
    for i in range(n):
        spec = services.speculate(user=user, storyboard=make_board(user, f"Left {i}"))
        assert spec.outcome == Outcome.LIVE
        jobs.cancel_job(job=spec.job)  # left Review
        spec.refresh_from_db()
        assert spec.outcome == Outcome.ABANDONED


def test_a_person_who_abandons_a_lot_needs_a_recent_hit_rate(user, make_user, settings):
    settings.SPECULATION_PERSON_ABANDONS_PER_HOUR = 3
    fund(user, 5)
    abandon(user, 3)
    declined = services.speculate(user=user, storyboard=make_board(user))
    assert declined.reason == DeclineReason.BUDGET
    assert balance(user) == (5, 0)
    # Someone else is not affected by this person's budget.
    other = make_user()
    fund(other, 1)
    assert services.speculate(user=other, storyboard=make_board(other)).outcome == Outcome.LIVE
    # A person who attaches often enough keeps speculating past the same count.
    regular = make_user()
    fund(regular, 5)
    hits(regular, 2)
    abandon(regular, 3)
    assert admission.person_budget(regular).recent_hit_rate == pytest.approx(2 / 5)
    assert services.speculate(user=regular, storyboard=make_board(regular)).outcome == "live"


def test_the_global_budget_per_hour(user, make_user, settings):
    settings.SPECULATION_BUDGET_PER_HOUR = 1
    fund(user, 5)
    assert services.speculate(user=user, storyboard=make_board(user)).outcome == Outcome.LIVE
    other = make_user()
    fund(other, 5)
    declined = services.speculate(user=other, storyboard=make_board(other))
    assert declined.reason == DeclineReason.BUDGET


def test_one_credit_accounts_that_never_attach_share_a_small_part_of_the_cap(make_user, settings):
    settings.SPECULATION_MAX_INFLIGHT = 10
    settings.SPECULATION_UNPROVEN_SHARE = 20  # two of ten
    regular = make_user()
    fund(regular, 2)
    hits(regular, 1)
    newcomers = [make_user() for _ in range(3)]
    for person in newcomers:
        fund(person, 1)
    answers = [services.speculate(user=p, storyboard=make_board(p)) for p in newcomers]
    assert [a.outcome for a in answers] == [Outcome.LIVE, Outcome.LIVE, Outcome.DECLINED]
    assert answers[2].reason == DeclineReason.CAPACITY
    assert services.speculate(user=regular, storyboard=make_board(regular)).outcome == "live"


# --- the token: leaving while the request is in flight ---------------------------------------


def test_leaving_before_the_answer_means_nothing_starts(user, client):
    board = make_board(user)
    fund(user, 3)
    client.force_login(user)
    left = client.post(f"/api/storyboards/{board.pk}/speculate/leave/", {"token": "t-1"})
    assert left.status_code == 200
    answer = client.post(
        f"/api/storyboards/{board.pk}/speculate/", {"token": "t-1"}, content_type="application/json"
    )
    assert answer.status_code == 200
    assert answer.json() == {"job": None, "hint": False, "reason": "left"}
    assert not Job.objects.exists()
    assert balance(user) == (3, 0)


def test_leaving_after_the_answer_cancels_and_records_the_dwell(user, client):
    board = make_board(user)
    fund(user, 3)
    client.force_login(user)
    answer = client.post(
        f"/api/storyboards/{board.pk}/speculate/", {"token": "t-2"}, content_type="application/json"
    )
    assert answer.status_code == 202
    assert balance(user) == (2, 1)
    client.post(f"/api/storyboards/{board.pk}/speculate/leave/", {"token": "t-2"})
    job = Job.objects.get(pk=answer.json()["job"])
    assert job.state == JobState.CANCELLED
    assert balance(user) == (3, 0)
    speculation = Speculation.objects.get(token="t-2")
    assert speculation.outcome == Outcome.ABANDONED and speculation.left_at is not None
    assert len(admission.observed_dwell()) == 1
    assert_ledger_invariants()


def test_the_beacon_after_generate_keeps_the_job(user, client):
    board = make_board(user)
    fund(user, 3)
    client.force_login(user)
    answer = client.post(
        f"/api/storyboards/{board.pk}/speculate/", {"token": "t-3"}, content_type="application/json"
    )
    assert client.post(f"/api/storyboards/{board.pk}/generate/").json()["attached"] is True
    client.post(f"/api/storyboards/{board.pk}/speculate/leave/", {"token": "t-3"})
    job = Job.objects.get(pk=answer.json()["job"])
    assert job.live and job.confirmed
    speculation = Speculation.objects.get(token="t-3")
    assert speculation.outcome == Outcome.HIT and speculation.left_at is None


def test_generate_after_a_declined_ask_ends_that_visit(user, client, settings):
    board = make_board(user)
    fund(user, 1)
    client.force_login(user)
    client.post(
        f"/api/storyboards/{board.pk}/speculate/", {"token": "t-4"}, content_type="application/json"
    )
    speculation = Speculation.objects.get(token="t-4")
    assert speculation.outcome == Outcome.LIVE
    jobs.cancel_job(job=speculation.job)  # e.g. another tab ended it
    settings.SPECULATION_ENABLED = False  # and the next ask is declined
    declined = client.post(
        f"/api/storyboards/{board.pk}/speculate/", {"token": "t-5"}, content_type="application/json"
    )
    assert declined.json()["hint"] is False
    client.post(f"/api/storyboards/{board.pk}/generate/")
    assert Speculation.objects.get(token="t-5").generate_at is not None


def test_a_token_from_another_person_is_theirs_alone(user, make_user, client):
    board = make_board(user)
    fund(user, 3)
    other = make_user()
    client.force_login(other)
    assert (
        client.post(f"/api/storyboards/{board.pk}/speculate/leave/", {"token": "x"}).status_code
        == 404
    )


def test_the_admin_page_shows_admission_the_pool_budgets_and_the_hourly_chart(
    user, make_user, client
):
    fund(user, 3)
    board = make_board(user)
    services.speculate(user=user, storyboard=board)
    jobs.generate(user=user, storyboard=board)
    admin = make_user("boss", is_staff=True, is_superuser=True)
    client.force_login(admin)
    page = client.get("/admin/speculation/speculation/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Learned dwell on Review" in html and "GPU pool" in html
    # What is known of the provider: the prior until renders are seen.
    assert "Provider, as observed" in html and "(the prior, RENDER_COLD_START_SECONDS" in html
    assert 'id="speculation-chart"' in html and 'class="hit-rate"' in html
    assert "1 of 7200 speculative renders" in html
    chart = page.context["chart"]
    assert len(chart.hours) == 24 and chart.hours[-1].hit_rate == 1.0


def test_the_admin_page_stands_when_redis_is_away(make_user, client, monkeypatch):
    """The pool is shown as unknown and the dwell is read from the database."""
    from django.core.cache import caches
    from redis.exceptions import ConnectionError as RedisDown

    from mangagen.renderers.gpu_pool import GpuPool

    def away(*args, **kwargs):
        raise RedisDown("Redis is away")

    backend = type(caches["default"])
    monkeypatch.setattr(backend, "get", away)
    monkeypatch.setattr(backend, "set", away)
    monkeypatch.setattr(GpuPool, "state", away)
    client.force_login(make_user("boss", is_staff=True, is_superuser=True))
    page = client.get("/admin/speculation/speculation/")
    assert page.status_code == 200
    assert "Learned dwell on Review" in page.content.decode()


def test_asking_again_with_the_token_of_an_ended_speculation_shows_no_hint(user, client):
    board = make_board(user)
    fund(user, 3)
    client.force_login(user)
    url = f"/api/storyboards/{board.pk}/speculate/"
    first = client.post(url, {"token": "t-4"}, content_type="application/json")
    assert first.status_code == 202
    client.post(f"/api/storyboards/{board.pk}/speculate/leave/", {"token": "t-4"})
    again = client.post(url, {"token": "t-4"}, content_type="application/json")
    assert again.status_code == 200
    assert again.json() == {"job": None, "hint": False, "reason": "left"}
    assert balance(user) == (3, 0)


def test_asking_again_with_the_token_of_a_live_speculation_answers_the_same_job(user, client):
    board = make_board(user)
    fund(user, 3)
    client.force_login(user)
    url = f"/api/storyboards/{board.pk}/speculate/"
    first = client.post(url, {"token": "t-5"}, content_type="application/json")
    again = client.post(url, {"token": "t-5"}, content_type="application/json")
    assert again.status_code == 202
    assert again.json()["job"] == first.json()["job"] and again.json()["hint"] is True
    assert balance(user) == (2, 1)


def test_leave_beacons_are_throttled_and_write_nothing_past_it(user, client, monkeypatch):
    from rest_framework.throttling import ScopedRateThrottle

    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"leave": "5/min"})
    board = make_board(user)
    client.force_login(user)
    answers = [
        client.post(f"/api/storyboards/{board.pk}/speculate/leave/", {"token": f"t-{i}"})
        for i in range(8)
    ]
    assert [a.status_code for a in answers] == [200] * 5 + [429] * 3
    assert answers[-1].json()["error"] == "throttled" and answers[-1]["Retry-After"]
    assert Speculation.objects.filter(user=user).count() == 5
