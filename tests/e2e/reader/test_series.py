"""A series, as a person makes one: chapter one with a character sheet, chapter two that
starts with that character drawn from the same sheet at no cost, reading across both
chapters, the whole series downloaded as one PDF, and, once both chapters are
translated, read from chapter to chapter and downloaded in French."""

import io
import re
import zipfile

from playwright.sync_api import expect

from tests.support.factories import pdf_page_count

from ..conftest import wait_until
from ..test_character_sheets import approve_all, credits
from ..test_wizard import sign_up
from .test_pages import csrf_headers

CHAPTER_ONE = 'Aiko waits on the roof. "He is late," Aiko said.\n\nKenji runs up the stairs.'
CHAPTER_TWO = 'The next day Aiko brings snacks. "Thanks," Kenji said.'


def storyboard_of(page) -> dict:
    board = int(re.search(r"/comics/(\d+)/", page.url)[1])
    return page.request.get(f"/api/storyboards/{board}/").json()


def start_chapter(page, story: str, button: str) -> dict:
    page.get_by_label("Story").fill(story)
    page.get_by_role("button", name=button).click()
    expect(page).to_have_url(re.compile(r"/comics/\d+/characters/$"))
    expect(page.locator(".character-row").first.locator(".c-name")).to_have_value("Aiko")
    return storyboard_of(page)


def pages_shown(page) -> None:
    """The reader has drawn its first page (an image, loaded)."""
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
    expect(page.locator("#page-viewer")).to_be_visible()
    image = page.locator("#page-image")
    wait_until(lambda: image.evaluate("i => i.complete && i.naturalWidth > 0"), what="a page")


def back_a_chapter(page, before: dict, query: str = "") -> None:
    """In the reader, once its page is drawn, follow the link to the chapter `before` this
    one: it opens with the same `query` (the language read in)."""
    pages_shown(page)
    page.get_by_role("link", name=f"← Chapter {before['series']['chapter']}").click()
    expect(page).to_have_url(re.compile(rf"/comics/{before['id']}/read/{re.escape(query)}$"))


def generate_all(page, board: dict) -> None:
    """Review, Generate, approve every panel: the chapter is drawn."""
    page.goto(f"/comics/{board['id']}/review/")
    count = len(board["panels"])
    expect(page.locator("#quote")).to_contain_text(f"{count} panel")
    page.get_by_role("button", name="Generate").click()
    expect(page).to_have_url(re.compile(rf"/comics/{board['id']}/jobs/\d+/$"))
    approve_all(page, count)


def test_a_series_keeps_its_cast_and_reads_and_downloads_as_one(page, stack, shoot, tmp_path):
    sign_up(page, "serialist")
    stack.manage("grant_credits", "serialist", "12", "--reason", "e2e")

    # A series, and its first chapter drafted from a story.
    page.get_by_role("link", name="+ New series").click()
    page.get_by_label("Title").fill("Rooftops")
    page.get_by_role("button", name="Start the series").click()
    expect(page.get_by_role("heading", name="Rooftops")).to_be_visible()
    series_url = page.url
    one = start_chapter(page, CHAPTER_ONE, "Start chapter 1")
    assert one["series"]["chapter"] == 1 and len(one["panels"]) >= 2

    # Aiko's sheet, rendered in chapter one: one credit.
    aiko = page.locator(".character-row").first
    aiko.get_by_role("button", name="Render sheet (1 credit)").click()
    expect(aiko.locator(".c-sheet")).to_have_attribute("data-state", "ready", timeout=30000)
    sheet = storyboard_of(page)["characters"][0]["sheet"]
    wait_until(lambda: credits(page) == {"available": 11, "held": 0}, what="the sheet paid")
    generate_all(page, one)
    spent = 11 - len(one["panels"])
    wait_until(lambda: credits(page) == {"available": spent, "held": 0}, what="chapter one paid")

    # Chapter two starts with Aiko and the same sheet, and costs nothing to start.
    page.goto(series_url)
    expect(page.locator('#chapters li[data-chapter="1"] .chapter-progress')).to_have_text(
        f"{len(one['panels'])} of {len(one['panels'])} panels drawn"
    )
    two = start_chapter(page, CHAPTER_TWO, "Start the next chapter")
    assert two["series"]["chapter"] == 2 and two["style"] == one["style"]
    carried = next(c for c in two["characters"] if c["name"] == "Aiko")["sheet"]
    assert carried["hash"] == sheet["hash"] and carried["in_use"] and carried["state"] == "ready"
    aiko = page.locator(".character-row").first
    expect(aiko.locator(".c-sheet")).to_have_attribute("data-state", "ready")
    expect(aiko.locator(".c-sheet-image")).to_be_visible()
    assert credits(page) == {"available": spent, "held": 0}
    shoot("series-chapter-two-characters")
    two = storyboard_of(page)
    assert any("Aiko" in p["characters"] for p in two["panels"])
    generate_all(page, two)

    # Read chapter two, step back to chapter one, and forward again.
    page.goto(f"/comics/{two['id']}/read/")
    expect(page.locator("#series-link")).to_have_text("Rooftops · chapter 2 of 2")
    back_a_chapter(page, one)
    expect(page.locator("#series-link")).to_have_text("Rooftops · chapter 1 of 2")
    pages_shown(page)
    shoot("series-reader")
    page.get_by_role("link", name="Chapter 2 →").click()
    expect(page).to_have_url(re.compile(rf"/comics/{two['id']}/read/$"))

    # The whole series as one PDF: every page of both chapters.
    pages = [
        len(page.request.get(f"/api/storyboards/{b['id']}/pages/").json()["pages"])
        for b in (one, two)
    ]
    page.goto(series_url)
    shoot("series-page")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the series (PDF)").click()
    pdf = tmp_path / "rooftops.pdf"
    download.value.save_as(pdf)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    assert pdf_page_count(data) == sum(pages)

    # Both chapters in French: the series page offers the French downloads, the reader
    # goes from chapter to chapter in French, and the CBZ of each says so.
    expect(page.locator("#series-languages")).to_have_count(0)  # nothing translated yet
    for board, title in ((one, "Les toits"), (two, "Le lendemain")):
        answer = page.request.put(
            f"/api/storyboards/{board['id']}/translations/fr/",
            data={"title": title},
            headers=csrf_headers(page),
        )
        assert answer.status == 200, answer.text()
    page.goto(f"/comics/{two['id']}/read/?lang=fr")
    expect(page.locator("#comic-title")).to_have_text("Le lendemain")
    back_a_chapter(page, one, "?lang=fr")
    expect(page.locator("#comic-title")).to_have_text("Les toits")
    page.goto(series_url)
    with page.expect_download() as download:
        page.get_by_role("link", name="French (CBZ)").click()
    assert download.value.suggested_filename == "rooftops-fr.zip"
    zipped = tmp_path / "rooftops-fr.zip"
    download.value.save_as(zipped)
    with zipfile.ZipFile(zipped) as archive:
        chapters = archive.namelist()
        assert len(chapters) == 2 and all(name.endswith("-fr.cbz") for name in chapters)
        for name in chapters:
            with zipfile.ZipFile(io.BytesIO(archive.read(name))) as cbz:
                assert "<LanguageISO>fr</LanguageISO>" in cbz.read("ComicInfo.xml").decode()
