"""Generate attaching to a speculation after the storyboard changed (confirm_job's rebase).

The speculation was started from the storyboard as it was; the person edited
it (in another tab, or the beacon that ends a speculation on leaving Review
was lost) and then pressed Generate, which attaches. What is drawn and
charged must follow the storyboard as it is now.
"""

from datetime import timedelta

import pytest
from django.utils import timezone, translation

from mangagen.jobs import attempts, services, specs
from mangagen.jobs.models import JobState
from mangagen.storyboards import services as storyboards
from tests.support import factories
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]

ONE_TWO_THREE = [{"description": "One."}, {"description": "Two."}, {"description": "Three."}]


def speculate(user, board, run):
    with run.commits():
        return services.start_job(
            user=user,
            storyboard=board,
            confirmed=False,
            confirm_by=timezone.now() + timedelta(minutes=10),
        )


def keep_panel_one(user, board, run, enqueued) -> None:
    """Panel one delivered (paid, so kept) by a job the person then stopped."""
    job = run.generate(user, board)
    assert run.render() == "delivered"
    with run.commits():
        services.cancel_job(job=job)
    enqueued.clear()


def test_a_style_changed_after_speculating_is_the_style_drawn(user, run, monkeypatch):
    factories.funded_account(user)
    board = factories.storyboard(user, panels=ONE_TWO_THREE[:2])
    speculation = speculate(user, board, run)
    assert speculation.style == "manga"
    assert run.render() == "ready"  # drawn in manga, not shown
    storyboards.update_storyboard(storyboard=board, style="noir")
    with run.commits():
        job, how = services.generate(user=user, storyboard=board)
    assert how == "attached" and job.style == "noir"
    drawn = []
    real = specs.panel_spec
    monkeypatch.setattr(
        attempts, "panel_spec", lambda j, p, **shape: drawn.append(real(j, p, **shape)) or drawn[-1]
    )
    assert run.render() == "delivered"
    assert [spec.style for spec in drawn] == ["noir"]
    job.refresh_from_db()
    assert job.style == "noir"
    assert_ledger_invariants()


def test_the_panel_being_drawn_removed_and_the_rest_kept_ends_the_job(user, run, enqueued, client):
    account = factories.funded_account(user)
    board = factories.storyboard(user, panels=ONE_TWO_THREE[:2])
    keep_panel_one(user, board, run, enqueued)
    speculation = speculate(user, board, run)
    assert speculation.current_index == 2
    storyboards.update_storyboard(storyboard=board, panels=ONE_TWO_THREE[:1])
    client.force_login(user)
    with run.commits():
        response = client.post(f"/api/storyboards/{board.pk}/generate/")
    assert response.status_code in (200, 201), response.content
    speculation.refresh_from_db()
    assert speculation.state == JobState.CANCELLED  # every panel is kept: nothing to draw
    assert balance(account) == (9, 0)  # panel one's credit only
    assert_ledger_invariants()


def test_a_render_of_a_panel_the_rebase_reset_is_dropped(user, run, enqueued, client):
    """The speculation's render of panel two was still waiting in the queue when
    the person edited panels one and two and attached: that render's hold is
    released, so when it finally runs it must not land (a panel ready with no
    hold could never be approved)."""
    account = factories.funded_account(user)
    board = factories.storyboard(user, panels=ONE_TWO_THREE)
    keep_panel_one(user, board, run, enqueued)
    speculation = speculate(user, board, run)
    (old, _) = run.take()
    assert old == (speculation.pk, 2, 1)
    storyboards.update_storyboard(
        storyboard=board,
        panels=[
            {"description": "One, redrawn."},
            {"description": "Two, redrawn."},
            ONE_TWO_THREE[2],
        ],
    )
    with run.commits():
        job, how = services.generate(user=user, storyboard=board)
    assert how == "attached" and job.current_index == 1
    with run.commits():
        assert services.perform_render(job_id=old[0], index=old[1], attempt=old[2]) == "stale"
    assert job.panels.get(index=2).state == "pending"
    assert run.render() == "delivered"  # panel one, redrawn
    client.force_login(user)
    with run.commits():
        approved = client.post(f"/api/jobs/{job.pk}/panels/1/approve/")
    assert approved.status_code == 200, approved.content
    assert sum(balance(account)) == 8  # panel one twice: kept, then redrawn
    assert_ledger_invariants()


def test_a_render_whose_hold_ended_before_generate_fails_in_the_persons_language(user, run, client):
    """The speculation's hold ran out while the person read Review: Generate shows no
    picture and charges nothing, and says why in words the interface translates (the
    ledger's own words go to the log)."""
    from ledger.models import Hold

    factories.funded_account(user)
    board = factories.storyboard(user, panels=ONE_TWO_THREE[:2])
    job = speculate(user, board, run)
    assert run.render() == "ready"
    Hold.objects.filter(state=Hold.State.PENDING).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    with run.commits():
        attached, _ = services.generate(user=user, storyboard=board)
    assert attached.pk == job.pk
    panel = attached.panels.get(index=1)
    assert panel.state == "failed" and "Hold #" not in panel.error
    client.force_login(user)
    with translation.override(None):  # the requests' languages stay with them
        english = client.get(f"/api/jobs/{job.pk}/").json()["panels"][0]["error"]
        japanese = client.get(f"/api/jobs/{job.pk}/", HTTP_ACCEPT_LANGUAGE="ja").json()
    assert english.startswith("This render's hold ended before it could be shown")
    assert japanese["panels"][0]["error"].startswith("この描画")
    assert_ledger_invariants()
