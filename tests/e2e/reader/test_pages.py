"""Pages and kept panels, as a person uses them: a typo fixed for free, one panel redrawn
for one credit, the pages read right to left, the PDF downloaded."""

import re
import shutil

from playwright.sync_api import expect

from .conftest import ARTIFACTS, wait_until
from .test_generate import make_comic
from .test_wizard import sign_up

TYPO = "They're rigth behind us!"
FIXED = "They're right behind us!"


def credits(page) -> dict:
    return page.request.get("/api/me/").json()["credits"]


def approve_all(page, count: int) -> None:
    for _ in range(count):
        button = page.locator(".job-panel.current").get_by_role("button", name="Approve")
        expect(button).to_be_visible(timeout=20000)
        button.click()
    expect(page.locator("#done")).to_be_visible(timeout=20000)


def save_storyboard(page) -> None:
    expect(page.locator("#save-state")).to_have_text("Saved", timeout=10000)


def test_typo_fix_is_free_one_panel_redrawn_pages_read_right_to_left(page, stack, shoot, tmp_path):
    sign_up(page, "letterer")
    stack.manage("grant_credits", "letterer", "5", "--reason", "e2e")
    board = make_comic(page, "Rooftops")
    page.request.patch(  # a typo in panel 2's balloon
        f"/api/storyboards/{board}/",
        data={
            "panels": panels_with(
                page, board, {2: {"dialogue": [{"speaker": "Aiko", "text": TYPO}]}}
            )
        },
        headers=csrf_headers(page),
    )

    # Review quotes exactly what Generate will draw and charge.
    page.goto(f"/comics/{board}/review/")
    expect(page.locator("#quote")).to_have_text("3 panels to draw — 3 credits")
    page.get_by_role("button", name="Generate").click()
    expect(page).to_have_url(re.compile(rf"/comics/{board}/jobs/\d+/$"))
    approve_all(page, 3)
    wait_until(lambda: credits(page) == {"available": 2, "held": 0}, what="3 credits spent")

    page.goto(f"/comics/{board}/read/")
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
    before = page.locator("#page-image").get_attribute("src")

    # Fix the typo in the storyboard editor, after delivery: no render, no charge.
    page.goto(f"/comics/{board}/storyboard/")
    line = page.locator(".panel-card").nth(1).locator(".l-text").first
    expect(line).to_have_value(TYPO)
    line.fill(FIXED)
    save_storyboard(page)
    page.goto(f"/comics/{board}/review/")
    expect(page.locator("#quote")).to_contain_text("Every panel is drawn and kept — nothing to pay")
    assert credits(page) == {"available": 2, "held": 0}
    # While the page with the new text is composed, the reader says so (the picture's
    # answer is held back here until that is seen), then shows the page.
    held = []
    pictures = re.compile(rf"/comics/{board}/pages/")
    page.route(pictures, lambda route: held.append(route))
    page.goto(f"/comics/{board}/read/")
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
    status = page.get_by_role("status").filter(has_text="Drawing page 1…")
    expect(status).to_be_visible()
    expect(page.locator("#page-image")).to_have_attribute("aria-busy", "true")
    # (Route handlers run only while Playwright is called: the predicate lets it run.)
    wait_until(lambda: page.wait_for_timeout(20) or held, what="the page's picture to be held")
    shoot("reader-drawing")
    held[0].continue_()
    page.unroute(pictures)
    expect(status).to_be_hidden()
    expect(page.locator("#page-image")).not_to_have_attribute("aria-busy", "true")
    expect(page.locator("#page-image")).to_have_js_property("complete", True)
    after = page.locator("#page-image").get_attribute("src")
    assert after != before, "the page is composed again with the new text"
    old = page.request.get(before)
    assert old.status == 404, "the page with the typo is gone"
    fresh = page.request.get(after)
    assert fresh.status == 200 and fresh.headers["content-type"] == "image/png"
    assert credits(page) == {"available": 2, "held": 0}

    # Change one panel's picture: Generate draws that one only, for one credit.
    page.goto(f"/comics/{board}/storyboard/")
    page.locator(".panel-card").nth(2).locator(".p-description").fill(
        "Kenji takes her hand; lightning over the city."
    )
    save_storyboard(page)
    page.goto(f"/comics/{board}/review/")
    expect(page.locator("#quote")).to_have_text("1 panel to draw, 2 kept — 1 credit")
    expect(page.locator(".review-panel .tag.kept")).to_have_count(2)
    shoot("review-quote")
    page.get_by_role("button", name="Generate").click()
    expect(page).to_have_url(re.compile(rf"/comics/{board}/jobs/\d+/$"))
    expect(page.locator("#progress")).to_contain_text("Panel 3 of 3", timeout=20000)
    approve_all(page, 1)
    wait_until(lambda: credits(page) == {"available": 1, "held": 0}, what="one more credit spent")

    # The pages, right to left: move a break so there are two, turn with the keys.
    page.get_by_role("link", name="Read it").click()
    expect(page).to_have_url(f"{stack.base_url}/comics/{board}/read/")
    reader = page.locator("#reader")
    expect(reader).to_have_attribute("data-ready", "1")
    expect(reader).to_have_attribute("data-direction", "rtl")
    viewer = page.locator("#page-viewer")
    expect(viewer).to_have_attribute("data-page", "1")
    # A picture for the README: the composed page, before any break is moved.
    whole = page.request.get(page.locator("#page-image").get_attribute("src"))
    (ARTIFACTS / "page.png").write_bytes(whole.body())
    page.get_by_role("button", name="Push the last panel to the next page").click()
    expect(page.locator("#page-label")).to_contain_text("Page 1 of 2")
    page.keyboard.press("ArrowLeft")  # right to left: the next page is on the left
    expect(viewer).to_have_attribute("data-page", "2")
    expect(page.locator("#page-label")).to_contain_text("Page 2 of 2")
    page.keyboard.press("ArrowRight")
    expect(viewer).to_have_attribute("data-page", "1")
    expect(page.locator("#page-image")).to_have_js_property("complete", True)
    shoot("pages-reader")

    with page.expect_download() as download:
        page.get_by_role("link", name="Download PDF").click()
    pdf = tmp_path / "rooftops.pdf"
    download.value.save_as(pdf)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page[^s]", data)) == 2

    # A picture for the README: the webtoon strip.
    page.get_by_label("Format").select_option("webtoon")
    expect(page.locator("#webtoon")).to_be_visible()
    strip = page.request.get(f"/api/storyboards/{board}/export/?format=webtoon")
    assert strip.status == 200 and strip.headers["content-type"] == "image/png"
    (ARTIFACTS / "webtoon.png").write_bytes(strip.body())
    assert credits(page) == {"available": 1, "held": 0}
    shutil.copy(pdf, ARTIFACTS / "rooftops.pdf")


def csrf_headers(page) -> dict:
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    return {"X-CSRFToken": csrf, "Content-Type": "application/json"}


def panels_with(page, board: int, changes: dict) -> list[dict]:
    panels = page.request.get(f"/api/storyboards/{board}/").json()["panels"]
    for index, fields in changes.items():
        panels[index - 1].update(fields)
    return [
        {k: p[k] for k in ("description", "shot", "characters", "dialogue", "caption")}
        for p in panels
    ]
