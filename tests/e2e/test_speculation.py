"""Speculation as a person meets it: the hint, panel one at once, nothing for the broke."""

import json
import re
from urllib.parse import urlsplit

from playwright.sync_api import expect

from .conftest import wait_until
from .test_generate import make_comic
from .test_wizard import sign_up

# Records whether the hint was ever shown, even for a moment.
WATCH_HINT = """
window.hintEverShown = false;
document.addEventListener("DOMContentLoaded", () => {
  const hint = document.getElementById("speculation-hint");
  if (!hint) return;
  new MutationObserver(() => { if (!hint.hidden) window.hintEverShown = true; })
    .observe(hint, { attributes: true, attributeFilter: ["hidden"] });
});
"""


def jobs_of(stack, username) -> str:
    return stack.shell(
        "from mangagen.jobs.models import Job;"
        f"jobs = Job.objects.filter(owner__username='{username}');"
        "print(list(jobs.values_list('state', 'confirmed')))"
    ).strip()


def panel_one_of(stack, username) -> str:
    """`state attempts` of panel one of the person's newest job ('' when none)."""
    return stack.shell(
        "from mangagen.jobs.models import JobPanel;"
        f"p = JobPanel.objects.filter(job__owner__username='{username}', index=1)"
        ".order_by('-job_id').first();"
        "print(f'{p.state} {p.attempts}' if p else '')"
    ).strip()


def answered(page) -> str:
    """Waits for Review's speculate answer: "hint" or the decline reason."""
    expect(page.locator("#speculation-hint[data-answer]")).to_have_count(1, timeout=15000)
    return page.locator("#speculation-hint").get_attribute("data-answer")


def test_the_hint_then_panel_one_without_the_cold_start(page, stack, shoot):
    sign_up(page, "speculator")
    stack.manage("grant_credits", "speculator", "5", "--reason", "e2e")
    board = make_comic(page, "Fast first panel")
    stack.shell("from mangagen.renderers.gpu_pool import GpuPool; GpuPool().reset()")  # cold GPU
    page.goto(f"/comics/{board}/review/")
    generate = page.get_by_role("button", name="Generate")
    expect(generate).to_be_enabled()
    expect(page.locator("#quote")).not_to_be_empty()
    before = generate.bounding_box()
    hint = page.locator("#speculation-hint")
    expect(hint).to_be_visible(timeout=5000)
    expect(hint).to_have_text(re.compile("Preparing your first panel"))
    # The hint appears below Generate: a click landing as it appears is never lost.
    assert generate.bounding_box() == before
    shoot("review-hint")
    # The person reads Review while the GPU warms and panel one is drawn, unseen.
    wait_until(
        lambda: panel_one_of(stack, "speculator") == "ready 1",
        what="the speculative panel one to be rendered",
        timeout=30,
    )
    # …and the hint says so, rather than "Preparing" long after it was ready.
    expect(hint).to_have_text(re.compile("Your first panel is ready"), timeout=10000)
    # Review turns into panel one in place, before the job page loads: hold that
    # page load back (cancelled, so Review stays) to see Review's own paint of it.
    job_url = re.compile(r"/comics/\d+/jobs/\d+/$")
    page.route(job_url, lambda route: route.abort("aborted"))
    sent = []
    page.on("request", lambda request: sent.append(urlsplit(request.url).path))
    with page.expect_request(job_url) as opened:  # sent once the panel is painted
        page.get_by_role("button", name="Generate").click()
    # Between the click and the paint the page asks the server for Generate and the
    # image alone (a balance read or a recheck beside them delayed the image). (A
    # recheck may have left just before the click: the list starts at Generate.)
    clicked = sent.index(f"/api/storyboards/{board}/generate/")
    after_the_click = sent[clicked : sent.index(urlsplit(opened.value.url).path)]
    assert len(after_the_click) == 2
    assert after_the_click[1].startswith("/media/renders/")
    expect(page.locator("#review-panels .job-panel.current img")).to_be_visible()
    page.wait_for_function(
        "() => document.querySelector('#review-panels img')?.naturalWidth > 0"
    )  # drawn, not a broken image
    page.unroute(job_url)
    page.goto(opened.value.url)
    expect(page.locator("#job .job-panel.current img")).to_be_visible()
    shoot("job-attached")
    # Generate attached to that job and showed the render made before the click.
    assert jobs_of(stack, "speculator") == "[('awaiting_decision', True)]"
    assert panel_one_of(stack, "speculator") == "delivered 1"


def test_zero_credits_never_see_a_hint(page, stack):
    sign_up(page, "window-shopper")
    board = make_comic(page, "No credits")
    page.add_init_script(WATCH_HINT)
    page.goto(f"/comics/{board}/review/")
    assert answered(page) == "insufficient_credits"
    expect(page.locator("#speculation-hint")).to_be_hidden()
    assert page.evaluate("window.hintEverShown") is False, "the hint flashed up"
    assert jobs_of(stack, "window-shopper") == "[]"
    assert page.request.get("/api/credits/").json()["held"] == 0
    page.get_by_role("button", name="Generate").click()
    expect(page.locator("#purchase-prompt")).to_be_visible()
    expect(page.locator("#purchase-prompt a")).to_have_attribute("href", "/credits/")


def test_back_before_the_debounce_starts_nothing(page, stack):
    sign_up(page, "quick-back")
    stack.manage("grant_credits", "quick-back", "3", "--reason", "e2e")
    board = make_comic(page, "Quick back")
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.clock.install()  # the debounce's timer runs only when the test lets time pass
    page.goto(f"/comics/{board}/review/")
    expect(page.get_by_role("button", name="Generate")).to_be_enabled()  # Review is ready
    page.get_by_role("link", name="← Edit storyboard").click()
    expect(page).to_have_url(re.compile("/storyboard/$"))
    assert not [url for url in asked if "/speculate/" in url]
    assert jobs_of(stack, "quick-back") == "[]"


def test_back_after_the_hint_cancels_and_releases(page, stack, shoot):
    sign_up(page, "late-back")
    stack.manage("grant_credits", "late-back", "3", "--reason", "e2e")
    board = make_comic(page, "Late back")
    page.goto(f"/comics/{board}/review/")
    expect(page.locator("#speculation-hint")).to_be_visible(timeout=5000)
    assert page.request.get("/api/credits/").json()["held"] == 1
    page.get_by_role("link", name="← Edit storyboard").click()
    expect(page).to_have_url(re.compile("/storyboard/$"))
    wait_until(
        lambda: jobs_of(stack, "late-back") == "[('cancelled', False)]",
        what="the speculative job to be cancelled by the beacon",
    )
    page.goto("/")
    expect(page.locator("#credits-available")).to_have_text("3")
    expect(page.locator("#nav-credits")).to_have_text("3")


def test_two_tabs_with_one_credit_show_one_hint(browser, stack, page):
    sign_up(page, "two-tabs")
    stack.manage("grant_credits", "two-tabs", "1", "--reason", "e2e")
    first, second = make_comic(page, "Tab one"), make_comic(page, "Tab two")
    other = page.context.new_page()
    page.goto(f"/comics/{first}/review/")
    other.goto(f"/comics/{second}/review/")
    answers = [answered(p) for p in (page, other)]
    # A newer speculation may replace the older one; the older tab's re-check then hides
    # its hint. Either way, one credit shows one hint once both have settled.
    wait_until(
        lambda: (
            [p.locator("#speculation-hint").is_visible() for p in (page, other)].count(True) == 1
        ),
        what=f"exactly one hint (answers {answers})",
    )
    assert page.request.get("/api/credits/").json()["held"] == 1


def test_the_admin_speculation_page_shows_these_sessions(page, stack, shoot):
    stack.shell(
        "from django.contrib.auth import get_user_model;"
        "get_user_model().objects.create_superuser('metrics-op', 'm@example.com', 'op-pass-1234')"
    )
    page.goto("/admin/login/")
    page.get_by_label("Username").fill("metrics-op")
    page.get_by_label("Password").fill("op-pass-1234")
    page.get_by_role("button", name="Log in").click()
    page.goto("/admin/speculation/speculation/")
    metrics = page.locator("#speculation-metrics")
    expect(metrics).to_contain_text("What speculation bought and cost")
    hit_rate = metrics.locator("td.hit-rate").first.inner_text()
    assert re.fullmatch(r"\d+%", hit_rate), hit_rate  # real figures from the sessions above
    expect(page.locator("#result_list")).to_contain_text("Hit")
    shoot("admin-speculation")


def test_leaving_while_the_ask_is_in_flight_starts_nothing(page, stack):
    """The ask names a token made by the page; the leaving beacon names it too, so an ask
    that reaches the server after the person left starts nothing and holds nothing."""
    sign_up(page, "in-flight")
    stack.manage("grant_credits", "in-flight", "3", "--reason", "e2e")
    board = make_comic(page, "In flight")
    page.route("**/api/storyboards/*/speculate/", lambda route: None)  # held: still in flight
    with page.expect_request("**/api/storyboards/*/speculate/") as asked:
        page.goto(f"/comics/{board}/review/")
    token = json.loads(asked.value.post_data)["token"]
    page.get_by_role("link", name="← Edit storyboard").click()
    expect(page).to_have_url(re.compile("/storyboard/$"))
    wait_until(
        lambda: (
            stack.shell(
                "from speculation.models import Speculation;"
                f"print(Speculation.objects.filter(token='{token}', reason='left').count())"
            ).strip()
            == "1"
        ),
        what="the leaving beacon to name the ask's token",
    )
    page.unroute("**/api/storyboards/*/speculate/")
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    late = page.request.post(
        f"/api/storyboards/{board}/speculate/",
        data={"token": token},
        headers={"X-CSRFToken": csrf, "Content-Type": "application/json"},
    )
    assert late.json() == {"job": None, "hint": False, "reason": "left"}
    assert jobs_of(stack, "in-flight") == "[]"
    assert page.request.get("/api/credits/").json()["held"] == 0
