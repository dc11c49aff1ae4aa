"""The credit history in a person's words, in English and in Japanese: each hold names
its comic and what was drawn (a panel, a redo, a touch-up, a character sheet, panel one
prepared on Review and given back) and reads as one row with its outcome, on
GET /api/credits/transfers/ and on the Credits page alike."""

from datetime import timedelta

import pytest
from django.utils import timezone

from mangagen.jobs import services
from mangagen.jobs.models import Job
from tests.support.factories import balance, storyboard

CAST = [{"name": "Aiko", "description": "red scarf"}]
PANELS = [
    {"description": "Aiko on the rooftop.", "shot": "wide", "characters": ["Aiko"]},
    {"description": "Aiko jumps.", "shot": "action", "characters": ["Aiko"]},
]
JA = {"HTTP_ACCEPT_LANGUAGE": "ja-JP,ja;q=0.9"}

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("instant_renders"),
    pytest.mark.board(title="Rooftop Escape", characters=CAST, panels=PANELS),
]


@pytest.fixture
def history(board, user, account, run, person, sheet_queue):
    """A comic drawn with a redo, a touch-up, a sheet rendering, and another comic whose
    panel one was prepared on Review and given back when its person left."""
    job = run.generate(user, board)
    run.render()  # panel 1, attempt 1
    job.refresh_from_db()
    with run.commits():
        services.redo_panel(job=job, index=1)
    run.finish(job)  # panel 1 drawn again, then panel 2
    with run.commits():
        touched = person.post(
            f"/api/storyboards/{board.pk}/panels/2/touchup/",
            {"box": [0.1, 0.1, 0.3, 0.3], "prompt": "a red umbrella"},
            content_type="application/json",
        )
    assert touched.status_code == 202, touched.content
    run.render()
    with run.commits():
        sheet = person.post(f"/api/storyboards/{board.pk}/characters/Aiko/sheet/")
    assert sheet.status_code == 202, sheet.content  # its hold stays open: held now
    left = storyboard(user, title="Left Behind", characters=CAST, panels=PANELS[:1])
    with run.commits():
        prepared = services.start_job(
            user=user,
            storyboard=left,
            confirmed=False,
            confirm_by=timezone.now() + timedelta(minutes=1),
        )
        services.cancel_job(job=prepared, reason="Left Review.", only_if_unconfirmed=True)
    assert Job.objects.get(pk=prepared.pk).state == "cancelled"
    assert balance(account) == (10 - 4 - 1, 1)  # four renders shown, a sheet held
    return person


def rows(client, **headers) -> list[tuple[str, str, str]]:
    answer = client.get("/api/credits/transfers/?page_size=50", **headers).json()["results"]
    return [(r["description"], r["outcome"], r["outcome_words"]) for r in answer]


def test_each_hold_is_one_row_naming_its_comic_and_what_was_drawn(history):
    assert rows(history) == [
        ("Left Behind: panel 1, prepared on Review", "released", "given back"),
        ("Rooftop Escape: character sheet of Aiko", "pending", "held now"),
        ("Rooftop Escape: touch-up of panel 2", "captured", "paid"),
        ("Rooftop Escape: panel 2", "captured", "paid"),
        ("Rooftop Escape: panel 1, drawn again", "captured", "paid"),
        ("Rooftop Escape: panel 1", "captured", "paid"),
        ("test", "", ""),
    ]


def test_the_same_rows_in_japanese(history):
    assert rows(history, **JA) == [
        ("Left Behind：コマ 1（確認画面で準備）", "released", "返却済み"),
        ("Rooftop Escape：Aiko のキャラクターシート", "pending", "保留中"),
        ("Rooftop Escape：コマ 2 の部分修正", "captured", "支払い済み"),
        ("Rooftop Escape：コマ 2", "captured", "支払い済み"),
        ("Rooftop Escape：コマ 1（描き直し）", "captured", "支払い済み"),
        ("Rooftop Escape：コマ 1", "captured", "支払い済み"),
        ("test", "", ""),
    ]


@pytest.mark.parametrize(
    ("headers", "shown", "held"),
    [
        (
            {},
            ["Rooftop Escape: touch-up of panel 2", "Left Behind: panel 1, prepared on Review"],
            "Rooftop Escape: character sheet of Aiko",
        ),
        (
            JA,
            ["Rooftop Escape：コマ 2 の部分修正", "Left Behind：コマ 1（確認画面で準備）"],
            "Rooftop Escape：Aiko のキャラクターシート",
        ),
    ],
    ids=["en", "ja"],
)
def test_the_credits_page_and_the_dashboard_say_the_same(history, headers, shown, held):
    page = history.get("/credits/", **headers).content.decode()
    assert [words for words in [*shown, held] if words not in page] == []
    # A hold and its capture are one row: no "Hold captured" line of its own, no job number.
    assert "Hold captured" not in page and "job " not in page
    if not headers:  # each outcome written as a grant's is, with a capital
        assert "<td>Paid</td>" in page and "<td>Given back</td>" in page
    # What is held right now names what it is held for, on the dashboard too.
    assert held in history.get("/", **headers).content.decode()
