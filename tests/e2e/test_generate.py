"""Generate on Review, watch the panels arrive, decide on each, read and download."""

import re

from playwright.sync_api import expect

from tests.support.waiting import wait_for

from .test_wizard import sign_up

PANELS = [
    {"description": "Neo-Kyoto at night.", "shot": "establishing"},
    {
        "description": "Aiko on the rooftop.",
        "shot": "close-up",
        "characters": ["Aiko"],
        "dialogue": [{"speaker": "Aiko", "text": "They're right behind us!"}],
    },
    {"description": "Kenji takes her hand.", "shot": "medium", "characters": ["Aiko", "Kenji"]},
]


def make_comic(page, title="Rooftops"):
    token = page.context.cookies()
    csrf = next(c["value"] for c in token if c["name"] == "csrftoken")
    headers = {"X-CSRFToken": csrf, "Content-Type": "application/json"}
    board = page.request.post("/api/storyboards/", data={"title": title}, headers=headers).json()
    page.request.patch(
        f"/api/storyboards/{board['id']}/",
        data={
            "characters": [
                {"name": "Aiko", "description": "long black hair, red scarf"},
                {"name": "Kenji"},
            ],
            "panels": PANELS,
        },
        headers=headers,
    )
    return board["id"]


def test_generate_redo_approve_read_and_download(page, stack, shoot, tmp_path):
    sign_up(page, "reader")
    stack.manage("grant_credits", "reader", "6", "--reason", "e2e")
    board = make_comic(page)
    stack.shell("from mangagen.renderers.gpu_pool import GpuPool; GpuPool().reset()")  # a cold GPU
    page.goto(f"/comics/{board}/review/")
    page.get_by_role("button", name="Generate").click()
    expect(page).to_have_url(re.compile(rf"/comics/{board}/jobs/\d+/$"))
    expect(page.locator("#status-line")).to_contain_text("Warming up the GPU for panel 1")
    shoot("job-warming")

    current = page.locator(".job-panel.current")
    expect(current.locator("img")).to_be_visible(timeout=20000)
    expect(page.locator("#progress")).to_contain_text("Panel 1 of 3")
    shoot("job-panel-one")
    # 6 − panel one (spent) − panel two rendering ahead (held)
    expect(page.locator("#job-credits")).to_have_text("4")

    current.get_by_role("button", name="Redo (1 credit)").click()
    redone = page.locator('.job-panel[data-index="1"]')
    expect(redone).to_have_attribute("data-attempts", "2")
    expect(redone).to_have_attribute("data-state", "delivered", timeout=20000)
    expect(page.locator(".job-panel").first).to_contain_text("Ready for you")
    expect(page.locator("#job-credits")).to_have_text("3")

    for index in (1, 2, 3):
        expect(page.locator("#progress")).to_contain_text(f"Panel {index} of 3", timeout=20000)
        button = page.locator(".job-panel.current").get_by_role("button", name="Approve")
        expect(button).to_be_visible(timeout=20000)
        if index == 2:
            shoot("job-deciding")
            # Only the panel awaiting a decision offers one.
            expect(page.get_by_role("button", name="Approve")).to_have_count(1)
        button.click()
    expect(page.locator("#done")).to_be_visible(timeout=20000)
    expect(page.locator("#job-credits")).to_have_text("2")
    assert page.request.get("/api/me/").json()["credits"] == {"available": 2, "held": 0}

    page.get_by_role("link", name="Read it").click()
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
    expect(page.locator("#page-image")).to_have_attribute("src", re.compile(r"/pages/"))
    shoot("reader")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download PDF").click()
    pdf = tmp_path / "comic.pdf"
    download.value.save_as(pdf)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    pages = page.request.get(
        page.url.replace("/comics/", "/api/storyboards/").replace("/read/", "/pages/")
    )
    assert len(re.findall(rb"/Type\s*/Page[^s]", data)) == len(pages.json()["pages"]) >= 1


def test_zero_credits_meet_the_purchase_prompt_at_generate(page, stack, shoot):
    sign_up(page, "broke")
    board = make_comic(page, "No money")
    page.goto(f"/comics/{board}/review/")
    page.get_by_role("button", name="Generate").click()
    prompt = page.locator("#purchase-prompt")
    expect(prompt).to_be_visible()
    expect(prompt.get_by_role("link", name="Get credits")).to_have_attribute("href", "/credits/")
    shoot("purchase-prompt")
    assert page.request.get("/api/me/").json()["credits"] == {"available": 0, "held": 0}
    prompt.get_by_role("link", name="Get credits").click()
    page.get_by_role("button", name=re.compile("Add 10 demo credits")).click()
    expect(page.locator("#credits-available")).to_have_text("10")
    expect(page.locator("#nav-credits")).to_have_text("10")
    expect(page.locator("#packs")).to_contain_text("20 credits")
    shoot("credits")


def test_reloading_the_job_page_shows_every_panel_once_in_order(page, stack):
    sign_up(page, "reloader")
    stack.manage("grant_credits", "reloader", "5", "--reason", "e2e")
    board = make_comic(page, "Reloads")
    page.goto(f"/comics/{board}/review/")
    page.get_by_role("button", name="Generate").click()
    expect(page.locator(".job-panel.current img")).to_be_visible(timeout=20000)
    page.locator(".job-panel.current").get_by_role("button", name="Approve").click()
    page.reload()
    expect(page.locator(".job-panel.current img")).to_be_visible(timeout=20000)
    page.evaluate("window.mangagenJob.socket.close()")  # a dropped connection
    page.locator(".job-panel.current").get_by_role("button", name="Approve").click()
    expect(page.locator(".job-panel.current img")).to_be_visible(timeout=20000)
    indexes = page.locator(".job-panel").evaluate_all("els => els.map(e => e.dataset.index)")
    assert indexes == ["1", "2", "3"]


def test_the_job_page_reads_its_missed_events_in_batches_and_still_fills_gaps(page, stack):
    sign_up(page, "batcher")
    stack.manage("grant_credits", "batcher", "5", "--reason", "e2e")
    board = make_comic(page, "Batches")
    page.goto(f"/comics/{board}/review/")
    page.get_by_role("button", name="Generate").click()
    expect(page.locator(".job-panel.current img")).to_be_visible(timeout=20000)
    job = int(re.search(r"/jobs/(\d+)", page.url).group(1))

    def logged_seq() -> int:
        events = page.request.get(f"/api/jobs/{job}/events/?after=0").json()["events"]
        return events[-1]["seq"]

    # Every stream the page opens, and what each received, as the page's own script saw it.
    page.add_init_script("""
      window.streamsSeen = [];
      const Native = window.WebSocket;
      window.WebSocket = function (url, protocols) {
        const socket = new Native(url, protocols);
        const seen = { url, frames: [] };
        window.streamsSeen.push(seen);
        socket.addEventListener("message", (m) => seen.frames.push(JSON.parse(m.data)));
        return socket;
      };
      Object.assign(window.WebSocket, Native);
      window.WebSocket.prototype = Native.prototype;
    """)

    def streams() -> list[dict]:
        return page.evaluate("window.streamsSeen")

    page.reload()  # the page connects from seq 0: the whole log is what it missed
    expect(page.locator(".job-panel.current img")).to_be_visible(timeout=20000)
    wait_for(lambda: page.evaluate("window.mangagenJob.lastSeq") == logged_seq(),
             what="the page to hold the whole log")  # fmt: skip
    (stream,) = streams()
    assert "batch=1" in stream["url"] and "after=0" in stream["url"]
    replay = stream["frames"][0]
    assert replay["type"] == "events"
    assert [e["seq"] for e in replay["events"]] == list(range(1, len(replay["events"]) + 1))

    page.evaluate("window.mangagenJob.socket.close()")  # a dropped connection
    page.locator(".job-panel.current").get_by_role("button", name="Approve").click()
    expect(page.locator(".job-panel.current img")).to_be_visible(timeout=20000)
    wait_for(lambda: len(streams()) >= 2, what="the page to reconnect")
    resumed = streams()[-1]["url"]
    resumed_after = int(re.search(r"after=(\d+)", resumed).group(1))
    assert "batch=1" in resumed and resumed_after >= replay["events"][-1]["seq"]
    wait_for(lambda: page.evaluate("window.mangagenJob.lastSeq") == logged_seq(),
             what="the page to catch up with the log")  # fmt: skip
    indexes = page.locator(".job-panel").evaluate_all("els => els.map(e => e.dataset.index)")
    assert indexes == ["1", "2", "3"]
