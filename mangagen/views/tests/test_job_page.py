"""The job page carries the delivered panel in its HTML: on screen with the first paint."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from ledger import services as ledger
from mangagen.jobs import services
from mangagen.jobs.models import LIVE_STATES
from mangagen.storyboards import services as storyboards

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("instant_renders")]


def test_a_panel_ready_before_generate_is_in_the_job_pages_html(
    user, client, run, django_capture_on_commit_callbacks
):
    ledger.grant(account=ledger.account_for(user), amount=3, key="seed", reason="x")
    board = storyboards.create_storyboard(owner=user, title="Painted")
    board = storyboards.update_storyboard(
        storyboard=board, panels=[{"description": "A rooftop."}, {"description": "A jump."}]
    )
    with django_capture_on_commit_callbacks(execute=True):
        job = services.start_job(
            user=user,
            storyboard=board,
            confirmed=False,
            confirm_by=timezone.now() + timedelta(minutes=10),
        )
    (job_id, index, attempt), _ = run.take()
    assert services.perform_render(job_id=job_id, index=index, attempt=attempt) == "ready"
    client.force_login(user)

    before = client.get(f"/comics/{board.pk}/jobs/{job.pk}/").content.decode()
    assert "<img src=" not in before  # unconfirmed: no free image, not even in the HTML

    with django_capture_on_commit_callbacks(execute=True):
        assert services.generate(user=user, storyboard=board)[1] == "attached"
    page = client.get(f"/comics/{board.pk}/jobs/{job.pk}/")
    html = page.content.decode()
    url = job.panels.get(index=1).image.name.removeprefix("renders/")
    assert f'<img src="/media/renders/{url}"' in html
    embedded = page.context["job_data"]
    assert embedded["panels"][0]["state"] == "delivered"
    start = html.index('id="job-data"')
    data = json.loads(html[html.index(">", start) + 1 : html.index("</script>", start)])
    assert data["panels"][0]["image_url"] == f"/media/renders/{url}"
    assert client.get(data["panels"][0]["image_url"]).status_code == 200


def test_the_scripts_data_comes_from_the_server_and_the_test_hook_only_with_debug(
    user, client, enqueued, settings
):
    """job.js reads the live job states (the enum) and the reader's URL from the page;
    window.mangagenJob, the browser tests' handle, is offered only with DEBUG."""
    ledger.grant(account=ledger.account_for(user), amount=3, key="seed", reason="x")
    board = storyboards.create_storyboard(owner=user, title="Data")
    board = storyboards.update_storyboard(storyboard=board, panels=[{"description": "A rooftop."}])
    job = services.generate(user=user, storyboard=board)[0]
    client.force_login(user)

    settings.DEBUG = False
    html = client.get(f"/comics/{board.pk}/jobs/{job.pk}/").content.decode()
    start = html.index('id="live-job-states"')
    states = json.loads(html[html.index(">", start) + 1 : html.index("</script>", start)])
    assert states == [str(state) for state in LIVE_STATES]
    assert f'data-read-url="/comics/{board.pk}/jobs/{job.pk}/read/"' in html
    assert "data-test-hook" not in html

    settings.DEBUG = True
    assert "data-test-hook" in client.get(f"/comics/{board.pk}/jobs/{job.pk}/").content.decode()
