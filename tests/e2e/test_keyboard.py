"""The studio by keyboard alone: a person signs up and walks story → characters →
storyboard → review with Tab, Enter, Space and typing; the skip link, the focus after
each move, a sheet uploaded without a mouse, an error tied to its field, the focus
after Approve, and the reader's page turns in the comic's reading direction."""

import re

from playwright.sync_api import expect

from .test_generate import make_comic
from .test_outfits_places import picture
from .test_wizard import STORY, sign_up


def tab_to(page, target, *, most: int = 60) -> None:
    """Presses Tab until `target` has the focus; fails if it is not reached in `most` presses
    (it cannot be reached by keyboard)."""
    for _ in range(most):
        if target.evaluate("el => el === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{target} is not reached by Tab")


def test_a_person_signs_up_and_walks_the_wizard_by_keyboard(page, tmp_path):
    # A listener from the start keeps Chromium's file choosers intercepted: on its own,
    # expect_file_chooser turns interception on without waiting for it, and a Space
    # pressed meanwhile (a loaded machine) opens a chooser Playwright never reports.
    page.on("filechooser", lambda _chooser: None)
    page.goto("/accounts/signup/")
    expect(page.get_by_label("Username")).to_be_focused()  # the form's first field has the focus
    page.keyboard.type("keys")
    tab_to(page, page.get_by_label("Password", exact=True))
    page.keyboard.type("paper-lantern-42")
    tab_to(page, page.get_by_label("Password confirmation"))
    page.keyboard.type("paper-lantern-42")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Your comics")).to_be_visible()

    tab_to(page, page.get_by_role("link", name="+ New comic"))
    page.keyboard.press("Enter")

    # The skip link is the first stop on a page, shown when focused, and leads into <main>.
    title = page.get_by_label("Title")
    expect(title).to_be_visible()
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.locator("main#content")).to_be_focused()
    page.keyboard.press("Tab")
    expect(title).to_be_focused()  # the first field, past the header

    # 1. Story: Next without a title ties the error to the field and puts the focus there.
    tab_to(page, page.get_by_label("Story"))
    page.keyboard.type(STORY)
    tab_to(page, page.get_by_role("button", name="Next: characters →"))
    page.keyboard.press("Enter")
    error = page.locator('[data-error-for="title"]')
    expect(error).to_have_text("Give your comic a title.")
    expect(title).to_be_focused()
    expect(title).to_have_attribute("aria-invalid", "true")
    error_id = error.get_attribute("id")
    assert error_id, "the error has an id the field can point at"
    expect(title).to_have_attribute("aria-describedby", error_id)
    page.keyboard.type("By keyboard")
    page.keyboard.press("Enter")  # submits the story form

    # 2. Characters: a name offered from the story, a sheet uploaded without a mouse.
    expect(page).to_have_url(re.compile(r"/comics/\d+/characters/$"))
    comic = page.url.rsplit("/characters/", 1)[0]
    expect(page.locator("#next")).to_be_enabled()
    offered = page.get_by_role("button", name="+ Aiko")
    expect(offered).to_be_visible()
    tab_to(page, offered)
    page.keyboard.press("Enter")
    aiko = page.locator(".character-row").first
    expect(aiko.locator(".c-name")).to_have_value("Aiko")
    upload = aiko.get_by_label("Upload your own")
    tab_to(page, upload)
    with page.expect_file_chooser() as chooser:
        page.keyboard.press("Space")
    chooser.value.set_files(picture(tmp_path))
    expect(aiko.locator(".c-sheet")).to_have_attribute("data-state", "ready", timeout=10000)
    expect(aiko.locator(".c-sheet-state")).to_contain_text("Your picture is the sheet")
    tab_to(page, page.get_by_role("button", name="Next: storyboard →"))
    page.keyboard.press("Enter")

    # 3. Storyboard: drafted from the story by keyboard.
    expect(page).to_have_url(re.compile(r"/storyboard/$"))
    draft = page.get_by_role("button", name="Draft from story")
    expect(draft).to_be_enabled()
    tab_to(page, draft)
    page.keyboard.press("Enter")
    expect(page.locator(".panel-card")).to_have_count(4)
    expect(page.locator("#notice")).to_contain_text("Drafted 4 panels")
    # Past four panels, each with its lines' styles and its sound effects to set.
    tab_to(page, page.get_by_role("button", name="Next: review →"), most=100)
    page.keyboard.press("Enter")

    # 4. Review: the skip link leads past the steps; Generate is reached by Tab.
    expect(page).to_have_url(re.compile(r"/review/$"))
    expect(page.locator(".review-panel")).to_have_count(4)
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    expect(page.get_by_role("button", name="Generate")).to_be_enabled()
    tab_to(page, page.get_by_role("button", name="Generate"))

    # Once fixed (and saved), the field is no longer marked invalid.
    page.goto(f"{comic}/story/")
    title = page.get_by_label("Title")
    expect(title).to_have_value("By keyboard")
    tab_to(page, title)
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    tab_to(page, page.get_by_role("button", name="Next: characters →"))
    page.keyboard.press("Enter")
    expect(title).to_have_attribute("aria-invalid", "true")
    page.keyboard.type("By keyboard, again")
    expect(page.locator("#save-state")).to_have_text("Saved", timeout=10000)
    expect(title).not_to_have_attribute("aria-invalid", "true")
    expect(title).not_to_have_attribute("aria-describedby", re.compile("."))


def test_approve_keeps_the_focus_and_the_reader_turns_in_reading_order(page, stack):
    sign_up(page, "keys-reader")
    stack.manage("grant_credits", "keys-reader", "6", "--reason", "e2e")
    board = make_comic(page, "Turns")
    page.goto(f"/comics/{board}/review/")
    generate = page.get_by_role("button", name="Generate")
    expect(generate).to_be_enabled()
    tab_to(page, generate)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/comics/{board}/jobs/\d+/$"))

    # Approve by Enter: the focus moves on to the next panel's Approve, never to the body.
    approve = page.locator(".job-panel.current").get_by_role("button", name="Approve")
    expect(approve).to_be_visible(timeout=20000)
    tab_to(page, approve)
    for index in (2, 3):
        page.keyboard.press("Enter")
        following = page.locator(f'.job-panel.current[data-index="{index}"] .approve')
        expect(following).to_be_focused(timeout=20000)
    page.keyboard.press("Enter")
    read = page.get_by_role("link", name="Read it")
    expect(read).to_be_focused(timeout=20000)
    page.keyboard.press("Enter")

    # Right to left: the left button is "Next page", and ArrowLeft shows the next page.
    reader = page.locator("#reader")
    expect(reader).to_have_attribute("data-ready", "1")
    expect(reader).to_have_attribute("data-direction", "rtl")
    push = page.get_by_role("button", name="Push the last panel to the next page")
    tab_to(page, push)
    page.keyboard.press("Enter")
    viewer = page.locator("#page-viewer")
    expect(page.locator("#page-label")).to_contain_text("Page 1 of 2")
    expect(page.locator("#turn-left")).to_have_accessible_name("Next page")
    expect(page.locator("#turn-right")).to_have_accessible_name("Previous page")
    page.keyboard.press("ArrowLeft")
    expect(viewer).to_have_attribute("data-page", "2")
    page.keyboard.press("ArrowRight")
    expect(viewer).to_have_attribute("data-page", "1")
    tab_to(page, page.get_by_role("button", name="Next page", exact=True))
    page.keyboard.press("Enter")
    expect(viewer).to_have_attribute("data-page", "2")
    # The last page: Next page is disabled, and the focus it had is on Previous page.
    expect(page.locator("#turn-left")).to_be_disabled()
    expect(page.get_by_role("button", name="Previous page", exact=True)).to_be_focused()

    # Left to right: the other way round.
    page.locator("#direction").select_option("ltr")
    expect(reader).to_have_attribute("data-direction", "ltr")
    expect(page.locator("#turn-right")).to_have_accessible_name("Next page")
    expect(page.locator("#turn-left")).to_have_accessible_name("Previous page")
    # Off the select (its own arrow keys), onto a button: the arrows turn pages again.
    tab_to(page, page.get_by_role("button", name="Previous page", exact=True))
    page.keyboard.press("ArrowLeft")
    expect(viewer).to_have_attribute("data-page", "1")
    page.keyboard.press("ArrowRight")
    expect(viewer).to_have_attribute("data-page", "2")
