"""Kept panels, the quote, pages and exports (issue #12): art and lettering are separate layers.

A text edit keeps the art (and costs nothing) but changes the page; Generate
renders and charges only panels whose art hash has no kept art; a job that
ends keeps what it delivered; strangers see nothing.
"""

import io
import re
import zipfile
from datetime import timedelta

import pytest
from django.utils import timezone
from PIL import Image

from mangagen.jobs import selectors, services
from mangagen.jobs.models import JobState
from mangagen.pages.layout import LayoutPanel, paginate
from mangagen.storyboards import services as storyboards
from mangagen.storyboards.models import KeptArt
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.pages import PANELS, download, edit, page_png

# --- art hash ----------------------------------------------------------------------------------


pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(
        characters=[{"name": "Aiko", "description": "red scarf"}, {"name": "Kenji"}], panels=PANELS
    ),
]


def test_a_text_edit_changes_the_content_hash_but_not_the_art_hash(board):
    before = {p.index: (p.art_hash, p.content_hash) for p in board.panels.all()}
    edit(
        board,
        {
            1: {"caption": "Neo-Kyoto, 2 a.m."},
            2: {"dialogue": [{"speaker": "Aiko", "text": "Who is there?"}]},
        },
    )
    after = {p.index: (p.art_hash, p.content_hash) for p in board.panels.all()}
    assert after[2][0] == before[2][0] and after[2][1] != before[2][1]
    assert after[1][0] == before[1][0] and after[1][1] != before[1][1]
    edit(board, {2: {"description": "Aiko spins round."}})
    assert board.panels.get(index=2).art_hash != before[2][0]


def test_a_characters_description_is_part_of_the_art(board):
    art = board.panels.get(index=2).art_hash
    storyboards.update_storyboard(
        storyboard=board,
        characters=[{"name": "Aiko", "description": "blue scarf"}, {"name": "Kenji"}],
    )
    assert board.panels.get(index=2).art_hash != art
    assert board.panels.get(index=1).art_hash == board.panels.get(index=1).art_hash


# --- kept panels, quote ----------------------------------------------------------------------


def test_delivered_panels_are_kept_and_a_dialogue_edit_costs_nothing(
    account, board, user, client, run
):
    job = run.finish(run.generate(user, board))
    assert balance(account) == (7, 0)
    assert KeptArt.objects.filter(storyboard=board).count() == 3
    client.force_login(user)
    before = page_png(client, board.pk)
    panel_url = selectors.image_url(job.panels.get(index=2), job)
    panel_before = client.get(panel_url)

    edit(board, {2: {"dialogue": [{"speaker": "Aiko", "text": "WHO GOES THERE?"}]}})

    panel_after = client.get(panel_url, HTTP_IF_NONE_MATCH=panel_before["ETag"])
    assert panel_after.status_code == 200, "the panel on screen is lettered anew"
    assert panel_after.content != panel_before.content
    assert client.get(panel_url, HTTP_IF_NONE_MATCH=panel_after["ETag"]).status_code == 304

    quote = client.get(f"/api/storyboards/{board.pk}/quote/").json()
    assert quote == {"render": [], "kept": [1, 2, 3], "credits": 0, "available": 7, "sheets": []}
    after = page_png(client, board.pk)
    assert after != before, "the page shows the new lettering at once"
    again = run.generate(user, board)  # Generate now renders nothing and charges nothing
    assert again.pk != job.pk and again.state == JobState.COMPLETED
    assert run.queued == [] and balance(account) == (7, 0)
    assert_ledger_invariants()


def test_generate_after_a_description_edit_renders_and_charges_only_that_panel(
    account, board, user, client, run
):
    run.finish(run.generate(user, board))
    edit(board, {3: {"description": "Kenji frowns."}})
    client.force_login(user)
    quote = client.get(f"/api/storyboards/{board.pk}/quote/").json()
    assert quote == {"render": [3], "kept": [1, 2], "credits": 1, "available": 7, "sheets": []}

    job = run.generate(user, board)
    assert job.current_index == 3 and run.queued == [(job.pk, 3, 1)]
    assert [p.state for p in job.panels.order_by("index")] == ["approved", "approved", "pending"]
    run.finish(job)
    assert balance(account) == (7 - quote["credits"], 0)  # the quote was exactly the charge
    assert_ledger_invariants()


def test_going_back_to_a_previous_description_reuses_its_kept_art(account, board, user, run):
    run.finish(run.generate(user, board))
    edit(board, {3: {"description": "Kenji frowns."}})
    run.finish(run.generate(user, board))
    assert balance(account) == (6, 0)
    storyboards.update_storyboard(storyboard=board, panels=PANELS)  # back as it was
    run.generate(user, board)
    assert run.queued == [] and balance(account) == (6, 0)


def test_a_redo_keeps_the_older_take_and_it_can_be_chosen_again(
    account, board, user, client, run, django_capture_on_commit_callbacks
):
    job = run.generate(user, board)
    run.render()
    with django_capture_on_commit_callbacks(execute=True):
        services.redo_panel(job=job, index=1)
    run.render()
    client.force_login(user)
    takes = client.get(f"/api/storyboards/{board.pk}/panels/1/takes/").json()["takes"]
    assert len(takes) == 2 and takes[0]["current"]
    spent = balance(account)
    older = takes[1]["id"]
    response = client.post(f"/api/storyboards/{board.pk}/panels/1/takes/{older}/choose/")
    assert response.status_code == 204
    takes = client.get(f"/api/storyboards/{board.pk}/panels/1/takes/").json()["takes"]
    assert takes[0]["id"] == older and balance(account) == spent


def test_an_expired_jobs_panels_stay_in_the_pages_and_the_pdf(account, board, user, client, run):
    job = run.generate(user, board)
    run.render()
    run.approve(job, 1)
    run.render()  # panel 2 delivered, awaiting a decision
    assert services.expire_job_if_due(job_id=job.pk, now=timezone.now() + timedelta(hours=3))
    job.refresh_from_db()
    assert job.state == JobState.EXPIRED
    client.force_login(user)
    pages = client.get(f"/api/storyboards/{board.pk}/pages/").json()
    assert pages["kept"] == [1, 2]
    assert [i for page in pages["pages"] for i in page["panels"]] == [1, 2, 3]
    response, pdf = download(client, board.pk, "pdf")
    assert response.status_code == 200 and pdf.startswith(b"%PDF")
    assert pdf_page_count(pdf) == len(pages["pages"])
    quote = client.get(f"/api/storyboards/{board.pk}/quote/").json()
    assert quote["render"] == [3] and quote["credits"] == 1  # only the undrawn one


def test_a_cancelled_job_keeps_what_it_delivered(account, board, user, client, run):
    job = run.generate(user, board)
    run.render()
    services.cancel_job(job=job)
    client.force_login(user)
    assert client.get(f"/api/storyboards/{board.pk}/quote/").json()["kept"] == [1]


def test_a_speculated_panel_survives_a_text_edit(
    account, board, user, run, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = services.start_job(
            user=user,
            storyboard=board,
            confirmed=False,
            confirm_by=timezone.now() + timedelta(minutes=10),
        )
    run.render()  # ready, not shown, not paid
    edit(board, {1: {"caption": "Neo-Kyoto, later."}})
    confirmed = run.generate(user, board)
    assert confirmed.pk == job.pk
    panel = confirmed.panels.get(index=1)
    assert panel.state == "delivered" and panel.attempts == 1  # no second render
    assert panel.spec["caption"] == "Neo-Kyoto, later."
    assert balance(account) == (9, 0)


# --- pages and exports ----------------------------------------------------------------------


def test_nothing_kept_nothing_to_export(board, user, client):
    client.force_login(user)
    assert client.get(f"/api/storyboards/{board.pk}/pages/").json()["pages"] == []
    for fmt in ("pdf", "cbz", "webtoon"):
        response = client.get(f"/api/storyboards/{board.pk}/export/?format={fmt}")
        assert response.status_code == 409 and response.json()["error"] == "nothing_to_export"
    assert client.get(f"/api/storyboards/{board.pk}/export/?format=exe").status_code == 400


def test_exports_of_a_comic_with_undrawn_panels(account, board, user, client, run):
    job = run.generate(user, board)
    run.render()
    run.approve(job, 1)
    client.force_login(user)
    pages = client.get(f"/api/storyboards/{board.pk}/pages/").json()
    assert pages["direction"] == "rtl" and pages["format"] == "manga"

    response, pdf = download(client, board.pk, "pdf")
    assert response["Content-Type"] == "application/pdf"
    assert 'filename="rooftops.pdf"' in response["Content-Disposition"]
    width, height = pdf_media_box(pdf)
    assert (round(width / 72 * 25.4), round(height / 72 * 25.4)) == (182, 257)  # B5

    response, cbz = download(client, board.pk, "cbz")
    assert response["Content-Type"] == "application/vnd.comicbook+zip"
    archive = zipfile.ZipFile(io.BytesIO(cbz))
    info = archive.read("ComicInfo.xml").decode()
    assert "<Manga>YesAndRightToLeft</Manga>" in info and "<Title>Rooftops</Title>" in info
    assert f"<PageCount>{len(pages['pages'])}</PageCount>" in info
    assert sorted(n for n in archive.namelist() if n.endswith(".png"))[0] == "001.png"

    response, png = download(client, board.pk, "webtoon")
    strip = Image.open(io.BytesIO(png))
    assert response["Content-Type"] == "image/png" and strip.height > 2 * strip.width


def test_exports_are_throttled_per_person(account, board, user, client, make_user, monkeypatch):
    from rest_framework.throttling import ScopedRateThrottle

    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"export": "2/min"})
    client.force_login(user)
    codes = [
        client.get(f"/api/storyboards/{board.pk}/export/?format=pdf").status_code for _ in range(3)
    ]
    assert codes == [409, 409, 429]
    client.force_login(make_user("someone-else"))  # per person: another still may
    assert client.get(f"/api/storyboards/{board.pk}/export/?format=pdf").status_code == 404


def test_strangers_get_404_on_quote_pages_export_and_page_images(
    account, board, user, client, run, make_user
):
    run.finish(run.generate(user, board))
    client.force_login(user)
    image_url = client.get(f"/api/storyboards/{board.pk}/pages/").json()["pages"][0]["image_url"]
    client.force_login(make_user("stranger"))
    for url in (
        f"/api/storyboards/{board.pk}/quote/",
        f"/api/storyboards/{board.pk}/pages/",
        f"/api/storyboards/{board.pk}/export/?format=pdf",
        f"/api/storyboards/{board.pk}/panels/1/takes/",
        f"/comics/{board.pk}/read/",
        image_url,
    ):
        assert client.get(url).status_code == 404, url
    client.logout()
    assert client.get(image_url).status_code in (302, 404)


def test_page_image_names_that_are_not_pages_answer_404(account, board, user, client, run):
    run.finish(run.generate(user, board))
    client.force_login(user)
    image_url = client.get(f"/api/storyboards/{board.pk}/pages/").json()["pages"][0]["image_url"]
    assert client.get(image_url).status_code == 200
    for name in ("page-²", "page-0", "page-999", "page-1x", "page--1", "page-"):
        url = re.sub(r"page-\d+\.png$", f"{name}.png", image_url)
        assert client.get(url).status_code == 404, url


def test_layout_choices_are_saved_and_change_the_pages(account, board, user, client, run):
    run.finish(run.generate(user, board))
    client.force_login(user)
    response = client.patch(
        f"/api/storyboards/{board.pk}/",
        {"layout": {"direction": "ltr", "breaks": [1, 3], "templates": {"1": "tiers"}}},
        content_type="application/json",
    )
    assert response.status_code == 200
    assert response.json()["layout"]["direction"] == "ltr"
    pages = client.get(f"/api/storyboards/{board.pk}/pages/").json()
    assert pages["direction"] == "ltr"
    assert [p["panels"] for p in pages["pages"]] == [[1, 2], [3]]
    assert pages["pages"][0]["template"] == "tiers"
    _, cbz = download(client, board.pk, "cbz")
    assert "<Manga>No</Manga>" in zipfile.ZipFile(io.BytesIO(cbz)).read("ComicInfo.xml").decode()
    client.patch(
        f"/api/storyboards/{board.pk}/",
        {"layout": {"format": "webtoon"}},
        content_type="application/json",
    )
    pages = client.get(f"/api/storyboards/{board.pk}/pages/").json()
    assert pages["format"] == "webtoon" and len(pages["pages"]) == 1
    assert pages["pages"][0]["panels"] == [1, 2, 3]
    for templates in ({"1": "spiral"}, {"²": "grid"}, {"01": "grid"}, {"0": "grid"}):
        bad = client.patch(
            f"/api/storyboards/{board.pk}/",
            {"layout": {"templates": templates}},
            content_type="application/json",
        )
        assert bad.status_code == 400, templates


# --- the layout engine ----------------------------------------------------------------------


def test_layout_wide_shots_take_a_tier_close_ups_share_one_right_to_left():
    panels = [
        LayoutPanel(1, "establishing"),
        LayoutPanel(2, "close-up"),
        LayoutPanel(3, "close-up"),
        LayoutPanel(4, "medium"),
    ]
    (page,) = paginate(panels, direction="rtl")
    rects = page.rects
    assert rects[1][0] < 0.1 and rects[1][2] > 0.9, "the establishing shot spans the page"
    assert rects[2][1] == rects[3][1], "the close-ups share a tier"
    assert rects[2][0] > rects[3][0], "right to left: the first is on the right"
    (page,) = paginate(panels, direction="ltr")
    assert page.rects[2][0] < page.rects[3][0]


def test_layout_an_action_beat_gets_a_splash_page_and_pages_fill_up():
    panels = [LayoutPanel(i, "medium") for i in range(1, 9)]
    panels[4] = LayoutPanel(5, "action")
    pages = paginate(panels)
    assert [5] in [p.panels for p in pages]
    splash = next(p for p in pages if p.panels == [5])
    assert splash.template == "splash"
    x0, y0, x1, y1 = splash.rects[5]
    assert (x1 - x0) > 0.8 and (y1 - y0) > 0.8
    assert [i for p in pages for i in p.panels] == list(range(1, 9))
    assert all(len(p.panels) <= 6 for p in pages)


def test_layout_rects_stay_inside_the_margins_and_never_overlap():
    panels = [LayoutPanel(i, s) for i, s in enumerate(["wide", "medium", "medium", "close-up"], 1)]
    for template in ("auto", "tiers", "pairs", "grid", "wide-top", "splash"):
        (page,) = paginate(panels, breaks=[1], templates={"1": template})
        boxes = list(page.rects.values())
        assert len(boxes) == 4
        for i, a in enumerate(boxes):
            assert 0.05 < a[0] < a[2] < 0.95 and 0.04 < a[1] < a[3] < 0.96
            for b in boxes[i + 1 :]:
                assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


# --- PDF helpers ------------------------------------------------------------------------------


def pdf_page_count(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?!s)", pdf))


def pdf_media_box(pdf: bytes) -> tuple[float, float]:
    match = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", pdf)
    return float(match.group(1)), float(match.group(2))


def test_a_speculation_whose_panels_all_became_kept_ends_and_generate_shows_them(
    account, board, user, run, django_capture_on_commit_callbacks
):
    run.finish(run.generate(user, board))
    edit(board, {1: {"description": "Rooftops in the rain."}})
    with django_capture_on_commit_callbacks(execute=True):
        job = services.start_job(
            user=user,
            storyboard=board,
            confirmed=False,
            confirm_by=timezone.now() + timedelta(minutes=10),
        )
    assert balance(account) == (6, 1)
    storyboards.update_storyboard(storyboard=board, panels=PANELS)  # back to the kept art
    shown = run.generate(user, board)
    assert shown.state == JobState.COMPLETED and run.queued == [(job.pk, 1, 1)]  # none new
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED and job.end_reason == "Every panel is kept."
    assert balance(account) == (7, 0), "the speculative hold was released, nothing charged"
    assert_ledger_invariants()


def test_the_dashboard_offers_the_pages_once_a_panel_is_kept(account, board, user, client, run):
    client.force_login(user)
    assert f"/comics/{board.pk}/read/" not in client.get("/").content.decode()
    job = run.generate(user, board)
    run.render()
    services.cancel_job(job=job)
    assert f'href="/comics/{board.pk}/read/"' in client.get("/").content.decode()
    reader = client.get(f"/comics/{board.pk}/read/")
    assert reader.status_code == 200 and b'id="page-viewer"' in reader.content


def test_the_art_version_ignores_text_edits(board):
    from mangagen.storyboards.selectors import art_version

    before = art_version(storyboard=board)
    edit(board, {2: {"dialogue": [{"speaker": "Aiko", "text": "Hello?"}]}})
    assert art_version(storyboard=board) == before
    edit(board, {2: {"description": "Aiko waves."}})
    assert art_version(storyboard=board) != before


def test_renders_delivered_before_kept_art_existed_are_kept_by_the_migration(
    account, board, user, client, run
):
    import importlib

    from django.apps import apps

    job = run.generate(user, board)
    run.render()
    run.approve(job, 1)
    run.render()  # panel 2 delivered
    KeptArt.objects.all().delete()  # as before the migration: nothing kept
    job.panels.update(art_hash="")
    services.cancel_job(job=job)
    migration = importlib.import_module("mangagen.migrations.0007_keep_delivered_renders")
    migration.keep_delivered(apps, None)
    migration.keep_delivered(apps, None)  # twice: nothing doubles
    assert KeptArt.objects.filter(storyboard=board).count() == 2
    client.force_login(user)
    quote = client.get(f"/api/storyboards/{board.pk}/quote/").json()
    assert quote["kept"] == [1, 2] and quote["render"] == [3]
    response, pdf = download(client, board.pk, "pdf")
    assert response.status_code == 200 and pdf.startswith(b"%PDF")


def test_kept_takes_are_shown_to_their_owner_only(
    account, board, user, client, run, make_user, django_capture_on_commit_callbacks
):
    job = run.generate(user, board)
    run.render()
    with django_capture_on_commit_callbacks(execute=True):
        services.redo_panel(job=job, index=1)
    run.render()
    client.force_login(user)
    takes = client.get(f"/api/storyboards/{board.pk}/panels/1/takes/").json()["takes"]
    older = client.get(takes[1]["image_url"])  # no job shows it any more; the comic keeps it
    assert older.status_code == 200 and older.content[:4] == b"\x89PNG"
    client.force_login(make_user("nosy"))
    assert client.get(takes[1]["image_url"]).status_code == 404


@pytest.mark.parametrize("size", [(130, 260), (700, 240), (60, 60)])
def test_a_placeholders_words_stay_inside_its_cell(size):
    from mangagen.pages.compose import placeholder

    image = placeholder(12, size).convert("L")
    words = [
        x for x in range(size[0]) for y in range(size[1]) if image.getpixel((x, y)) < 200
    ]  # the words are grey; the hatching is much lighter
    assert words, "the label is drawn"
    assert min(words) >= size[0] * 0.04 and max(words) <= size[0] * 0.96
