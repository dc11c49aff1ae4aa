"""An automated accessibility check (axe-core, bundled by axe-playwright-python; no
network) on every screen a person uses, visited as a person with data: a comic with
characters, dialogue and delivered panels, a job waiting on a decision, the pages.
Admin is out of scope. A serious or critical finding fails the test and is printed
rule by rule with the elements it names."""

import re

import pytest
from playwright.sync_api import expect

from .reader.test_pages import approve_all
from .test_generate import make_comic
from .test_wizard import sign_up

axe_playwright = pytest.importorskip("axe_playwright_python.sync_playwright")

IMPACTS = ("serious", "critical")  # moderate and minor are reported, not failed on
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
RULES = {"runOnly": {"type": "tag", "values": TAGS}}


def violations(page, screen: str) -> list[str]:
    """axe's violations on the page as it is now, one readable line per rule; those below
    IMPACTS are printed (shown with -s, or under a failure) but not returned."""
    results = axe_playwright.Axe().run(page, options={**RULES, "resultTypes": ["violations"]})
    found = []
    for rule in results.response["violations"]:
        targets = "; ".join(" ".join(node["target"]) for node in rule["nodes"][:5])
        count = len(rule["nodes"])
        line = f"[{screen}] {rule['impact']} {rule['id']}: {rule['help']} ({count}× — {targets})"
        if rule["impact"] in IMPACTS:
            found.append(line)
        else:
            print("below the bar:", line)
    return found


def test_every_screen_has_no_serious_or_critical_violations(page, stack):
    found: list[str] = []

    def check(screen: str) -> None:
        found.extend(violations(page, screen))

    page.goto("/accounts/login/")
    check("login")
    page.goto("/accounts/signup/")
    check("signup")

    sign_up(page, "a11y")
    stack.manage("grant_credits", "a11y", "6", "--reason", "e2e")
    check("dashboard, no comics")
    board = make_comic(page, "Rooftops")

    page.goto("/comics/new/")
    expect(page.get_by_label("Story")).to_be_visible()
    check("story, new")
    page.goto(f"/comics/{board}/story/")
    expect(page.locator("#next")).to_be_enabled()
    check("story")
    page.goto(f"/comics/{board}/characters/")
    expect(page.locator(".character-row")).to_have_count(2)
    check("characters")
    page.goto(f"/comics/{board}/storyboard/")
    expect(page.locator(".panel-card")).to_have_count(3)
    expect(page.locator(".line-row")).to_have_count(1)
    # The icon-only buttons and the dialogue fields are named by panel and line.
    expect(page.get_by_role("button", name="Move panel 2 up")).to_be_enabled()
    expect(page.get_by_role("button", name="Move panel 2 down")).to_be_enabled()
    expect(page.get_by_role("button", name="Remove panel 2, line 1")).to_be_visible()
    expect(page.get_by_label("Speaker, panel 2, line 1")).to_have_value("Aiko")
    said = page.get_by_label("What they say, panel 2, line 1")
    expect(said).to_have_value("They're right behind us!")
    check("storyboard")
    page.goto(f"/comics/{board}/review/")
    expect(page.locator(".review-panel")).to_have_count(3)
    expect(page.locator("#quote")).not_to_be_empty()
    check("review")

    page.get_by_role("button", name="Generate").click()
    expect(page).to_have_url(re.compile(rf"/comics/{board}/jobs/\d+/$"))
    approve = page.locator(".job-panel.current").get_by_role("button", name="Approve")
    expect(approve).to_be_visible(timeout=20000)
    check("job, deciding")
    approve_all(page, 3)
    check("job, finished")

    page.goto(f"/comics/{board}/read/")
    expect(page.locator("#page-image")).to_be_visible(timeout=20000)
    check("reader, pages")
    page.locator("#format").select_option("webtoon")
    expect(page.locator("#webtoon-image")).to_be_visible(timeout=20000)
    check("reader, webtoon")
    expect(page.locator("#share")).to_have_attribute("data-ready", "1")
    page.get_by_role("button", name="Share").click()
    expect(page.locator("#share")).to_have_attribute("data-state", "published")
    check("reader, shared")
    page.goto(page.locator("#share-link").input_value())  # a webtoon: its strip
    expect(page.locator("#published")).to_have_attribute("data-ready", "1")
    strip = page.locator("#webtoon-image")
    expect(strip).to_be_visible()
    expect(strip).to_have_attribute("src", re.compile(r"/read/[\w-]+/pages/1/"))
    expect(page.locator("#page-image")).to_be_hidden()
    check("reading link, webtoon")

    page.goto(f"/comics/{board}/translations/")
    expect(page.locator("#none-yet")).to_be_visible()
    check("translations, none yet")
    page.get_by_label("Add a language").select_option("fr")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_label("French: panel 2, line 1 (Aiko)")).to_be_visible()
    check("translations, editing")

    page.goto(f"/comics/{board}/review/")
    expect(page.locator("#quote")).not_to_be_empty()
    check("review, all kept")
    page.goto("/")
    expect(page.locator(".comic-list li")).to_have_count(1)
    check("dashboard")
    page.goto("/credits/")
    check("credits")

    page.goto("/series/new/")
    check("series, new")
    page.get_by_label("Title").fill("Rooftops")
    page.get_by_role("button", name="Start the series").click()
    expect(page.locator("#chapter-form")).to_be_visible()
    check("series, empty")
    page.get_by_label("Story").fill('Aiko waits. "Late again," Aiko said.')
    page.get_by_role("button", name="Start chapter 1").click()
    expect(page.locator(".character-row")).to_have_count(1)
    check("characters, a chapter")
    page.go_back()
    page.reload()
    expect(page.locator("#chapters li")).to_have_count(1)
    check("series, a chapter")

    assert not found, "accessibility violations:\n" + "\n".join(found)
