"""One comic, two languages, as a person does it: drawn once, translated in the editor
(some lines typed, the rest drafted by the chat model), a stale line confirmed, the
reader switched to Japanese and the Japanese CBZ downloaded. Not a credit spent on it."""

import io
import json
import re
import zipfile

from playwright.sync_api import expect

from tests.support.standin import Canned

from ..conftest import ARTIFACTS, wait_until
from ..reader.test_pages import approve_all, credits, csrf_headers, panels_with, save_storyboard
from ..test_generate import make_comic
from ..test_wizard import sign_up


def chat_answer(lines: dict) -> Canned:
    """What OpenAI's chat-completions endpoint answers (a chat.completion object)."""
    content = json.dumps({"lines": lines}, ensure_ascii=False)
    return Canned(
        body={
            "id": "chatcmpl-e2e",
            "object": "chat.completion",
            "created": 1767225600,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
    )


def row(page, slot: str, panel: int = 0, line: int = 0):
    return page.locator(f'.t-row[data-slot="{slot}"][data-panel="{panel}"][data-line="{line}"]')


def cbz_of(page, board: int, lang: str = "") -> zipfile.ZipFile:
    query = f"&lang={lang}" if lang else ""
    answer = page.request.get(f"/api/storyboards/{board}/export/?format=cbz{query}")
    assert answer.status == 200
    return zipfile.ZipFile(io.BytesIO(answer.body()))


def test_translate_in_the_editor_read_in_japanese_download_the_japanese_cbz(
    page, stack, chat_model, shoot, tmp_path
):
    sign_up(page, "translator")
    stack.manage("grant_credits", "translator", "5", "--reason", "e2e")
    board = make_comic(page, "Rooftops")
    page.request.patch(  # a caption on panel 1 and a line for Kenji on panel 3
        f"/api/storyboards/{board}/",
        data={
            "panels": panels_with(
                page,
                board,
                {
                    1: {"caption": "Neo-Kyoto, 2 a.m."},
                    3: {"dialogue": [{"speaker": "Kenji", "text": "Then we jump."}]},
                },
            )
        },
        headers=csrf_headers(page),
    )
    page.goto(f"/comics/{board}/review/")
    page.get_by_role("button", name="Generate").click()
    expect(page).to_have_url(re.compile(rf"/comics/{board}/jobs/\d+/$"))
    approve_all(page, 3)
    wait_until(lambda: credits(page) == {"available": 2, "held": 0}, what="3 credits spent")
    art = [p["art_hash"] for p in page.request.get(f"/api/storyboards/{board}/").json()["panels"]]

    page.goto(f"/comics/{board}/read/")
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
    english_page = page.locator("#page-image").get_attribute("src")

    # The editor, from the reader: add Japanese, type the title and Aiko's line.
    page.get_by_role("link", name="Translate…").click()
    expect(page).to_have_url(f"{stack.base_url}/comics/{board}/translations/")
    expect(page.locator("#none-yet")).to_be_visible()
    page.get_by_label("Add a language").select_option("ja")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.locator("#editor")).to_be_visible()
    expect(page.locator("#translations")).to_have_attribute("data-language", "ja")
    expect(row(page, "dialogue", 2, 0).locator(".t-text")).to_have_text("They're right behind us!")
    page.get_by_label("Japanese: title").fill("屋上")
    page.get_by_label("Japanese: panel 2, line 1 (Aiko)").fill("追いつかれる！")
    expect(page.locator("#save-state")).to_have_text("Saved")
    expect(page.locator("#counts")).to_contain_text("2 lines to translate")

    # The chat model drafts the two lines still empty; the typed ones are not asked for.
    chat_model.reply(chat_answer({"p1.c": "ネオ京都、午前二時。", "p3.l1": "なら、跳ぶぞ。"}))
    page.get_by_role("button", name="Draft the missing lines").click()
    expect(page.locator("#notice")).to_have_text("The language model drafted 2 lines.")
    expect(row(page, "caption", 1).locator(".t-input")).to_have_value("ネオ京都、午前二時。")
    expect(row(page, "dialogue", 3, 0).locator(".t-input")).to_have_value("なら、跳ぶぞ。")
    expect(row(page, "dialogue", 3, 0).locator(".t-drafted")).to_be_visible()
    expect(page.locator("#counts")).to_have_text("Every line is translated.")
    asked = json.loads(chat_model.requests[-1]["json"]["messages"][-1]["content"])
    assert [line["id"] for line in asked["lines"]] == ["p1.c", "p3.l1"]
    assert (asked["from"], asked["to"]) == ("English", "Japanese")
    shoot("translation-editor")

    # The original's line is edited: the translation keeps its line, marked until confirmed.
    page.goto(f"/comics/{board}/storyboard/")
    line = page.locator(".panel-card").nth(1).locator(".l-text").first
    line.fill("They're right behind us, run!")
    save_storyboard(page)
    page.goto(f"/comics/{board}/translations/?lang=ja")
    stale = row(page, "dialogue", 2, 0)
    expect(stale).to_have_class(re.compile(r"\bstale\b"))
    expect(stale.locator(".t-was")).to_have_text("They're right behind us!")
    expect(stale.locator(".t-input")).to_have_value("追いつかれる！")
    expect(page.locator("#counts")).to_contain_text("1 changed in the original since")
    stale.get_by_role("button", name="Still right").click()
    expect(page.locator("#save-state")).to_have_text("Saved")
    expect(stale).not_to_have_class(re.compile(r"\bstale\b"))
    expect(page.locator("#counts")).to_have_text("Every line is translated.")

    # The reader in Japanese: other pages, and the Japanese CBZ.
    page.get_by_role("link", name="Read it in this language").click()
    reader = page.locator("#reader")
    expect(reader).to_have_attribute("data-language", "ja")
    expect(page.get_by_label("Language")).to_have_value("ja")
    japanese_page = page.locator("#page-image").get_attribute("src")
    assert "lang=ja" in japanese_page and japanese_page != english_page
    page.get_by_label("Language").select_option("en")
    expect(reader).to_have_attribute("data-language", "en")
    page.get_by_label("Language").select_option("ja")
    expect(reader).to_have_attribute("data-language", "ja")
    expect(page.locator("#page-image")).to_have_js_property("complete", True)
    shoot("reader-japanese")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download CBZ").click()
    assert download.value.suggested_filename == "rooftops-ja.cbz"
    path = tmp_path / "rooftops-ja.cbz"
    download.value.save_as(path)
    japanese = zipfile.ZipFile(path)
    info = japanese.read("ComicInfo.xml").decode()
    assert "<LanguageISO>ja</LanguageISO>" in info and "<Title>屋上</Title>" in info
    english = cbz_of(page, board)
    assert "<LanguageISO>en</LanguageISO>" in english.read("ComicInfo.xml").decode()
    pages = sorted(n for n in japanese.namelist() if n.endswith(".png"))
    assert pages and pages == sorted(n for n in english.namelist() if n.endswith(".png"))
    assert all(japanese.read(n) != english.read(n) for n in pages), "every page lettered anew"
    for lang, archive in (("ja", japanese), ("en", english)):  # the README's pictures
        (ARTIFACTS / f"page-{lang}.png").write_bytes(archive.read(pages[0]))

    # Lettering only: nothing held or spent, no picture's inputs changed.
    assert credits(page) == {"available": 2, "held": 0}
    after = [p["art_hash"] for p in page.request.get(f"/api/storyboards/{board}/").json()["panels"]]
    assert after == art
