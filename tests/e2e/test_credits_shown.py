"""Credits as a person sees them are the account's own: on the job page after touch-ups
and a reload (never a figure replayed from the job's log), and on Review while panel one
is prepared (held, said so, and given back when the person leaves)."""

import re

from playwright.sync_api import expect

from .conftest import wait_until
from .test_generate import make_comic
from .test_wizard import sign_up
from .touchups.test_touchups import drag, generated


def me(page) -> dict:
    return page.request.get("/api/me/").json()["credits"]


def shown(page) -> dict:
    """Every credit figure the job page shows: the header's and its card's."""
    held_note = page.locator("#nav-balance .held-note")
    return {
        "header": int(page.locator("#nav-credits").inner_text()),
        "header_held": int(held_note.locator("[data-credits=held]").inner_text())
        if held_note.is_visible()
        else 0,
        "card": int(page.locator("#job-credits").inner_text()),
        "card_held": int(page.locator("#job-held").inner_text()),
    }


def touch_up(page, panel, what: str) -> None:
    panel.get_by_role("button", name="Touch up panel 1…").click()
    dialog = page.get_by_role("dialog", name="Redraw part of panel 1")
    picture = dialog.locator("#touchup-picture")
    expect(picture).to_have_js_property("complete", True)
    drag(page, picture, (0.2, 0.3), (0.5, 0.7))
    dialog.get_by_label("What to draw there").fill(what)
    dialog.get_by_role("button", name="Redraw this part — 1 credit").click()
    expect(dialog.get_by_role("status")).to_contain_text("Redrawn", timeout=30000)
    dialog.get_by_role("button", name="Close").click()


def test_after_touch_ups_and_a_reload_every_figure_is_the_accounts(page, stack, shoot):
    board, job = generated(page, stack, "countess", "Counted")
    page.goto(f"/comics/{board}/jobs/{job}/")
    panel = page.locator('.job-panel[data-index="1"]')
    expect(panel).to_have_attribute("data-state", "delivered", timeout=30000)
    # Approved, the job is done: each touch-up now runs as a job of its own, and this
    # job's log keeps the balance as it was when the job ended.
    panel.get_by_role("button", name="Approve").click()
    expect(page.locator("#done")).to_be_visible(timeout=20000)
    touch_up(page, panel, "a red baseball cap")
    touch_up(page, panel, "a blue umbrella")
    assert me(page) == {"available": 2, "held": 0}  # 5 − the panel − two touch-ups
    # Right after the touch-ups, before any reload: every figure is the account's.
    expect(page.locator("#job-credits")).to_have_text("2")
    expect(page.locator("#nav-credits")).to_have_text("2")
    expect(page.locator("#job-held")).to_have_text("0")  # the last hold counted, not held
    expect(page.locator("#nav-balance .held-note")).to_be_hidden()

    page.reload()
    # The page replays the job's whole log (its `credits` events among it) once connected.
    last = page.request.get(f"/api/jobs/{job}/").json()["last_seq"]
    wait_until(
        lambda: page.evaluate("window.mangagenJob && window.mangagenJob.lastSeq") >= last,
        what="the job's log replayed",
    )
    figures = me(page)
    assert shown(page) == {
        "header": figures["available"],
        "header_held": figures["held"],
        "card": figures["available"],
        "card_held": figures["held"],
    }
    shoot("job-credits-after-touch-ups")


def test_review_says_the_credit_is_held_and_the_header_comes_back_on_leaving(page, stack, shoot):
    sign_up(page, "lookahead")
    stack.manage("grant_credits", "lookahead", "3", "--reason", "e2e")
    board = make_comic(page, "Held, not spent")
    page.goto(f"/comics/{board}/review/")
    hint = page.locator("#speculation-hint")
    expect(hint).to_be_visible(timeout=15000)
    held = "1 credit held for panel one — given back if you leave"
    expect(page.locator("#speculation-held")).to_have_text(held)
    badge = page.locator("#nav-balance")
    expect(badge).to_have_attribute("title", held)
    # The header says the credit is held, not gone: 2 available · 1 held.
    expect(page.locator("#nav-credits")).to_have_text("2")
    expect(badge.locator(".held-note")).to_be_visible()
    expect(badge.locator(".held-note")).to_have_text(re.compile(r"1\s+held"))
    assert me(page) == {"available": 2, "held": 1}
    shoot("review-credit-held")

    page.get_by_role("link", name="← Edit storyboard").click()
    expect(page).to_have_url(re.compile(rf"/comics/{board}/storyboard/$"))
    # The next page is served with the credit given back.
    expect(page.locator("#nav-credits")).to_have_text("3")
    expect(page.locator("#nav-balance .held-note")).to_be_hidden()
    assert me(page) == {"available": 3, "held": 0}
