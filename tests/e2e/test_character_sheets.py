"""Character sheets, as a person uses them: render one on the Characters step, see it,
use it in a comic, redo it, and Review asks to redraw only the panels that character is in."""

import re

from playwright.sync_api import expect

from .conftest import wait_until
from .test_generate import make_comic
from .test_wizard import sign_up


def credits(page) -> dict:
    return page.request.get("/api/me/").json()["credits"]


def sheet_of(page, board: int, name: str = "Aiko") -> dict | None:
    data = page.request.get(f"/api/storyboards/{board}/").json()
    return next(c for c in data["characters"] if c["name"] == name)["sheet"]


def approve_all(page, count: int) -> None:
    for _ in range(count):
        button = page.locator(".job-panel.current").get_by_role("button", name="Approve")
        expect(button).to_be_visible(timeout=30000)
        button.click()
    expect(page.locator("#done")).to_be_visible(timeout=30000)


def test_render_a_sheet_use_it_in_a_comic_and_redo_it(page, stack, shoot):
    sign_up(page, "sheetmaker")
    stack.manage("grant_credits", "sheetmaker", "8", "--reason", "e2e")
    board = make_comic(page, "Sheets")  # Aiko in panels 2 and 3, Kenji in 3

    # Render Aiko's sheet on the Characters step: shown there once ready, one credit paid.
    page.goto(f"/comics/{board}/characters/")
    aiko = page.locator(".character-row").first
    expect(aiko.locator(".c-name")).to_have_value("Aiko")
    expect(aiko.locator(".c-sheet-state")).to_have_text("No character sheet yet.")
    aiko.get_by_role("button", name="Render sheet (1 credit)").click()
    expect(aiko.locator(".c-sheet")).to_have_attribute("data-state", "ready", timeout=30000)
    image = aiko.locator(".c-sheet-image")
    expect(image).to_be_visible()
    wait_until(lambda: image.evaluate("i => i.complete && i.naturalWidth > 0"), what="sheet drawn")
    first = image.get_attribute("src")
    shoot("characters-sheet")
    assert page.request.get(first).headers["content-type"] == "image/png"
    wait_until(lambda: credits(page) == {"available": 7, "held": 0}, what="the sheet paid")
    expect(page.locator("#nav-credits")).to_have_text("7")

    # Use it in a comic: every panel drawn (the sheet's hash is in Aiko's panels' art).
    page.goto(f"/comics/{board}/review/")
    expect(page.locator("#quote")).to_have_text("3 panels to draw — 3 credits")
    page.get_by_role("button", name="Generate").click()
    expect(page).to_have_url(re.compile(rf"/comics/{board}/jobs/\d+/$"))
    approve_all(page, 3)
    wait_until(lambda: credits(page) == {"available": 4, "held": 0}, what="3 panels paid")

    # Redo the sheet: a new picture, and Review asks to redraw Aiko's panels only.
    page.goto(f"/comics/{board}/characters/")
    aiko = page.locator(".character-row").first
    expect(aiko.locator(".c-sheet")).to_have_attribute("data-state", "ready")
    aiko.get_by_role("button", name="Redo sheet (1 credit)").click()
    expect(aiko.locator(".c-sheet-image")).not_to_have_attribute("src", first, timeout=30000)
    expect(aiko.locator(".c-sheet")).to_have_attribute("data-state", "ready")
    wait_until(lambda: credits(page) == {"available": 3, "held": 0}, what="the redo paid")
    page.goto(f"/comics/{board}/review/")
    expect(page.locator("#quote")).to_have_text(
        "2 panels to draw, 1 kept — 2 credits. All redrawn for a new character sheet."
    )

    # Editing Aiko's description makes the sheet stale; the step says so.
    page.goto(f"/comics/{board}/characters/")
    aiko = page.locator(".character-row").first
    aiko.locator(".c-description").fill("short silver hair, red scarf")
    expect(aiko.locator(".c-sheet")).to_have_attribute("data-state", "stale", timeout=10000)
    expect(aiko.locator(".c-sheet-state")).to_contain_text("description changed")
    assert sheet_of(page, board)["state"] == "stale"
    shoot("characters-sheet-stale")
