"""A series shared as a reading link: its owner clicks Share on the series page and copies
the link; someone signed out reads it from chapter one into chapter two, right to left
(the next page is on the left), switches to the French translation, and the link answers
404 once the owner stops sharing, with a page that says so (in English, and in Japanese)."""

import re

from playwright.sync_api import expect

from .conftest import ARTIFACTS, wait_until
from .test_wizard import sign_up

PANELS = [
    {
        "description": "Aiko waits on the roof.",
        "shot": "wide",
        "dialogue": [{"speaker": "Aiko", "text": "He is late."}],
    },
]
FRENCH = {"panels": [{"index": 1, "dialogue": ["Il est en retard."]}]}


def call(page, method: str, path: str, body: dict | None = None):
    """The API as the signed-in page's scripts call it (session cookie, CSRF header)."""
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    answer = page.request.fetch(
        path, method=method, data=body if body is not None else {}, headers={"X-CSRFToken": csrf}
    )
    assert answer.ok, f"{method} {path}: {answer.status} {answer.text()[:300]}"
    return answer.json() if answer.status != 204 else None


def drawn_chapter(page, series: int, title: str, french_title: str) -> int:
    """A chapter of one panel, right to left, its panel drawn and kept, and in French."""
    board = call(page, "POST", f"/api/series/{series}/chapters/", {"story": "Aiko waits."})["id"]
    call(
        page,
        "PATCH",
        f"/api/storyboards/{board}/",
        {
            "title": title,
            "characters": [{"name": "Aiko", "description": "red scarf"}],
            "panels": PANELS,
            "layout": {"direction": "rtl"},
        },
    )
    call(page, "POST", f"/api/storyboards/{board}/generate/")
    wait_until(
        lambda: call(page, "GET", f"/api/storyboards/{board}/pages/")["kept"],
        what=f"{title}'s panel kept",
    )
    french = FRENCH | {"title": french_title}
    call(page, "PUT", f"/api/storyboards/{board}/translations/fr/", french)
    return board


def test_a_published_series_reads_signed_out_across_chapters_right_to_left_and_in_french(
    page, browser, stack, shoot
):
    sign_up(page, "publisher")
    stack.manage("grant_credits", "publisher", "6", "--reason", "e2e")
    series = call(page, "POST", "/api/series/", {"title": "Rooftops"})["id"]
    drawn_chapter(page, series, "The roof", "Le toit")
    drawn_chapter(page, series, "The stairs", "L'escalier")

    # The owner shares the series and copies its link.
    page.goto(f"/series/{series}/")
    share = page.locator("#share")
    expect(share).to_have_attribute("data-ready", "1")
    page.get_by_role("button", name="Share").click()
    expect(share).to_have_attribute("data-state", "published")
    expect(page.locator("#share-state")).to_have_text("Published")
    link = page.locator("#share-link").input_value()
    assert re.fullmatch(rf"{re.escape(stack.base_url)}/read/[\w-]{{32}}/", link), link

    # Someone signed out reads it.
    reader_context = browser.new_context(viewport={"width": 1200, "height": 900})
    reader = reader_context.new_page()
    reader.set_default_timeout(15000)
    reader.goto(link)
    root = reader.locator("#published")
    expect(root).to_have_attribute("data-ready", "1")
    expect(reader.get_by_role("heading", name="Rooftops")).to_be_visible()
    expect(reader.get_by_role("link", name="Log in")).to_be_visible()  # signed out
    expect(root).to_have_attribute("data-direction", "rtl")
    expect(reader.locator("#chapter-label")).to_have_text("Chapter 1: The roof")
    expect(reader.locator("#page-label")).to_have_text("Page 1 of 2 · read right to left")
    image = reader.locator("#page-image")

    def page_shown(number: int, lang: str) -> None:
        expect(image).to_have_attribute("src", re.compile(rf"/pages/{number}/\?lang={lang}&v=1$"))
        wait_until(lambda: image.evaluate("i => i.complete && i.naturalWidth > 0"), what="the page")

    page_shown(1, "en")
    # Right to left: the right arrow goes back (nothing before page one), the left turns on,
    # across the chapter boundary.
    reader.keyboard.press("ArrowRight")
    expect(reader.locator("#page-label")).to_have_text("Page 1 of 2 · read right to left")
    expect(reader.locator("#turn-left")).to_have_attribute("aria-label", "Next page")
    reader.keyboard.press("ArrowLeft")
    expect(reader.locator("#chapter-label")).to_have_text("Chapter 2: The stairs")
    expect(root).to_have_attribute("data-chapter", "2")
    expect(reader.locator("#page-label")).to_have_text("Page 2 of 2 · read right to left")
    page_shown(2, "en")
    reader.screenshot(path=str(ARTIFACTS / "reading-link-chapter-two.png"), full_page=True)

    # The French translation: the same page, lettered in French.
    reader.get_by_label("Language").select_option("fr")
    expect(reader.locator("#chapter-label")).to_have_text("Chapter 2: L'escalier")
    page_shown(2, "fr")
    expect(root).to_have_attribute("lang", "fr")
    reader.locator("#turn-right").click()  # back into chapter one, still in French
    expect(reader.locator("#chapter-label")).to_have_text("Chapter 1: Le toit")
    page_shown(1, "fr")
    reader.screenshot(path=str(ARTIFACTS / "reading-link-french.png"), full_page=True)
    shoot("reading-link-shared")  # the owner's series page: Published, the link, Copy

    # The owner stops sharing: the link answers 404, a page that says so, styled.
    page.get_by_role("button", name="Stop sharing").click()
    expect(share).to_have_attribute("data-state", "private")
    assert reader.goto(link).status == 404
    gone = reader.get_by_role("heading", name="This comic is no longer shared")
    expect(gone).to_be_visible()
    expect(reader.locator("#no-longer-shared")).to_have_css("border-top-style", "solid")
    reader.screenshot(path=str(ARTIFACTS / "reading-link-no-longer-shared.png"), full_page=True)
    reader_context.close()
    # The same in Japanese, for a reader whose browser asks for it.
    japanese = browser.new_context(viewport={"width": 1200, "height": 900}, locale="ja-JP")
    reader = japanese.new_page()
    assert reader.goto(link).status == 404
    expect(reader.get_by_role("heading", name="このマンガは共有が終了しました")).to_be_visible()
    reader.screenshot(path=str(ARTIFACTS / "reading-link-no-longer-shared-ja.png"), full_page=True)
    japanese.close()
