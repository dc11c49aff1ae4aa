"""Scenario 1, end to end as one person: sign up to a downloaded PDF."""

import re

from playwright.sync_api import expect

from .conftest import wait_until
from .test_speculation import panel_one_of
from .test_wizard import STORY, sign_up


def test_from_sign_up_to_a_downloaded_comic(page, stack, shoot, tmp_path):
    sign_up(page, "newcomer")
    page.get_by_role("link", name=re.compile("credits")).click()
    page.get_by_role("button", name=re.compile("Add 10 demo credits")).click()
    expect(page.locator("#credits-available")).to_have_text("10")

    page.goto("/")
    page.get_by_role("link", name="+ New comic").click()
    page.get_by_label("Title").fill("The Jump")
    page.get_by_label("Story").fill(STORY)
    page.get_by_role("button", name="Next: characters →").click()
    page.get_by_role("button", name="+ Aiko").click()
    page.locator(".character-row").first.locator(".c-description").fill("long black hair")
    page.get_by_role("button", name="+ Add character").click()
    page.locator(".character-row").last.locator(".c-name").fill("Kenji")
    page.get_by_role("button", name="Next: storyboard →").click()
    page.get_by_role("button", name="Draft from story").click()
    cards = page.locator(".panel-card")
    expect(cards).to_have_count(4)
    cards.nth(0).locator(".p-description").fill("Neo-Kyoto under rain, from above.")
    expect(page.locator("#save-state")).to_have_text("Saved", timeout=10000)

    stack.shell("from mangagen.renderers.gpu_pool import GpuPool; GpuPool().reset()")  # cold GPU
    page.get_by_role("button", name="Next: review →").click()
    expect(page.locator("#speculation-hint")).to_be_visible(timeout=5000)
    wait_until(  # reading Review while panel one is drawn, unseen
        lambda: panel_one_of(stack, "newcomer") == "ready 1",
        what="the speculative panel one to be rendered",
        timeout=30,
    )
    page.get_by_role("button", name="Generate").click()
    expect(page.locator(".job-panel.current img")).to_be_visible()
    assert panel_one_of(stack, "newcomer") == "delivered 1"  # the render made before the click

    current = page.locator(".job-panel.current")
    current.get_by_role("button", name="Redo (1 credit)").click()
    redone = page.locator('.job-panel[data-index="1"]')
    expect(redone).to_have_attribute("data-attempts", "2")
    expect(redone).to_have_attribute("data-state", "delivered", timeout=20000)
    for index in range(1, 5):
        expect(page.locator("#progress")).to_contain_text(f"Panel {index} of 4", timeout=20000)
        approve = page.locator(".job-panel.current").get_by_role("button", name="Approve")
        expect(approve).to_be_visible(timeout=20000)
        approve.click()
    expect(page.locator("#done")).to_be_visible(timeout=20000)
    page.get_by_role("link", name="Read it").click()
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
    expect(page.locator("#page-image")).to_have_attribute("src", re.compile(r"/pages/"))
    shoot("whole-story-reader")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download PDF").click()
    pdf = tmp_path / "the-jump.pdf"
    download.value.save_as(pdf)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    pages = page.request.get(
        page.url.replace("/comics/", "/api/storyboards/").replace("/read/", "/pages/")
    )
    assert len(re.findall(rb"/Type\s*/Page[^s]", data)) == len(pages.json()["pages"]) >= 1
    # 10 demo credits − 5 renders shown (4 panels and one redo)
    assert page.request.get("/api/me/").json()["credits"] == {"available": 5, "held": 0}
