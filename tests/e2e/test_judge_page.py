"""The job page shows what the judge said of each panel ("Checked against Aiko's
sheet"), and flags a panel shown scored low after its redraw. A stack of its own
(JUDGE=openai against the chat stand-in, tests/support/providers/openai_compatible.py):
the session's e2e stack renders unjudged."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import ARTIFACTS, wait_until
from tests.support.factories import png
from tests.support.providers.openai_compatible import ChatStandIn
from tests.support.stack import stack
from tests.support.visits import Person, setup_people


@pytest.fixture(scope="module")
def chat():
    with ChatStandIn() as standin:
        yield standin


@pytest.fixture(scope="module")
def judged_stack(chat):
    env = {**chat.environment(), "RENDER_COLD_START_SECONDS": "0", "RENDER_SECONDS": "0.2"}
    env["SPECULATION_LOOKAHEAD"] = "0"
    with stack("e2e-judge", log=ARTIFACTS / "judge-stack.log", **env) as running:
        yield running


def test_the_job_page_says_what_the_judge_checked_and_flags_a_low_panel(
    browser, judged_stack, chat
):
    [(username, board, session)] = setup_people(judged_stack, 1, "checked")
    person = Person(judged_stack, username, board, session)
    person.with_a_sheet(png((128, 128)))
    chat.scores = [0.3, 0.2]  # low, and the redraw lower still: the first is shown, flagged
    job = person.post(f"/api/storyboards/{board}/generate/").json()["job"]
    context = browser.new_context(base_url=judged_stack.base_url)
    context.add_cookies([{"name": "sessionid", "value": session, "url": judged_stack.base_url}])
    page = context.new_page()
    page.set_default_timeout(20000)
    try:
        page.goto(f"/comics/{board}/jobs/{job}/")
        check = page.locator('.job-panel[data-index="1"] .check')
        check.wait_for(state="visible")
        text = check.inner_text()
        assert "Checked against Aiko's sheet" in text
        assert "score 0.3" in text and "drawn again once, free" in text
        flag = check.locator(".check-flag")
        assert flag.is_visible()
        assert flag.inner_text() == "Scored low: look closely before approving"
        assert check.get_attribute("title") == "scored 0.3"  # the judge's reason

        chat.scores = [0.95]  # panel two passes at once: no flag
        page.get_by_role("button", name="Approve").click()
        second = page.locator('.job-panel[data-index="2"] .check')
        second.wait_for(state="visible")
        wait_until(lambda: "score 0.95" in second.inner_text(), what="panel two's check")
        assert "drawn again" not in second.inner_text()
        assert not second.locator(".check-flag").is_visible()
    finally:
        context.close()
