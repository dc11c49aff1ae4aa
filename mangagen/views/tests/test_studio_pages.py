"""The dashboard, the wizard's pages, and the render-to-folder command."""

import re

import pytest
from django.core.management import CommandError, call_command
from PIL import Image

from mangagen.storyboards import services
from mangagen.storyboards.models import Storyboard

pytestmark = pytest.mark.django_db


@pytest.fixture
def drafted(user):
    storyboard = services.create_storyboard(
        owner=user, title="Rooftops", story='Aiko ran. "Go!" Aiko shouted.\n\nKenji followed.'
    )
    services.draft_storyboard(storyboard=storyboard)
    return Storyboard.objects.get(pk=storyboard.pk)


def test_dashboard_lists_your_comics(client, user, drafted, make_user):
    other = make_user()
    services.create_storyboard(owner=other, title="Not yours")
    client.force_login(user)
    page = client.get("/").content.decode()
    assert "Rooftops" in page and "Not yours" not in page
    assert "2 panels" in page
    assert 'href="/comics/new/"' in page


def test_dashboard_for_a_newcomer(client, user):
    client.force_login(user)
    assert "No comics yet" in client.get("/").content.decode()


@pytest.mark.parametrize(
    ("demo", "stripe", "pointer"),
    [
        (True, "", 'action="/credits/demo/"'),
        (False, "", 'href="/credits/">See the credit packs'),
        (True, "sk_test_1", 'href="/credits/">See the credit packs'),
    ],
    ids=["demo", "no-demo", "stripe"],
)
def test_a_newcomer_with_no_credits_is_shown_where_to_get_some(
    client, user, settings, demo, stripe, pointer
):
    settings.DEMO_MODE, settings.STRIPE_SECRET_KEY = demo, stripe
    client.force_login(user)
    page = client.get("/").content.decode()
    assert 'id="get-credits"' in page and pointer in page
    demo_form = 'action="/credits/demo/"' in page
    assert demo_form == (demo and not stripe)  # demo credits only where they are on


def test_no_pointer_once_the_person_has_credits(client, user, account):
    client.force_login(user)
    assert 'id="get-credits"' not in client.get("/").content.decode()


@pytest.mark.parametrize("step", ["story", "characters", "storyboard", "review"])
def test_each_step_renders_with_its_indicator(client, user, drafted, step):
    client.force_login(user)
    page = client.get(f"/comics/{drafted.pk}/{step}/").content.decode()
    assert 'aria-current="step"' in page
    assert f'data-step="{step}"' in page
    assert f"js/step-{step}.js" in page


def test_steps_of_another_persons_comic_are_404(client, drafted, make_user):
    client.force_login(make_user())
    assert client.get(f"/comics/{drafted.pk}/story/").status_code == 404


def test_unknown_step_is_404(client, user, drafted):
    client.force_login(user)
    assert client.get(f"/comics/{drafted.pk}/publish/").status_code == 404


def test_new_comic_page_needs_login(client):
    assert client.get("/comics/new/").status_code == 302


def test_render_storyboard_writes_pngs(drafted, tmp_path, settings):
    settings.RENDER_WIDTH, settings.RENDER_HEIGHT = 320, 240
    call_command("render_storyboard", str(drafted.pk), str(tmp_path), "--instant")
    files = sorted(tmp_path.iterdir())
    assert [f.name for f in files] == ["panel-01.png", "panel-02.png"]
    assert Image.open(files[0]).size == (320, 240)


def test_render_storyboard_refuses_missing_or_empty(user, tmp_path):
    with pytest.raises(CommandError, match="No storyboard"):
        call_command("render_storyboard", "999", str(tmp_path))
    empty = services.create_storyboard(owner=user, title="Empty")
    with pytest.raises(CommandError, match="no panels"):
        call_command("render_storyboard", str(empty.pk), str(tmp_path))


def test_the_dashboard_reads_no_more_for_comics_with_many_jobs(client, user, drafted):
    """It once loaded every job ever made for every comic (a prefetch); now the comics'
    one query asks for the live job's id alone, and no job row is loaded."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from mangagen.jobs.models import Job, JobState

    client.force_login(user)
    for _ in range(30):
        Job.objects.create(
            owner=user, storyboard=drafted, version="old", style="manga", state=JobState.CANCELLED
        )
    live = Job.objects.create(
        owner=user, storyboard=drafted, version=drafted.version, style="manga"
    )
    with CaptureQueriesContext(connection) as seen:
        page = client.get("/").content.decode()
    loaded_jobs = [
        q["sql"] for q in seen.captured_queries if q["sql"].startswith('SELECT "mangagen_job"')
    ]
    assert loaded_jobs == []
    assert f'href="/comics/{drafted.pk}/jobs/{live.pk}/"' in page and "2 panels" in page


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_every_page_names_an_icon_that_is_served(client, path):
    """Without a `<link rel="icon">` the browser asks for /favicon.ico, which nothing
    serves: a 404 in the console of every page. The site's pages and the admin's name
    the SVG speech bubble in static/, and that answers."""
    page = client.get(path).content.decode()
    link = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', page)
    assert link, "no <link rel=icon> in the page"
    icon = client.get(link.group(1))
    assert icon.status_code == 200
    assert b"<svg" in b"".join(icon.streaming_content if icon.streaming else [icon.content])
