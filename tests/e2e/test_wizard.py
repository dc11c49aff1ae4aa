"""A new person walks the four steps, and everything they did survives a reload."""

import re

from playwright.sync_api import expect

STORY = """The rain had not stopped for three days. Neo-Kyoto glittered under it.

Aiko ran across the rooftop, her red scarf snapping. "They're right behind us!" she shouted.

Kenji caught her hand at the edge. "Then we jump," he said. Aiko looked down at the street below.

"Together?" Aiko asked."""


def sign_up(page, username):
    page.goto("/accounts/signup/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill("paper-lantern-42")
    page.get_by_label("Password confirmation").fill("paper-lantern-42")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name="Your comics")).to_be_visible()


def test_story_to_review_and_back_again(page, shoot, dialogs):
    sign_up(page, "writer")
    shoot("dashboard-empty")
    page.get_by_role("link", name="+ New comic").click()

    # 1. Story — a missing title is shown next to the field.
    page.get_by_label("Story").fill(STORY)
    page.get_by_role("button", name="Next: characters →").click()
    expect(page.locator('[data-error-for="title"]')).to_have_text("Give your comic a title.")
    page.get_by_label("Title").fill("Rooftops of Neo-Kyoto")
    page.get_by_label("Style").select_option("shonen")
    shoot("wizard-1-story")
    page.get_by_role("button", name="Next: characters →").click()

    # 2. Characters — names found in the story are offered.
    expect(page).to_have_url(re.compile(r"/comics/\d+/characters/"))
    comic_url = page.url.rsplit("/characters/", 1)[0]
    page.get_by_role("button", name="+ Aiko").click()
    page.get_by_role("button", name="+ Kenji").click()
    rows = page.locator(".character-row")
    expect(rows).to_have_count(2)
    rows.nth(0).locator(".c-description").fill("long black hair, red scarf")
    rows.nth(1).locator(".c-description").fill("spiky hair, glasses")
    shoot("wizard-2-characters")
    page.get_by_role("button", name="Next: storyboard →").click()

    # 3. Storyboard — draft, then edit, add a line, reorder.
    expect(page).to_have_url(re.compile(r"/storyboard/$"))
    page.get_by_role("button", name="Draft from story").click()  # nothing written yet: no question
    expect(page.locator("#notice")).to_contain_text("Drafted 4 panels")
    cards = page.locator(".panel-card")
    expect(cards).to_have_count(4)
    expect(cards.nth(1).locator(".l-text")).to_have_value("They're right behind us!")
    cards.nth(0).locator(".p-description").fill("Neo-Kyoto at night, rain over neon rooftops.")
    cards.nth(3).locator(".add-line").click()
    cards.nth(3).locator(".line-row").nth(1).locator(".l-speaker").select_option("Kenji")
    cards.nth(3).locator(".line-row").nth(1).locator(".l-text").fill("Together.")
    cards.nth(3).locator(".up").click()
    expect(page.locator("#save-state")).to_have_text("Saved", timeout=10000)
    shoot("wizard-3-storyboard")

    # A fresh draft would throw away what was written: it asks, and "Cancel" keeps it all.
    dialogs.expect(accept=False)
    page.get_by_role("button", name="Draft from story").click()
    expect(page.locator("#draft")).to_be_enabled()
    expect(cards).to_have_count(4)
    expect(cards.nth(0).locator(".p-description")).to_have_value(
        "Neo-Kyoto at night, rain over neon rooftops."
    )

    # Everything survived a reload.
    page.reload()
    cards = page.locator(".panel-card")
    expect(cards.nth(0).locator(".p-description")).to_have_value(
        "Neo-Kyoto at night, rain over neon rooftops."
    )
    expect(cards.nth(2).locator(".l-text").nth(1)).to_have_value("Together.")
    expect(cards.nth(2).locator(".p-title")).to_have_text("Panel 3")
    expect(cards.nth(2).locator('.p-characters input[value="Kenji"]')).to_be_checked()

    # Leaving by a step link right after typing: what was typed is saved first.
    cards.nth(1).locator(".p-description").fill("Aiko sprints, her scarf snapping.")
    steps = page.locator("nav.steps")
    steps.get_by_role("link", name=re.compile("Characters")).click()
    expect(page).to_have_url(re.compile(r"/characters/$"))
    steps.get_by_role("link", name=re.compile("Storyboard")).click()
    expect(page).to_have_url(re.compile(r"/storyboard/$"))
    expect(cards.nth(1).locator(".p-description")).to_have_value(
        "Aiko sprints, her scarf snapping."
    )

    page.get_by_role("button", name="Next: review →").click()

    # 4. Review — read-only, as it will render.
    expect(page).to_have_url(re.compile(r"/review/$"))
    panels = page.locator(".review-panel")
    expect(panels).to_have_count(4)
    expect(panels.nth(2)).to_contain_text("Kenji: Together.")
    expect(page.locator("#incomplete")).to_be_hidden()
    expect(page.get_by_role("button", name="Generate")).to_be_visible()
    shoot("wizard-4-review")

    # Back to the dashboard: the comic is listed; the story step still has it all.
    page.goto("/")
    expect(page.locator(".comic-list")).to_contain_text("Rooftops of Neo-Kyoto")
    expect(page.locator(".comic-list")).to_contain_text("4 panels")
    page.goto(f"{comic_url}/story/")
    expect(page.get_by_label("Title")).to_have_value("Rooftops of Neo-Kyoto")
    expect(page.get_by_label("Style")).to_have_value("shonen")


def test_the_wizard_fits_a_phone(browser, stack, shoot, dialogs):
    context = browser.new_context(base_url=stack.base_url, viewport={"width": 390, "height": 844})
    context.on("page", dialogs.watch)
    page = context.new_page()
    sign_up(page, "phone-writer")
    page.get_by_role("link", name="+ New comic").click()
    page.get_by_label("Title").fill("Small screen")
    page.get_by_label("Story").fill(STORY)
    page.get_by_role("button", name="Next: characters →").click()
    page.get_by_role("button", name="Next: storyboard →").click()
    page.get_by_role("button", name="Draft from story").click()
    expect(page.locator(".panel-card")).to_have_count(4)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways ({width}px)"
    page.screenshot(path=str(shoot.__globals__["ARTIFACTS"] / "wizard-phone.png"), full_page=False)
    context.close()
