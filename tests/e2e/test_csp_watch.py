"""The browser suite's Content-Security-Policy watch (conftest's `csp_watch`) catches a
violation: a page whose policy refuses its inline script is reported, so a test of the
suite whose page broke under the app's policy would fail."""

from __future__ import annotations

from tests.e2e.conftest import WATCHED, wait_until


def test_a_refused_inline_script_is_caught(browser):
    context = browser.new_context()
    page = context.new_page()
    page.route(
        "http://policy.test/",
        lambda route: route.fulfill(
            status=200,
            headers={"Content-Security-Policy": "script-src 'self'"},
            content_type="text/html",
            body="<title>before</title><script>document.title = 'ran'</script>",
        ),
    )
    page.goto("http://policy.test/")
    found = wait_until(lambda: list(WATCHED[-1]), what="the refused script to be reported")
    assert page.title() == "before"
    context.close()
    WATCHED.clear()  # caught on purpose: this test's own page is not a failure
    assert any("script-src" in line for line in found), found
