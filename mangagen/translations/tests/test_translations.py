"""Translations (issue #25, items 1 and 2): one comic lettered in many languages, for free.

A translation holds the title and each panel's lines and caption; an edit of
the original keeps a translated line and flags it stale; a missing line is
lettered in the original; pages, exports and panel images take `?lang=`;
nothing of it renders, holds or spends a credit, or changes an art hash. The
chat translator is tested over real HTTP against a local stand-in answering
as OpenAI's chat-completions endpoint does.
"""

import io
import zipfile
from pathlib import Path

import pytest

from ledger.models import Hold, Transfer
from mangagen.pages import builds
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
from tests.support.translations import CAST, JAPANESE, PANELS, edit_original, put, texts, url

ROOT = Path(__file__).resolve().parents[3]

pytestmark = [pytest.mark.board(characters=CAST, panels=PANELS)]


@pytest.fixture
def drawn(run, board, user, account, instant_renders):
    """The board with every panel rendered, delivered and kept (three credits spent)."""
    run.finish(run.generate(user, board))
    return board


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
def test_a_translation_is_made_read_and_listed_line_by_line(board, person):
    assert person.get(url(board)).json() == {
        "original": "en",
        "name": "English",
        "translations": [],
    }
    response = put(person, board, "ja", JAPANESE)
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
    assert person.get(url(board, "ja")).json()["panels"] == body["panels"]
    listed = person.get(url(board)).json()["translations"]
    assert [(t["language"], t["missing"], t["stale"]) for t in listed] == [("ja", 0, 0)]


@pytest.mark.django_db
def test_editing_the_original_keeps_the_translated_line_and_flags_it_stale(board, person):
    put(person, board, "fr", {"panels": [{"index": 2, "dialogue": ["Qui est là ?"]}]})
    edit_original(board, {2: {"dialogue": [{"speaker": "Aiko", "text": "Who goes there?"}]}})
    body = person.get(url(board, "fr")).json()
    line = body["panels"][1]["dialogue"][0]
    assert line["text"] == "Qui est là ?" and line["stale"]
    assert (line["original"], line["was"]) == ("Who goes there?", "Who's there?")
    # title, the caption and Kenji's line are still to translate; one line is stale
    assert (body["missing"], body["stale"]) == (3, 1)

    # An autosave that sends the line as it stands leaves it stale...
    again = put(person, board, "fr", {"panels": [{"index": 2, "dialogue": ["Qui est là ?"]}]})
    assert again.json()["stale"] == 1
    # ...the person says it is still right, or retranslates it
    confirmed = put(
        person,
        board,
        "fr",
        {"panels": [{"index": 2, "dialogue": [{"text": "Qui est là ?", "stale": False}]}]},
    )
    assert (
        confirmed.json()["stale"] == 0 and not confirmed.json()["panels"][1]["dialogue"][0]["was"]
    )


@pytest.mark.django_db
def test_panels_not_sent_keep_their_lines_and_a_line_sent_empty_is_untranslated(board, person):
    put(person, board, "de", JAPANESE | {"title": "Dächer"})
    body = put(person, board, "de", {"panels": [{"index": 2, "dialogue": ["", "Zeig dich."]}]})
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
    board, person, lang, body, detail
):
    put(person, board, "ja", JAPANESE)
    before = person.get(url(board, "ja")).json()
    response = put(person, board, lang, body)
    assert response.status_code == 400 and response.json()["error"] == "invalid"
    assert detail in response.json()["detail"]
    assert person.get(url(board, "ja")).json() == before


@pytest.mark.django_db
def test_no_such_translation_answers_404_everywhere(board, person):
    for response in (
        person.get(url(board, "ko")),
        person.get(url(board, "en")),  # the original has no translation of itself
        person.delete(url(board, "ko")),
        person.get(f"/api/storyboards/{board.pk}/pages/?lang=ko"),
        person.get(f"/api/storyboards/{board.pk}/export/?format=cbz&lang=ko"),
        person.get(f"/api/storyboards/{board.pk}/export/?format=pdf&lang=xx"),
    ):
        assert response.status_code == 404
        assert response.json()["error"] == "no_such_translation"


@pytest.mark.django_db
def test_a_deleted_translation_is_gone(board, person):
    put(person, board, "ja", JAPANESE)
    assert person.delete(url(board, "ja")).status_code == 204
    assert person.get(url(board, "ja")).status_code == 404
    assert person.get(url(board)).json()["translations"] == []


@pytest.mark.django_db
def test_strangers_see_no_translation_and_change_none(board, person, make_user, client):
    put(person, board, "ja", JAPANESE)
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
def test_the_original_language_is_the_storyboards_and_not_a_translations(board, person):
    detail = f"/api/storyboards/{board.pk}/"
    assert person.get(detail).json()["language"] == "en"
    put(person, board, "ja", JAPANESE)
    refused = person.patch(detail, {"language": "ja"}, content_type="application/json")
    assert refused.status_code == 400 and "Japanese translation" in refused.json()["detail"]
    changed = person.patch(detail, {"language": "FR"}, content_type="application/json")
    assert changed.json()["language"] == "fr"
    assert person.get(url(board)).json()["original"] == "fr"
    created = person.post(
        "/api/storyboards/",
        {"title": "屋上", "story": "「待って！」とアイコは叫んだ。"},
        content_type="application/json",
    )
    assert created.json()["language"] == "ja", "guessed from the story"


@pytest.mark.django_db
def test_a_comic_has_a_bounded_number_of_translations(board, person, monkeypatch):
    monkeypatch.setattr(services.limits, "MAX_TRANSLATIONS", 2)
    assert put(person, board, "ja", {}).status_code == 200
    assert put(person, board, "fr", {}).status_code == 200
    refused = put(person, board, "de", {})
    assert refused.status_code == 400 and "2 translations" in refused.json()["detail"]
    assert put(person, board, "fr", {"title": "Toits"}).status_code == 200  # editing one


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
def test_pages_and_exports_are_lettered_in_the_language_asked_for(drawn, person):
    board = drawn
    put(person, board, "ja", JAPANESE)
    pages = person.get(f"/api/storyboards/{board.pk}/pages/?lang=ja").json()
    assert (pages["language"], pages["title"]) == ("ja", "屋上")
    assert pages["pages"][0]["image_url"].endswith("?lang=ja")
    original = person.get(f"/api/storyboards/{board.pk}/pages/").json()
    assert (
        original["language"] == "en"
        and original["pages"][0]["image_url"] != pages["pages"][0]["image_url"]
    )
    assert page_png(person, board, "ja") != page_png(person, board)

    response, japanese = cbz(person, board, "ja")
    assert 'filename="rooftops-ja.cbz"' in response["Content-Disposition"]
    info = japanese.read("ComicInfo.xml").decode()
    assert "<LanguageISO>ja</LanguageISO>" in info and "<Title>屋上</Title>" in info
    assert info.index("<PageCount>") < info.index("<LanguageISO>") < info.index("<Manga>")
    _, english = cbz(person, board)
    assert "<LanguageISO>en</LanguageISO>" in english.read("ComicInfo.xml").decode()
    assert japanese.read("001.png") != english.read("001.png")

    pdf = person.get(f"/api/storyboards/{board.pk}/export/?format=pdf&lang=ja")
    assert pdf.status_code == 200 and b"".join(pdf.streaming_content).startswith(b"%PDF")


@pytest.mark.django_db
def test_japanese_is_set_vertically_and_missing_lines_are_lettered_in_the_original(drawn, person):
    board = drawn
    put(person, board, "ja", {"panels": [{"index": 2, "dialogue": ["誰？"]}]})
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
def test_a_translation_edit_changes_its_pages_key_and_no_other(drawn, person):
    board = drawn
    put(person, board, "ja", JAPANESE)
    english = builds.comic_of(storyboard=board).key
    japanese = builds.comic_of(storyboard=board, language="ja").key
    put(person, board, "ja", {"title": "夜の屋上"})
    assert builds.comic_of(storyboard=board, language="ja").key != japanese
    assert builds.comic_of(storyboard=board).key == english


@pytest.mark.django_db
def test_a_panel_image_is_lettered_in_a_translation_when_asked(drawn, person):
    board = drawn
    put(person, board, "ja", JAPANESE)
    takes = person.get(f"/api/storyboards/{board.pk}/panels/2/takes/").json()["takes"]
    image = takes[0]["image_url"]
    english, japanese = person.get(image), person.get(f"{image}?lang=ja")
    assert english.status_code == japanese.status_code == 200
    assert english.content != japanese.content and english["ETag"] != japanese["ETag"]
    assert person.get(f"{image}?lang=ko").status_code == 404
    person.delete(url(board, "ja"))
    pages = person.get(f"/api/storyboards/{board.pk}/pages/").json()
    gone = pages["pages"][0]["image_url"] + "?lang=ja"
    assert person.get(gone).status_code == 404


@pytest.mark.django_db
def test_a_translation_never_holds_or_spends_a_credit_nor_changes_an_art_hash(
    drawn, person, account
):
    board = drawn
    arts = [p["art_hash"] for p in person.get(f"/api/storyboards/{board.pk}/").json()["panels"]]
    rows = (Transfer.objects.count(), Hold.objects.count())
    account.refresh_from_db()
    balance = (account.available, account.held)
    put(person, board, "ja", JAPANESE)
    put(person, board, "ja", {"title": "夜"})
    page_png(person, board, "ja")
    cbz(person, board, "ja")
    person.delete(url(board, "ja"))
    assert (Transfer.objects.count(), Hold.objects.count()) == rows
    account.refresh_from_db()
    assert (account.available, account.held) == balance
    after = person.get(f"/api/storyboards/{board.pk}/").json()["panels"]
    assert [p["art_hash"] for p in after] == arts
    quote = person.get(f"/api/storyboards/{board.pk}/quote/").json()
    assert quote["render"] == [] and quote["credits"] == 0


# --- the editor and the reader's switch ---------------------------------------------------------


@pytest.mark.django_db
def test_the_editor_page_says_whether_a_model_can_draft(board, person, settings):
    settings.TRANSLATOR = "none"
    page = person.get(f"/comics/{board.pk}/translations/").content.decode()
    assert 'id="draft"' not in page and "every line is yours to write" in page
    assert '<option value="ja">Japanese — 日本語</option>' in page
    assert '<option value="en">' not in page, "not into the original's own language"
    settings.TRANSLATOR = "openai"
    assert 'id="draft"' in person.get(f"/comics/{board.pk}/translations/").content.decode()


@pytest.mark.django_db
def test_the_reader_offers_the_languages(board, person):
    page = person.get(f"/comics/{board.pk}/read/").content.decode()
    assert 'id="language"' in page and f'href="/comics/{board.pk}/translations/"' in page
