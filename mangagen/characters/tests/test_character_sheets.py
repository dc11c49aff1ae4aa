"""Character sheets: paid like a panel, part of the art hash, the procedural look's source."""

import io
import os
import re
from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.urls import reverse
from PIL import Image

from ledger import services as ledger
from ledger.models import Hold, Transfer
from mangagen.celery import app as celery_app
from mangagen.characters import services as sheets
from mangagen.characters import tasks
from mangagen.characters.models import CharacterSheet, SheetState
from mangagen.jobs import services as jobs
from mangagen.jobs import tasks as job_tasks
from mangagen.jobs.quote import quote as quote_of
from mangagen.kernel.credit_history import public_reason
from mangagen.orchestration import comic_deletion as deletion
from mangagen.renderers import CharacterSpec, PanelSpec, RenderError
from mangagen.renderers.providers.procedural import Look, ProceduralRenderer
from mangagen.storyboards import services as storyboards
from tests.support import factories
from tests.support.boards import TWO_OF_THEM_CAST, TWO_OF_THEM_PANELS
from tests.support.factories import balance
from tests.support.ledger_invariants import assert_ledger_invariants

PANELS = TWO_OF_THEM_PANELS


pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(
        characters=TWO_OF_THEM_CAST,
        panels=PANELS,
    ),
]


@pytest.fixture
def account(user):
    return factories.funded_account(user, 5)


@pytest.fixture
def request_sheet(board, sheet_queue, django_capture_on_commit_callbacks):
    def go(name="Aiko"):
        with django_capture_on_commit_callbacks(execute=True):
            return sheets.request_sheet(storyboard=board, name=name)

    return go


@pytest.fixture
def render_sheet(run, sheet_queue):
    def go():
        (sheet_id,), queue = run.take_sheet()
        assert queue == "render"
        with run.commits():
            return sheets.perform_sheet_render(sheet_id=sheet_id)

    return go


def art(board):
    return {p.index: p.art_hash for p in board.panels.all()}


def sheet_json(client, board, name="Aiko"):
    data = client.get(f"/api/storyboards/{board.pk}/").json()
    return next(c for c in data["characters"] if c["name"] == name)["sheet"]


def url(board, name="Aiko"):
    return f"/api/storyboards/{board.pk}/characters/{quote(name)}/sheet/"


# --- charging: one hold, captured when shown, released otherwise --------------------------------


def test_a_sheet_render_holds_one_credit_and_captures_it_when_shown(
    account, request_sheet, render_sheet, board
):
    sheet = request_sheet()
    assert sheet.state == SheetState.RENDERING
    assert balance(account) == (4, 1)
    assert render_sheet() == "shown"
    sheet.refresh_from_db()
    assert sheet.state == SheetState.READY and sheet.image
    assert sheet.hold.state == Hold.State.CAPTURED
    assert balance(account) == (4, 0)
    assert_ledger_invariants()


def test_a_double_click_pays_once(account, request_sheet, sheet_queue):
    first, second = request_sheet(), request_sheet()
    assert first.pk == second.pk and len(sheet_queue) == 1
    assert balance(account) == (4, 1)


@pytest.mark.parametrize(
    "failure",
    [RenderError("GPU on fire", retryable=False), RuntimeError("GPU on fire")],
    ids=["refused", "crashed"],
)
def test_a_failed_render_releases_its_hold(
    account, request_sheet, sheet_queue, monkeypatch, failure
):
    sheet = request_sheet()

    def broken(self, *args, **kwargs):
        raise failure

    monkeypatch.setattr(ProceduralRenderer, "render_sheet", broken)
    assert tasks.render_sheet.apply(args=(sheet.pk,)).get() == "failed"
    sheet.refresh_from_db()
    # The person is told what it means for them; the renderer's words are for operators.
    assert sheet.state == SheetState.FAILED
    assert sheet.error == "The render failed; nothing was charged."
    assert sheet.hold.state == Hold.State.RELEASED
    assert balance(account) == (5, 0)
    release = Transfer.objects.get(pending=sheet.hold.pending_transfer)
    assert "GPU on fire" in release.reason
    assert public_reason(release) == "The render failed; nothing was charged."
    assert_ledger_invariants()


def test_deleting_a_rendering_sheet_releases_it_and_its_render_is_discarded(
    account, request_sheet, render_sheet, board
):
    sheet = request_sheet()
    sheets.delete_sheet(storyboard=board, name="Aiko")
    assert balance(account) == (5, 0)
    assert Hold.objects.get(pk=sheet.hold_id).state == Hold.State.RELEASED
    assert render_sheet() == "stale"
    assert not CharacterSheet.objects.exists()
    assert_ledger_invariants()


def test_an_upload_replaces_a_rendering_sheet_and_releases_its_hold(
    account, request_sheet, render_sheet, board, sheet_queue
):
    sheet = request_sheet()
    sheet_queue_copy = list(sheet_queue)
    sheets.upload_sheet(storyboard=board, name="Aiko", image=png())
    assert balance(account) == (5, 0)
    sheet.refresh_from_db()
    assert sheet.state == SheetState.FAILED
    sheet_queue[:] = sheet_queue_copy
    assert render_sheet() == "stale"  # the replaced render lands on nothing and costs nothing
    assert balance(account) == (5, 0)


def test_a_render_landing_after_its_sheet_was_replaced_is_not_charged(
    account, request_sheet, board, sheet_queue, monkeypatch, django_capture_on_commit_callbacks
):
    sheet = request_sheet()
    real = ProceduralRenderer.render_sheet

    def replaced_meanwhile(self, *args, **kwargs):
        result = real(self, *args, **kwargs)
        sheets.upload_sheet(storyboard=board, name="Aiko", image=png())
        return result

    monkeypatch.setattr(ProceduralRenderer, "render_sheet", replaced_meanwhile)
    assert sheets.perform_sheet_render(sheet_id=sheet.pk) == "discarded"
    assert balance(account) == (5, 0)
    assert_ledger_invariants()


def test_a_person_who_cannot_pay_gets_402_and_nothing_is_held(client, user, board):
    client.force_login(user)
    response = client.post(url(board))
    assert response.status_code == 402
    assert response.json()["error"] == "insufficient_credits"
    assert response.json()["purchase_url"]
    assert not CharacterSheet.objects.exists()


# --- the API ----------------------------------------------------------------------------------


def test_post_answers_202_with_the_rendering_sheet_then_ready_with_an_owner_only_image(
    account,
    client,
    user,
    board,
    render_sheet,
    make_user,
    sheet_queue,
    django_capture_on_commit_callbacks,
):
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url(board))
    assert response.status_code == 202
    assert response.json()["sheet"]["state"] == "rendering"
    assert response.json()["sheet"]["image_url"] is None
    render_sheet()
    sheet = sheet_json(client, board)
    assert sheet["state"] == "ready" and sheet["hash"] and sheet["in_use"]
    image = client.get(sheet["image_url"])
    assert image.status_code == 200 and image.content[:8] == b"\x89PNG\r\n\x1a\n"
    assert image["X-Content-Type-Options"] == "nosniff"
    client.force_login(make_user())
    assert client.get(sheet["image_url"]).status_code == 404
    client.logout()
    assert client.get(sheet["image_url"]).status_code in (302, 404)


def test_characters_without_sheets_say_null(client, user, board):
    client.force_login(user)
    data = client.get(f"/api/storyboards/{board.pk}/").json()
    assert [c["sheet"] for c in data["characters"]] == [None, None]


def test_strangers_get_404_on_every_sheet_method(account, client, board, make_user, sheet_queue):
    client.force_login(make_user())
    assert client.post(url(board)).status_code == 404
    assert put_image(client, url(board), png()).status_code == 404
    assert client.delete(url(board)).status_code == 404
    assert not CharacterSheet.objects.exists() and not sheet_queue
    assert balance(account) == (5, 0)


def test_an_unknown_character_is_404(account, client, user, board):
    client.force_login(user)
    response = client.post(url(board, "Nobody"))
    assert response.status_code == 404 and response.json()["error"] == "no_such_character"
    assert balance(account) == (5, 0)


def test_names_are_url_encoded(account, client, user, board, sheet_queue):
    storyboards.update_storyboard(
        storyboard=board, characters=[{"name": "Mei Ōno / 2", "description": "tall"}]
    )
    client.force_login(user)
    assert client.post(url(board, "Mei Ōno / 2")).status_code == 202


def test_put_uploads_the_persons_own_picture_free_and_delete_removes_it(
    account, client, user, board, django_capture_on_commit_callbacks
):
    client.force_login(user)
    response = put_image(client, url(board), png((200, 300)))
    assert response.status_code == 200, response.content
    sheet = response.json()["sheet"]
    assert sheet["state"] == "ready" and sheet["source"] == "uploaded"
    assert client.get(sheet["image_url"]).status_code == 200
    assert balance(account) == (5, 0)
    path = CharacterSheet.objects.get().image.path
    with django_capture_on_commit_callbacks(execute=True):
        assert client.delete(url(board)).status_code == 204
    assert sheet_json(client, board) is None
    assert client.get(sheet["image_url"]).status_code == 404
    assert not os.path.exists(path)


# --- the art hash -------------------------------------------------------------------------------


def test_no_sheets_leaves_every_art_hash_as_it_was(board):
    from mangagen.storyboards.hashing import art_hash

    descriptions = {c.name: c.description for c in board.characters.all()}
    for panel in board.panels.all():
        assert panel.art_hash == art_hash(
            style=board.style,
            description=panel.description,
            shot=panel.shot,
            characters=panel.characters,
            character_descriptions=descriptions,
        )
        assert panel.sheets == {}


def test_a_ready_sheet_changes_the_art_of_exactly_its_characters_panels(
    account, request_sheet, render_sheet, board
):
    before = art(board)
    sheet = request_sheet()
    assert art(board) == before  # rendering: not in use yet
    render_sheet()
    after = art(board)
    assert after[1] == before[1] and after[3] == before[3]
    assert after[2] != before[2] and after[4] != before[4]
    sheet.refresh_from_db()
    assert board.panels.get(index=2).sheets == {"Aiko": sheet.hash}
    redo = request_sheet()
    render_sheet()
    assert redo.pk != sheet.pk
    again = art(board)
    assert again[2] not in (before[2], after[2]) and again[3] == before[3]


def test_the_quote_asks_to_render_the_panels_a_new_sheet_affects(
    account, user, board, request_sheet, render_sheet
):
    factories.keep(board)  # every panel kept, as after a Generate
    assert quote_of(storyboard=board, user=user).render == []
    request_sheet()
    render_sheet()
    quote = quote_of(storyboard=board, user=user)
    assert quote.render == [2, 4] and quote.kept == [1, 3] and quote.credits == 2
    assert quote.sheets == [2, 4]  # …because of Aiko's new sheet
    request_sheet()
    render_sheet()  # a redo: the same panels, against the kept art of either earlier picture
    assert quote_of(storyboard=board, user=user).sheets == [2, 4]
    storyboards.update_storyboard(  # a new picture for another reason is not the sheet's doing
        storyboard=board,
        panels=[PANELS[0], {**PANELS[1], "description": "Aiko jumps."}, *PANELS[2:]],
    )
    assert quote_of(storyboard=board, user=user).sheets == [4]


def test_editing_the_description_makes_the_sheet_stale_and_out_of_use(
    account, client, user, board, request_sheet, render_sheet
):
    request_sheet()
    render_sheet()
    no_sheet = art(board)
    storyboards.update_storyboard(
        storyboard=board,
        characters=[
            {"name": "Aiko", "description": "short white hair"},
            {"name": "Kenji", "description": "spiky hair, glasses"},
        ],
    )
    client.force_login(user)
    sheet = sheet_json(client, board)
    assert sheet["state"] == "stale" and not sheet["in_use"]
    assert board.panels.get(index=2).sheets == {}
    assert art(board)[3] == no_sheet[3]
    # Editing it back brings the sheet back into use.
    storyboards.update_storyboard(
        storyboard=board,
        characters=[
            {"name": "Aiko", "description": "long black hair, red scarf"},
            {"name": "Kenji", "description": "spiky hair, glasses"},
        ],
    )
    assert sheet_json(client, board)["state"] == "ready"
    assert art(board) == no_sheet


def test_a_failed_redo_keeps_the_previous_sheet_in_use(
    account, client, user, board, request_sheet, render_sheet, sheet_queue, monkeypatch
):
    request_sheet()
    render_sheet()
    in_use = art(board)
    redo = request_sheet()
    sheets.fail_sheet_render(sheet_id=redo.pk, error="provider down")
    client.force_login(user)
    sheet = sheet_json(client, board)
    assert sheet["state"] == "failed" and sheet["error"] == "provider down"
    assert sheet["image_url"] and sheet["in_use"]
    assert art(board) == in_use


# --- renders use the sheet ---------------------------------------------------------------------


def test_the_procedural_look_comes_from_the_sheet():
    aiko = CharacterSpec("Aiko", "red scarf")
    looks = {Look.of(CharacterSpec("Aiko", "red scarf", sheet=f"{i:064x}")) for i in range(12)}
    assert len(looks) > 1  # a redo draws a new look…
    sheet = CharacterSpec("Aiko", "red scarf", sheet="ab" * 32)
    assert Look.of(sheet) == Look.of(CharacterSpec("Aiko", "red scarf", sheet="ab" * 32))
    assert Look.of(aiko) == Look.of(CharacterSpec("Aiko", "red scarf"))  # …no sheet, as before


def test_a_job_draws_each_panel_from_the_sheets_its_art_hash_covers(
    account,
    user,
    board,
    request_sheet,
    render_sheet,
    run,
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    sheet = request_sheet()
    render_sheet()
    sheet.refresh_from_db()
    seen = []
    real = ProceduralRenderer.render

    def spy(self, spec: PanelSpec, seed, **kwargs):
        seen.append({c.name: (c.sheet, len(c.reference)) for c in spec.characters})
        return real(self, spec, seed, **kwargs)

    monkeypatch.setattr(ProceduralRenderer, "render", spy)
    with django_capture_on_commit_callbacks(execute=True):
        job, _ = jobs.generate(user=user, storyboard=board)
    for index in (1, 2):
        run.render()
        if index == 1:
            run.approve(job, 1)
    with sheet.image.open("rb") as handle:
        size = len(handle.read())
    assert seen == [{}, {"Aiko": (sheet.hash, size)}]
    assert job_tasks.render_panel.name in celery_app.tasks  # a worker finds the panel task


def test_a_new_sheet_changes_the_procedural_panel(account, board, request_sheet, render_sheet):
    renderer = ProceduralRenderer(cold_start_seconds=0, render_seconds=0)
    first = request_sheet()
    render_sheet()
    first.refresh_from_db()
    second = request_sheet()
    render_sheet()
    second.refresh_from_db()
    assert first.hash != second.hash

    # A look is drawn from a sheet's hash, and a finite set of looks means two
    # random hashes can share one: the drawing is compared for two hashes whose
    # looks are known to differ, so that this cannot fail by chance.
    def aiko(sheet_hash):
        return CharacterSpec("Aiko", "long black hair, red scarf", sheet=sheet_hash)

    def drawn(sheet_hash):
        return renderer.draw(
            PanelSpec(
                style="manga", description="x", shot="close-up", characters=(aiko(sheet_hash),)
            ),
            1,
        )

    one, other = "a" * 64, "b" * 64
    assert Look.of(aiko(one)) != Look.of(aiko(other))
    assert drawn(one) != drawn(other)
    assert drawn(one) == drawn(one)  # and the same sheet, the same drawing


def put_image(client, address: str, data: bytes, name: str = "me.png", field: str = "image"):
    """A multipart PUT, as the Characters step sends it."""
    upload = SimpleUploadedFile(name, data, content_type="image/png")
    body = encode_multipart(BOUNDARY, {field: upload})
    return client.put(address, data=body, content_type=MULTIPART_CONTENT)


def png(size=(128, 128), mode="RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size, (200, 10, 10) if mode == "RGB" else 200).save(buffer, format="PNG")
    return buffer.getvalue()


def test_sheet_urls_are_named_in_one_place():
    assert reverse("api-character-sheet", args=[1, "Aiko"]).endswith("/characters/Aiko/sheet/")
    assert re.match(r"^/media/sheets/", reverse("sheet-image", args=["1/x.png"]))


def test_a_lost_render_says_failed_and_a_new_click_releases_it_and_starts_again(
    account, client, user, board, request_sheet, sheet_queue
):
    from datetime import timedelta

    from django.utils import timezone

    lost = request_sheet()
    CharacterSheet.objects.filter(pk=lost.pk).update(
        created_at=timezone.now() - timedelta(hours=1)  # its worker died long ago
    )
    client.force_login(user)
    sheet = sheet_json(client, board)
    assert sheet["state"] == "failed" and "lost" in sheet["error"]
    fresh = request_sheet()
    assert fresh.pk != lost.pk and fresh.state == SheetState.RENDERING
    assert Hold.objects.get(pk=lost.hold_id).state == Hold.State.RELEASED
    assert balance(account) == (4, 1)
    assert_ledger_invariants()


def test_a_provider_jpeg_is_kept_as_png(account, request_sheet, render_sheet, monkeypatch):
    real = ProceduralRenderer.render_sheet

    def jpeg(self, *args, **kwargs):
        result = real(self, *args, **kwargs)
        buffer = io.BytesIO()
        Image.open(io.BytesIO(result.image)).convert("RGB").save(buffer, format="JPEG")
        result.image = buffer.getvalue()
        return result

    monkeypatch.setattr(ProceduralRenderer, "render_sheet", jpeg)
    sheet = request_sheet()
    render_sheet()
    sheet.refresh_from_db()
    with sheet.image.open("rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"


def test_deleting_the_comic_releases_a_rendering_sheet_and_removes_the_files(
    account, board, request_sheet, render_sheet, django_capture_on_commit_callbacks
):
    request_sheet()
    render_sheet()
    kept = CharacterSheet.objects.get().image.path
    rendering = request_sheet("Kenji")
    with django_capture_on_commit_callbacks(execute=True):
        deletion.delete_comic(storyboard=board)
    assert Hold.objects.get(pk=rendering.hold_id).state == Hold.State.RELEASED
    assert balance(account) == (4, 0)  # the shown sheet paid, the rendering one not
    assert not os.path.exists(kept)
    assert_ledger_invariants()


@pytest.mark.postgres  # row locks
@pytest.mark.django_db(transaction=True)
def test_two_tabs_asking_at_once_hold_one_credit(user, board, race, sheet_queue, settings):
    account = ledger.account_for(user)
    ledger.grant(account=account, amount=5, key="seed-race", reason="test")
    results = race([lambda: sheets.request_sheet(storyboard=board, name="Aiko")] * 2)
    assert all(isinstance(r, CharacterSheet) for r in results), results
    assert results[0].pk == results[1].pk
    assert CharacterSheet.objects.count() == 1
    assert balance(account) == (4, 1)
