"""Translations (issue #25, items 1 and 2): one comic lettered in many languages, for free.

A translation holds the title and each panel's lines and caption; an edit of
the original keeps a translated line and flags it stale; a missing line is
lettered in the original; pages, exports and panel images take `?lang=`;
nothing of it renders, holds or spends a credit, or changes an art hash. The
chat translator is tested over real HTTP against a local stand-in answering
as OpenAI's chat-completions endpoint does.
"""

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ledger.models import Hold, Transfer
from mangagen.pages import builds
from mangagen.storyboards import services as storyboards
from mangagen.translations import services
from mangagen.translations.matching import (
    Edit,
    Entry,
    Place,
    Slot,
    apply,
    originals,
    resolve,
)
from tests.support.standin import Canned

ROOT = Path(__file__).resolve().parents[3]

PANELS = [
    {"description": "A rooftop at night.", "shot": "establishing", "caption": "Neo-Kyoto, 2 a.m."},
    {
        "description": "Aiko turns.",
        "shot": "medium",
        "characters": ["Aiko"],
        "dialogue": [
            {"speaker": "Aiko", "text": "Who's there?"},
            {"speaker": "Aiko", "text": "Show yourself."},
        ],
    },
    {
        "description": "Kenji grins.",
        "shot": "close-up",
        "characters": ["Kenji"],
        "dialogue": [{"speaker": "Kenji", "text": "Only me."}],
    },
]
JAPANESE = {
    "title": "屋上",
    "panels": [
        {"index": 1, "caption": "ネオ京都、午前二時。"},
        {"index": 2, "dialogue": ["誰？", "出てきなさい。"]},
        {"index": 3, "dialogue": ["俺だよ。"]},
    ],
}


CAST = [{"name": "Aiko", "description": "red scarf"}, {"name": "Kenji"}]


pytestmark = [pytest.mark.board(characters=CAST, panels=PANELS)]


@pytest.fixture
def signed_in(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def drawn(run, board, user, account, instant_renders):
    """The board with every panel rendered, delivered and kept (three credits spent)."""
    run.finish(run.generate(user, board))
    return board


def url(board, lang: str = "", tail: str = "") -> str:
    base = f"/api/storyboards/{board.pk}/translations/"
    return f"{base}{lang}/{tail}" if lang else base


def put(client, board, lang: str, body: dict):
    return client.put(url(board, lang), body, content_type="application/json")


def edit_original(board, changes: dict):
    panels = [dict(p) for p in PANELS]
    for index, fields in changes.items():
        panels[index - 1].update(fields)
    return storyboards.update_storyboard(storyboard=board, panels=panels)


def texts(body: dict) -> list:
    """A translation's answer as [title, [panel lines…, caption]…] of texts."""
    return [body["title"]] + [
        [line["text"] for line in p["dialogue"]] + [p["caption"]["text"]] for p in body["panels"]
    ]


# --- matching (pure) ---------------------------------------------------------------------------


class P:  # a panel as `originals` reads it
    def __init__(self, index, dialogue=(), caption=""):
        self.index, self.caption = index, caption
        self.dialogue = [{"speaker": "", "text": t} for t in dialogue]


def test_a_moved_panel_takes_its_translated_lines_with_it():
    before = originals(title="T", panels=[P(1, ["Hello"]), P(2, ["Run!"], "Night.")])
    entries = [Entry(line.place, line.text.upper(), line.text) for line in before]
    after = originals(
        title="T", panels=[P(1, ["Run!"], "Night."), P(2, ["New line"]), P(3, ["Hello"])]
    )
    lines, unused = resolve(after, entries)
    assert [(line.text, line.stale) for line in lines] == [
        ("T", False),
        ("RUN!", False),
        ("NIGHT.", False),
        ("", False),  # a new line is missing, not a stale translation of another
        ("HELLO", False),
    ]
    assert unused == []


def test_an_edited_line_keeps_its_translation_flagged_stale_until_confirmed_or_redone():
    entries = [Entry(Place(Slot.DIALOGUE, 1, 0), "Bonjour", "Hello")]
    lines, unused = resolve(originals(title="", panels=[P(1, ["Hello there"])]), entries)
    (line,) = lines
    assert line.text == "Bonjour" and line.stale and line.entry.source == "Hello"
    place = line.original.place
    kept = apply(lines, unused, {place: Edit("Bonjour")})  # sent as it stands
    assert kept[0].source == "Hello", "still stale"
    confirmed = apply(lines, unused, {place: Edit("Bonjour", current=True)})
    assert confirmed[0].source == "Hello there"
    redone = apply(lines, unused, {place: Edit("Bonjour à toi")})
    assert (redone[0].text, redone[0].source) == ("Bonjour à toi", "Hello there")
    assert apply(lines, unused, {place: Edit("")}) == [], "emptied: missing again"


def test_a_removed_lines_translation_waits_for_its_original_and_is_never_a_new_lines():
    entries = [Entry(Place(Slot.DIALOGUE, 2, 0), "Cours !", "Run!")]
    lines, unused = resolve(originals(title="", panels=[P(1, ["Hi"])]), entries)
    stored = apply(lines, unused, {})
    assert stored == [Entry(Place(Slot.DIALOGUE, 2, 0), "Cours !", "Run!", orphan=True)]
    # panel 2 comes back with other words: the orphan is not its stale translation
    lines, _ = resolve(originals(title="", panels=[P(1, ["Hi"]), P(2, ["Stop!"])]), stored)
    assert [line.text for line in lines] == ["", ""]
    # the line itself comes back (typed in again, anywhere): its translation does too
    lines, _ = resolve(originals(title="", panels=[P(1, ["Hi", "Run!"])]), stored)
    assert [line.text for line in lines] == ["", "Cours !"] and not lines[1].stale


# --- the API ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_translation_is_made_read_and_listed_line_by_line(board, signed_in):
    assert signed_in.get(url(board)).json() == {
        "original": "en",
        "name": "English",
        "translations": [],
    }
    response = put(signed_in, board, "ja", JAPANESE)
    assert response.status_code == 200
    body = response.json()
    assert body["language"] == "ja" and body["name"] == "Japanese"
    assert texts(body) == [
        "屋上",
        ["ネオ京都、午前二時。"],
        ["誰？", "出てきなさい。", ""],
        ["俺だよ。", ""],
    ]
    assert body["panels"][1]["dialogue"][0] == {
        "speaker": "Aiko",
        "text": "誰？",
        "original": "Who's there?",
        "stale": False,
        "drafted": False,
        "was": None,
        "style": "speech",
        "place": None,
    }
    assert (body["missing"], body["stale"]) == (0, 0)
    assert signed_in.get(url(board, "ja")).json()["panels"] == body["panels"]
    listed = signed_in.get(url(board)).json()["translations"]
    assert [(t["language"], t["missing"], t["stale"]) for t in listed] == [("ja", 0, 0)]


@pytest.mark.django_db
def test_editing_the_original_keeps_the_translated_line_and_flags_it_stale(board, signed_in):
    put(signed_in, board, "fr", {"panels": [{"index": 2, "dialogue": ["Qui est là ?"]}]})
    edit_original(board, {2: {"dialogue": [{"speaker": "Aiko", "text": "Who goes there?"}]}})
    body = signed_in.get(url(board, "fr")).json()
    line = body["panels"][1]["dialogue"][0]
    assert line["text"] == "Qui est là ?" and line["stale"]
    assert (line["original"], line["was"]) == ("Who goes there?", "Who's there?")
    # title, the caption and Kenji's line are still to translate; one line is stale
    assert (body["missing"], body["stale"]) == (3, 1)

    # An autosave that sends the line as it stands leaves it stale...
    again = put(signed_in, board, "fr", {"panels": [{"index": 2, "dialogue": ["Qui est là ?"]}]})
    assert again.json()["stale"] == 1
    # ...the person says it is still right, or retranslates it
    confirmed = put(
        signed_in,
        board,
        "fr",
        {"panels": [{"index": 2, "dialogue": [{"text": "Qui est là ?", "stale": False}]}]},
    )
    assert (
        confirmed.json()["stale"] == 0 and not confirmed.json()["panels"][1]["dialogue"][0]["was"]
    )


@pytest.mark.django_db
def test_panels_not_sent_keep_their_lines_and_a_line_sent_empty_is_untranslated(board, signed_in):
    put(signed_in, board, "de", JAPANESE | {"title": "Dächer"})
    body = put(signed_in, board, "de", {"panels": [{"index": 2, "dialogue": ["", "Zeig dich."]}]})
    assert texts(body.json()) == [
        "Dächer",
        ["ネオ京都、午前二時。"],
        ["", "Zeig dich.", ""],
        ["俺だよ。", ""],
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "lang, body, detail",
    [
        ("en", {}, "original language"),
        ("tlh", {}, "not a language the lettering can set"),
        ("ja", {"panels": [{"index": 9, "dialogue": ["x"]}]}, "no panel 9"),
        ("ja", {"panels": [{"index": 3, "dialogue": ["x", "y"]}]}, "has 1 lines, not 2"),
        ("ja", {"panels": [{"index": 2, "caption": "x"}]}, "has no caption"),
        ("ja", {"panels": [{"index": 2}, {"index": 2}]}, "given twice"),
        ("ja", {"title": "x" * 201}, "At most 200"),
        ("ja", {"panels": [{"index": 3, "dialogue": [7]}]}, "A line is its text"),
    ],
)
def test_a_translation_that_does_not_fit_the_comic_is_refused_and_changes_nothing(
    board, signed_in, lang, body, detail
):
    put(signed_in, board, "ja", JAPANESE)
    before = signed_in.get(url(board, "ja")).json()
    response = put(signed_in, board, lang, body)
    assert response.status_code == 400 and response.json()["error"] == "invalid"
    assert detail in response.json()["detail"]
    assert signed_in.get(url(board, "ja")).json() == before


@pytest.mark.django_db
def test_no_such_translation_answers_404_everywhere(board, signed_in):
    for response in (
        signed_in.get(url(board, "ko")),
        signed_in.get(url(board, "en")),  # the original has no translation of itself
        signed_in.delete(url(board, "ko")),
        signed_in.get(f"/api/storyboards/{board.pk}/pages/?lang=ko"),
        signed_in.get(f"/api/storyboards/{board.pk}/export/?format=cbz&lang=ko"),
        signed_in.get(f"/api/storyboards/{board.pk}/export/?format=pdf&lang=xx"),
    ):
        assert response.status_code == 404
        assert response.json()["error"] == "no_such_translation"


@pytest.mark.django_db
def test_a_deleted_translation_is_gone(board, signed_in):
    put(signed_in, board, "ja", JAPANESE)
    assert signed_in.delete(url(board, "ja")).status_code == 204
    assert signed_in.get(url(board, "ja")).status_code == 404
    assert signed_in.get(url(board)).json()["translations"] == []


@pytest.mark.django_db
def test_strangers_see_no_translation_and_change_none(board, signed_in, make_user, client):
    put(signed_in, board, "ja", JAPANESE)
    client.force_login(make_user("nosy"))
    for response in (
        client.get(url(board)),
        client.get(url(board, "ja")),
        client.put(url(board, "ja"), {"title": "x"}, content_type="application/json"),
        client.delete(url(board, "ja")),
        client.post(url(board, "ja", "draft/")),
        client.get(f"/comics/{board.pk}/translations/"),
    ):
        assert response.status_code == 404
    client.force_login(board.owner)
    assert client.get(url(board, "ja")).json()["title"] == "屋上"


@pytest.mark.django_db
def test_the_original_language_is_the_storyboards_and_not_a_translations(board, signed_in):
    detail = f"/api/storyboards/{board.pk}/"
    assert signed_in.get(detail).json()["language"] == "en"
    put(signed_in, board, "ja", JAPANESE)
    refused = signed_in.patch(detail, {"language": "ja"}, content_type="application/json")
    assert refused.status_code == 400 and "Japanese translation" in refused.json()["detail"]
    changed = signed_in.patch(detail, {"language": "FR"}, content_type="application/json")
    assert changed.json()["language"] == "fr"
    assert signed_in.get(url(board)).json()["original"] == "fr"
    created = signed_in.post(
        "/api/storyboards/",
        {"title": "屋上", "story": "「待って！」とアイコは叫んだ。"},
        content_type="application/json",
    )
    assert created.json()["language"] == "ja", "guessed from the story"


@pytest.mark.django_db
def test_a_comic_has_a_bounded_number_of_translations(board, signed_in, monkeypatch):
    monkeypatch.setattr(services.limits, "MAX_TRANSLATIONS", 2)
    assert put(signed_in, board, "ja", {}).status_code == 200
    assert put(signed_in, board, "fr", {}).status_code == 200
    refused = put(signed_in, board, "de", {})
    assert refused.status_code == 400 and "2 translations" in refused.json()["detail"]
    assert put(signed_in, board, "fr", {"title": "Toits"}).status_code == 200  # editing one


# --- pages, exports, panel images ------------------------------------------------------------


def page_png(client, board, lang: str = "") -> bytes:
    query = f"?lang={lang}" if lang else ""
    pages = client.get(f"/api/storyboards/{board.pk}/pages/{query}").json()
    response = client.get(pages["pages"][0]["image_url"])
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def cbz(client, board, lang: str = "") -> zipfile.ZipFile:
    query = f"&lang={lang}" if lang else ""
    response = client.get(f"/api/storyboards/{board.pk}/export/?format=cbz{query}")
    assert response.status_code == 200
    return response, zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


@pytest.mark.django_db
def test_pages_and_exports_are_lettered_in_the_language_asked_for(drawn, signed_in):
    board = drawn
    put(signed_in, board, "ja", JAPANESE)
    pages = signed_in.get(f"/api/storyboards/{board.pk}/pages/?lang=ja").json()
    assert (pages["language"], pages["title"]) == ("ja", "屋上")
    assert pages["pages"][0]["image_url"].endswith("?lang=ja")
    original = signed_in.get(f"/api/storyboards/{board.pk}/pages/").json()
    assert (
        original["language"] == "en"
        and original["pages"][0]["image_url"] != pages["pages"][0]["image_url"]
    )
    assert page_png(signed_in, board, "ja") != page_png(signed_in, board)

    response, japanese = cbz(signed_in, board, "ja")
    assert 'filename="rooftops-ja.cbz"' in response["Content-Disposition"]
    info = japanese.read("ComicInfo.xml").decode()
    assert "<LanguageISO>ja</LanguageISO>" in info and "<Title>屋上</Title>" in info
    assert info.index("<PageCount>") < info.index("<LanguageISO>") < info.index("<Manga>")
    _, english = cbz(signed_in, board)
    assert "<LanguageISO>en</LanguageISO>" in english.read("ComicInfo.xml").decode()
    assert japanese.read("001.png") != english.read("001.png")

    pdf = signed_in.get(f"/api/storyboards/{board.pk}/export/?format=pdf&lang=ja")
    assert pdf.status_code == 200 and b"".join(pdf.streaming_content).startswith(b"%PDF")


@pytest.mark.django_db
def test_japanese_is_set_vertically_and_missing_lines_are_lettered_in_the_original(
    drawn, signed_in
):
    board = drawn
    put(signed_in, board, "ja", {"panels": [{"index": 2, "dialogue": ["誰？"]}]})
    comic = builds.comic_of(storyboard=board, language="ja")
    panel = comic.arts[2].letterable
    assert panel.language == "ja"
    assert [(line.speaker, line.text) for line in panel.dialogue] == [
        ("Aiko", "誰？"),
        ("Aiko", "Show yourself."),  # missing: lettered in the original
    ]
    assert comic.arts[1].letterable.caption == "Neo-Kyoto, 2 a.m."
    assert comic.title == "Rooftops"
    original = builds.comic_of(storyboard=board, language=None)
    assert original.arts[2].letterable.language == "en"


@pytest.mark.django_db
def test_a_translation_edit_changes_its_pages_key_and_no_other(drawn, signed_in):
    board = drawn
    put(signed_in, board, "ja", JAPANESE)
    english = builds.comic_of(storyboard=board).key
    japanese = builds.comic_of(storyboard=board, language="ja").key
    put(signed_in, board, "ja", {"title": "夜の屋上"})
    assert builds.comic_of(storyboard=board, language="ja").key != japanese
    assert builds.comic_of(storyboard=board).key == english


@pytest.mark.django_db
def test_a_panel_image_is_lettered_in_a_translation_when_asked(drawn, signed_in):
    board = drawn
    put(signed_in, board, "ja", JAPANESE)
    takes = signed_in.get(f"/api/storyboards/{board.pk}/panels/2/takes/").json()["takes"]
    image = takes[0]["image_url"]
    english, japanese = signed_in.get(image), signed_in.get(f"{image}?lang=ja")
    assert english.status_code == japanese.status_code == 200
    assert english.content != japanese.content and english["ETag"] != japanese["ETag"]
    assert signed_in.get(f"{image}?lang=ko").status_code == 404
    signed_in.delete(url(board, "ja"))
    pages = signed_in.get(f"/api/storyboards/{board.pk}/pages/").json()
    gone = pages["pages"][0]["image_url"] + "?lang=ja"
    assert signed_in.get(gone).status_code == 404


@pytest.mark.django_db
def test_a_translation_never_holds_or_spends_a_credit_nor_changes_an_art_hash(
    drawn, signed_in, account
):
    board = drawn
    arts = [p["art_hash"] for p in signed_in.get(f"/api/storyboards/{board.pk}/").json()["panels"]]
    rows = (Transfer.objects.count(), Hold.objects.count())
    account.refresh_from_db()
    balance = (account.available, account.held)
    put(signed_in, board, "ja", JAPANESE)
    put(signed_in, board, "ja", {"title": "夜"})
    page_png(signed_in, board, "ja")
    cbz(signed_in, board, "ja")
    signed_in.delete(url(board, "ja"))
    assert (Transfer.objects.count(), Hold.objects.count()) == rows
    account.refresh_from_db()
    assert (account.available, account.held) == balance
    after = signed_in.get(f"/api/storyboards/{board.pk}/").json()["panels"]
    assert [p["art_hash"] for p in after] == arts
    quote = signed_in.get(f"/api/storyboards/{board.pk}/quote/").json()
    assert quote["render"] == [] and quote["credits"] == 0


# --- machine drafts --------------------------------------------------------------------------


REQUEST_ID = "8d3c8a1e3b7e4f0a9c6b5d4e3f2a1b0c"


def completion(content: dict) -> Canned:
    """An answer as OpenAI's chat-completions endpoint gives it (a chat.completion object)."""
    return Canned(
        body={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1767225600,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": json.dumps(content)},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160},
        }
    )


@pytest.fixture
def translator(settings, standin):
    settings.TRANSLATOR = "openai"
    settings.CHAT_BASE_URL = standin.url
    settings.CHAT_API_KEY = "sk-test"
    settings.CHAT_MODEL = "gpt-4o-mini"
    settings.CHAT_TIMEOUT_SECONDS = 5
    return standin


@pytest.mark.django_db
def test_drafting_without_a_translator_answers_409(board, signed_in, settings):
    settings.TRANSLATOR = "none"
    response = signed_in.post(url(board, "ja", "draft/"))
    assert response.status_code == 409 and response.json()["error"] == "no_translator"
    assert signed_in.get(url(board)).json()["translations"] == []


@pytest.mark.django_db
def test_the_model_drafts_the_missing_lines_only(board, signed_in, translator):
    put(signed_in, board, "ja", {"panels": [{"index": 2, "dialogue": ["誰？"]}]})
    translator.reply(
        completion(
            {
                "lines": {
                    "title": "屋上",
                    "p1.c": "ネオ京都、午前二時。",
                    "p2.l2": "出てきなさい。",
                    "p3.l1": "俺だよ。",
                    "p9.l1": "stray",
                }
            }
        )
    )
    response = signed_in.post(url(board, "ja", "draft/"))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert texts(body) == [
        "屋上",
        ["ネオ京都、午前二時。"],
        ["誰？", "出てきなさい。", ""],
        ["俺だよ。", ""],
    ]
    assert body["missing"] == 0 and body["notice"] == "The language model drafted 4 lines."
    assert (
        body["panels"][1]["dialogue"][1]["drafted"]
        and not body["panels"][1]["dialogue"][0]["drafted"]
    )

    (sent,) = translator.requests
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == "Bearer sk-test"
    assert sent["json"]["model"] == "gpt-4o-mini"
    assert sent["json"]["response_format"] == {"type": "json_object"}
    asked = json.loads(sent["json"]["messages"][-1]["content"])
    assert (asked["from"], asked["to"]) == ("English", "Japanese")
    assert {line["id"]: line["text"] for line in asked["lines"]} == {
        "title": "Rooftops",
        "p1.c": "Neo-Kyoto, 2 a.m.",
        "p2.l2": "Show yourself.",
        "p3.l1": "Only me.",
    }, "the line a person translated is not sent"

    edited = put(signed_in, board, "ja", {"panels": [{"index": 3, "dialogue": ["僕だ。"]}]})
    assert not edited.json()["panels"][2]["dialogue"][0]["drafted"], "a person's line now"


@pytest.mark.django_db
def test_a_draft_creates_the_translation_and_counts_in_the_daily_quota(
    board, signed_in, translator, settings
):
    settings.DRAFT_DAILY_QUOTA = 1
    translator.reply(completion({"lines": {"title": "Toits"}}))
    first = signed_in.post(url(board, "fr", "draft/"))
    assert first.status_code == 200
    assert first.json()["title"] == "Toits" and first.json()["missing"] == 4
    assert "1 of the 5 missing lines" in first.json()["notice"]
    second = signed_in.post(url(board, "fr", "draft/"))
    assert second.status_code == 429 and second.json()["error"] == "draft_quota"
    assert len(translator.requests) == 1


@pytest.mark.django_db
def test_nothing_missing_asks_nothing_and_counts_nothing(board, signed_in, translator, settings):
    settings.DRAFT_DAILY_QUOTA = 0
    put(signed_in, board, "ja", JAPANESE)
    response = signed_in.post(url(board, "ja", "draft/"))
    assert (
        response.status_code == 200
        and response.json()["notice"] == "Every line is translated already."
    )
    assert translator.requests == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "reply, reason",
    [
        (
            Canned(status=503, body={"error": {"message": "overloaded"}}),
            "could not be used (the model answered with an error)",
        ),
        (
            Canned(status=403, body={"error": {"message": "no such model"}}),
            "could not be used (the model refused the request)",
        ),
        (completion({"lines": ["not", "a", "map"]}), "not a set of lines"),
        (completion({"lines": {"title": 7, "p1.c": "x" * 301}}), "none of the lines"),
        (
            Canned(body={"choices": [{"message": {"role": "assistant", "content": "Sure!"}}]}),
            "could not be used (the model's answer was not what was asked for)",
        ),
    ],
)
def test_a_failed_draft_answers_502_and_changes_nothing(
    board, signed_in, translator, reply, reason
):
    put(signed_in, board, "ja", {"title": "屋上"})
    before = signed_in.get(url(board, "ja")).json()
    translator.reply(reply)
    response = signed_in.post(url(board, "ja", "draft/"))
    assert response.status_code == 502 and response.json()["error"] == "translator_failed"
    assert reason in response.json()["detail"]
    assert "overloaded" not in response.text and "no such model" not in response.text
    assert signed_in.get(url(board, "ja")).json() == before


@pytest.mark.django_db
def test_an_unreachable_model_is_named_in_fixed_words_and_its_address_only_in_the_log(
    board, signed_in, translator, settings, caplog
):
    from mangagen.observability.logs import ContextFilter

    caplog.handler.addFilter(ContextFilter())  # as the console handler does: the request id
    settings.CHAT_BASE_URL = "http://127.0.0.1:9/internal-chat"
    response = signed_in.post(url(board, "ja", "draft/"), HTTP_X_REQUEST_ID=REQUEST_ID)
    assert response.status_code == 502 and response.json() == {
        "error": "translator_failed",
        "detail": "The translation model could not be used (the model could not be reached); "
        "nothing was changed.",
    }
    logged = [r for r in caplog.records if "internal-chat" in r.getMessage()]
    assert logged and "port=9" in logged[0].getMessage()
    assert logged[0].request_id == REQUEST_ID


@pytest.mark.django_db
def test_a_line_written_while_the_model_answers_is_kept(board, signed_in, translator, monkeypatch):
    """The person types on while the model works: their line wins over the draft's."""
    from mangagen.translations.chat import ChatTranslator

    answer = ChatTranslator.translate

    def slow(self, **kwargs):
        result = answer(self, **kwargs)
        services.save_translation(
            storyboard=board,
            language="ja",
            panels=[{"index": 3, "dialogue": [Edit("僕だ。")]}],
        )
        edit_original(board, {2: {"dialogue": [{"speaker": "Aiko", "text": "Hello?"}]}})
        return result

    monkeypatch.setattr(ChatTranslator, "translate", slow)
    translator.reply(completion({"lines": {"title": "屋上", "p2.l1": "誰？", "p3.l1": "俺だよ。"}}))
    body = signed_in.post(url(board, "ja", "draft/")).json()
    assert body["title"] == "屋上"
    assert body["panels"][2]["dialogue"][0]["text"] == "僕だ。", "the person's line"
    assert body["panels"][1]["dialogue"][0]["text"] == "", "its original changed meanwhile"


def test_an_unknown_translator_refuses_to_start():
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=os.environ | {"DEBUG": "on", "TRANSLATOR": "babelfish"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "TRANSLATOR is 'babelfish'; use one of: none, openai." in done.stderr


# --- the editor and the reader's switch ---------------------------------------------------------


@pytest.mark.django_db
def test_the_editor_page_says_whether_a_model_can_draft(board, signed_in, settings):
    settings.TRANSLATOR = "none"
    page = signed_in.get(f"/comics/{board.pk}/translations/").content.decode()
    assert 'id="draft"' not in page and "every line is yours to write" in page
    assert '<option value="ja">Japanese — 日本語</option>' in page
    assert '<option value="en">' not in page, "not into the original's own language"
    settings.TRANSLATOR = "openai"
    assert 'id="draft"' in signed_in.get(f"/comics/{board.pk}/translations/").content.decode()


@pytest.mark.django_db
def test_the_reader_offers_the_languages(board, signed_in):
    page = signed_in.get(f"/comics/{board.pk}/read/").content.decode()
    assert 'id="language"' in page and f'href="/comics/{board.pk}/translations/"' in page
