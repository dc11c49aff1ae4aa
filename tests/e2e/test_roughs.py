"""Rough pages on Review: the whole comic drafted and lettered, free, before Generate."""

import re

from playwright.sync_api import expect

from .conftest import wait_until
from .test_wizard import sign_up

PANELS = [
    {"description": "Neo-Kyoto at night.", "shot": "establishing"},
    {
        "description": "Aiko on the rooftop.",
        "shot": "medium",
        "characters": ["Aiko"],
        "dialogue": [{"speaker": "Aiko", "text": "They're right behind us!"}],
    },
    {
        "description": "Kenji takes her hand.",
        "shot": "medium",
        "characters": ["Aiko", "Kenji"],
        "dialogue": [{"speaker": "Kenji", "text": "Jump with me."}],
    },
    {"description": "They leap.", "shot": "wide", "characters": ["Aiko", "Kenji"]},
    {
        "description": "Aiko looks back.",
        "shot": "close-up",
        "characters": ["Aiko"],
        "dialogue": [{"speaker": "Aiko", "text": "We made it."}],
    },
]

# Records each count of roughs shown Review's rough pages said, from the first paint.
WATCH_ROUGHS = """
window.roughsShown = [];
document.addEventListener("DOMContentLoaded", () => {
  const pages = document.getElementById("rough-pages");
  if (!pages) return;
  new MutationObserver(() => {
    const ready = pages.dataset.ready;
    if (!pages.hidden && ready !== undefined) window.roughsShown.push(Number(ready));
  }).observe(pages, { attributes: true, attributeFilter: ["hidden", "data-ready"] });
});
"""


def api_headers(page) -> dict:
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    return {"X-CSRFToken": csrf, "Content-Type": "application/json"}


def make_comic(page, title: str) -> int:
    headers = api_headers(page)
    board = page.request.post("/api/storyboards/", data={"title": title}, headers=headers).json()
    page.request.patch(
        f"/api/storyboards/{board['id']}/",
        data={
            "characters": [
                {"name": "Aiko", "description": "long black hair, red scarf"},
                {"name": "Kenji", "description": "spiky hair, glasses"},
            ],
            "panels": PANELS,
        },
        headers=headers,
    )
    return board["id"]


def counts(stack, username: str) -> str:
    """`<jobs> <roughs asked for>` of the person."""
    return stack.shell(
        "from mangagen.jobs.models import Job; from mangagen.roughs.models import Rough;"
        f"print(Job.objects.filter(owner__username='{username}').count(),"
        f" Rough.objects.filter(storyboard__owner__username='{username}').count())"
    ).strip()


def page_sources(page) -> list[str]:
    return page.locator("#rough-pages-row figure img").evaluate_all(
        "images => images.map(i => i.getAttribute('src'))"
    )


def all_loaded(page) -> bool:
    return page.locator("#rough-pages-row figure img").evaluate_all(
        "images => images.length > 0 && images.every("
        "i => i.complete && i.naturalWidth > 0 && i.getAttribute('src') === i.dataset.want)"
    )


def test_review_shows_the_rough_pages_as_they_arrive_then_generate(page, stack, shoot):
    sign_up(page, "namer")
    stack.manage("grant_credits", "namer", "8", "--reason", "e2e")
    board = make_comic(page, "The leap")
    stack.shell("from mangagen.renderers.gpu_pool import GpuPool; GpuPool().reset()")  # a cold GPU
    page.add_init_script(WATCH_ROUGHS)
    page.goto(f"/comics/{board}/review/")
    pages = page.locator("#rough-pages")
    expect(pages).to_be_visible(timeout=15000)
    # The pages are there, lettered, before every rough is: placeholders first.
    expect(page.locator("#rough-pages-row figure")).not_to_have_count(0)
    wait_until(lambda: all_loaded(page), what="the first rough pages to be painted")
    shoot("review-rough-pages-arriving")
    wait_until(
        lambda: pages.get_attribute("data-ready") == pages.get_attribute("data-total") == "5",
        what="every rough to be shown",
        timeout=40,
    )
    wait_until(lambda: all_loaded(page), what="the rough pages to be painted")
    seen = page.evaluate("window.roughsShown")
    assert seen[0] < 5 and seen[-1] == 5, seen  # shown as they arrived, not all at the end
    assert page.locator("#rough-pages-row").get_attribute("dir") == "rtl"  # manga: right to left
    expect(page.locator("#rough-status")).to_contain_text("Every rough is drawn")
    shoot("review-rough-pages")
    jobs_before, roughs_before = counts(stack, "namer").split()

    # A rough drawn again: pick panel 2 on its page, draw it again.
    before = page_sources(page)
    page.locator('.rough-cell[data-index="2"]').click()
    editor = page.locator("#rough-panel")
    expect(editor).to_be_visible()
    expect(editor).to_have_attribute("data-state", "ready")
    page.get_by_role("button", name="Draw this rough again").click()
    wait_until(lambda: page_sources(page) != before, what="panel 2's page to show its new rough")
    expect(editor).to_have_attribute("data-state", "ready")
    shoot("review-rough-redrawn")
    assert counts(stack, "namer") == f"{jobs_before} {int(roughs_before) + 1}"

    # A page break moved: the pages are composed again at once, and nothing is drawn.
    layout = [f.get_attribute("data-panels") for f in page.locator("#rough-pages-row figure").all()]
    page.locator('#rough-pages-row figure[data-number="1"] .rough-push').click()
    wait_until(
        lambda: (
            [f.get_attribute("data-panels") for f in page.locator("#rough-pages-row figure").all()]
            != layout
        ),
        what="the pages to be composed again",
    )
    wait_until(lambda: all_loaded(page), what="the recomposed pages to be painted")
    shoot("review-rough-break-moved")
    assert counts(stack, "namer") == f"{jobs_before} {int(roughs_before) + 1}"  # no render

    # The quote is what it was: roughs are never charged.
    expect(page.locator("#quote")).to_contain_text("5 panels to draw")
    page.get_by_role("button", name="Generate").click()
    expect(page).to_have_url(re.compile(rf"/comics/{board}/jobs/\d+/$"), timeout=20000)
    expect(page.locator(".job-panel.current img")).to_be_visible(timeout=30000)
    shoot("job-from-rough")
    # Panel one was drawn ahead while Review was read: from its rough if the rough came
    # within ROUGH_WAIT_SECONDS on the cold GPU, else without. Panel two is drawn now,
    # after Generate, its rough long ready: it is drawn from it, at its cell's shape.
    job = re.search(r"/jobs/(\d+)/", page.url).group(1)
    approved = page.request.post(f"/api/jobs/{job}/panels/1/approve/", headers=api_headers(page))
    assert approved.ok, approved.text()

    def panel_two() -> dict:
        return page.request.get(f"/api/jobs/{job}/").json()["panels"][1]

    wait_until(lambda: panel_two()["state"] == "delivered", what="panel two", timeout=40)
    assert panel_two()["from_rough"] is True and panel_two()["aspect"]


def test_the_storyboard_draws_its_roughs_on_demand(page, stack, shoot):
    sign_up(page, "sketcher")
    stack.manage("grant_credits", "sketcher", "1", "--reason", "e2e")
    board = make_comic(page, "On demand")
    page.goto(f"/comics/{board}/storyboard/")
    roughs = page.locator(".panel-card .p-rough img")
    expect(page.locator(".panel-card")).to_have_count(5)
    expect(page.locator(".panel-card .p-rough:not([hidden])")).to_have_count(0)
    page.get_by_role("button", name="Draw the roughs").click()
    wait_until(
        lambda: (
            roughs.evaluate_all(
                "images => images.filter(i => !i.hidden && i.complete && i.naturalWidth > 0).length"
            )
            == 5
        ),
        what="every card to show its rough",
        timeout=40,
    )
    expect(page.locator(".panel-card").nth(1).locator(".p-rough figcaption")).to_have_text(
        "Its rough is drawn."
    )
    shoot("storyboard-roughs")


def test_no_credit_no_rough_pages(page, stack):
    sign_up(page, "nocredit")
    board = make_comic(page, "Broke")
    page.goto(f"/comics/{board}/review/")
    expect(page.locator("#speculation-hint[data-answer]")).to_have_count(1, timeout=15000)
    expect(page.locator("#rough-pages")).to_be_hidden()
    assert counts(stack, "nocredit") == "0 0"


def test_an_answer_that_comes_back_late_never_hides_the_roughs(page, stack):
    """Several roughs landing together each ask for the pages again; answers can come
    back out of order. The first (no rough drawn yet) is held back here until the pages
    show every rough, then let through: the pages must stay as they are."""
    sign_up(page, "latecomer")
    stack.manage("grant_credits", "latecomer", "2", "--reason", "e2e")
    board = make_comic(page, "Out of order")
    stack.shell("from mangagen.renderers.gpu_pool import GpuPool; GpuPool().reset()")  # a cold GPU
    held = []

    def hold_the_first(route):
        if held:
            route.continue_()
            return
        held.append((route, route.fetch()))  # answered now, handed to the page later

    page.route(lambda url: "/pages/?rough=1" in url, hold_the_first)
    page.goto(f"/comics/{board}/review/")
    pages = page.locator("#rough-pages")
    # (a call into the browser lets Playwright run the route handler meanwhile)
    wait_until(lambda: page.evaluate("true") and held, what="the first pages answer to be held")
    wait_until(
        lambda: pages.get_attribute("data-roughs") == "1,2,3,4,5" and all_loaded(page),
        what="a later answer to show every rough",
        timeout=40,
    )
    shown = page_sources(page)
    asked = pages.get_attribute("data-pages-asked")
    route, stale = held[0]
    assert stale.json()["roughs"] != [1, 2, 3, 4, 5]  # older than what is shown (a cold GPU)
    route.fulfill(response=stale)
    wait_until(
        lambda: pages.get_attribute("data-pages-answered") == asked,
        what="the late answer to be read",
    )
    assert pages.get_attribute("data-roughs") == "1,2,3,4,5"
    assert page_sources(page) == shown
