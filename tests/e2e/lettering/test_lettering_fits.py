"""The editor shows what the page shows, and lettering fits its panel: each automatic
balloon's handle sits on its balloon; a 40-character sound effect at the panel's edge
stays inside the panel on the composed page, and the editor says it was moved in and made
smaller; a line's style changed on the Storyboard screen shows on the page, for nothing."""

import io
import re

from PIL import Image, ImageChops
from playwright.sync_api import expect

from .conftest import wait_until
from .test_wizard import sign_up

FORTY = "DOKI DOKI DOKI DOKI DOKI DOKI DOKI DOKI!"
assert len(FORTY) == 40


def headers(page) -> dict:
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    return {"X-CSRFToken": csrf, "Content-Type": "application/json"}


def drawn(page, stack, name: str, panels: list[dict]) -> tuple[int, int]:
    """A new person's comic of `panels`, generated and every panel approved: (board, job)."""
    sign_up(page, name)
    stack.manage("grant_credits", name, str(len(panels) + 2), "--reason", "e2e")
    board = page.request.post(
        "/api/storyboards/", data={"title": "Fits"}, headers=headers(page)
    ).json()["id"]
    saved = page.request.patch(
        f"/api/storyboards/{board}/",
        data={"characters": [{"name": "Aiko"}, {"name": "Kenji"}], "panels": panels},
        headers=headers(page),
    )
    assert saved.ok, saved.text()
    job = page.request.post(f"/api/storyboards/{board}/generate/", headers=headers(page)).json()
    for index in range(1, len(panels) + 1):

        def delivered(index=index):
            body = page.request.get(f"/api/jobs/{job['job']}/").json()
            return body["panels"][index - 1]["state"] == "delivered"

        wait_until(delivered, timeout=60, what=f"panel {index} delivered")
        answer = page.request.post(
            f"/api/jobs/{job['job']}/panels/{index}/approve/", headers=headers(page)
        )
        assert answer.ok, answer.text()
    return board, job["job"]


def storyboard(page, board: int) -> dict:
    return page.request.get(f"/api/storyboards/{board}/").json()


def page_picture(page, board: int, number: int = 1) -> Image.Image:
    body = page.request.get(f"/api/storyboards/{board}/pages/").json()
    url = next(p["image_url"] for p in body["pages"] if p["number"] == number)
    return Image.open(io.BytesIO(page.request.get(url).body())).convert("L")


def open_editor(page, board: int, job: int) -> None:
    page.goto(f"/comics/{board}/jobs/{job}/")
    page.locator("#lettering summary").click()
    stage = page.locator("#lettering-stage")
    wait_until(
        lambda: (
            stage.get_attribute("data-shown")
            and stage.get_attribute("data-shown")
            == page.locator("#lettering-image").get_attribute("src")
        ),
        what="the panel lettered in the editor",
    )


def test_each_automatic_balloons_handle_is_on_its_balloon(page, stack, shoot):
    lines = [
        {"speaker": "Aiko", "text": "They're right behind us!"},
        {"speaker": "Kenji", "text": "Then we jump.", "style": "whisper"},
        {"speaker": "Aiko", "text": "Together?", "style": "thought"},
    ]
    panels = [
        {
            "description": "Aiko and Kenji on the roof's edge.",
            "shot": "wide",
            "characters": ["Aiko", "Kenji"],
            "blocking": {"Aiko": "left", "Kenji": "right"},
            "dialogue": lines,
        }
    ]
    board, job = drawn(page, stack, "handler", panels)
    open_editor(page, board, job)
    layout = page.request.get(f"/api/storyboards/{board}/panels/1/lettering/").json()
    assert [line["number"] for line in layout["lines"]] == [0, 1, 2]
    # The picture's box: the layout's fractions are of the picture the editor shows.
    stage = page.locator("#lettering-image").bounding_box()
    for placed in layout["lines"]:
        n = placed["number"] + 1
        assert placed["auto"]
        handle = page.get_by_role("button", name=re.compile(rf"^Balloon {n}, "))
        expect(handle).to_have_class(re.compile(r"\bauto\b"))
        # The handle's centre lies in its balloon's box, as the picture draws it.
        wait_until(
            lambda handle=handle, placed=placed: on(handle, placed["box"], stage),
            what=f"balloon {n}'s handle on its balloon",
        )
        if placed["tail"]:
            tail = page.get_by_role("button", name=f"End of the tail of balloon {n}")
            box = tail.bounding_box()
            x = (box["x"] + box["width"] / 2 - stage["x"]) / stage["width"]
            y = (box["y"] + box["height"] / 2 - stage["y"]) / stage["height"]
            assert abs(x - placed["tail"]["x"]) < 0.02 and abs(y - placed["tail"]["y"]) < 0.02
    page.locator("#lettering").scroll_into_view_if_needed()
    shoot("lettering-handles-on-balloons")


def on(handle, box: dict, stage: dict) -> bool:
    """Whether `handle`'s centre lies within `box` (fractions of the picture)."""
    drawn = handle.bounding_box()
    x = (drawn["x"] + drawn["width"] / 2 - stage["x"]) / stage["width"]
    y = (drawn["y"] + drawn["height"] / 2 - stage["y"]) / stage["height"]
    return box["x0"] <= x <= box["x1"] and box["y0"] <= y <= box["y1"]


def frame_of(picture: Image.Image) -> tuple[int, int, int, int]:
    """The frame of a page of one panel: its border's first dark pixels from the page's
    edges, along a row and a column away from the sound effect."""
    width, height = picture.size
    row, column = round(height * 0.3), round(width * 0.3)
    dark = [x for x in range(width) if picture.getpixel((x, row)) < 80]
    down = [y for y in range(height) if picture.getpixel((column, y)) < 80]
    return dark[0], down[0], dark[-1], down[-1]


def test_a_forty_character_sound_effect_at_the_edge_stays_inside_the_panel(page, stack, shoot):
    panels = [{"description": "A quiet street.", "shot": "wide"}]
    board, job = drawn(page, stack, "onomatopoeia", panels)
    bare = page_picture(page, board)
    effect = {"text": FORTY, "x": 0.99, "y": 0.5, "size": 0.2}
    saved = page.request.patch(
        f"/api/storyboards/{board}/",
        data={"panels": [{**panels[0], "sfx": [effect]}]},
        headers=headers(page),
    )
    assert saved.ok, saved.text()
    lettered = page_picture(page, board)
    left, top, right, bottom = frame_of(bare)
    changed = ImageChops.difference(bare, lettered).getbbox()
    assert changed is not None, "the sound effect is drawn"
    # All of its ink inside the frame, short of its border: nothing ran off the panel.
    assert left < changed[0] and changed[2] <= right and top < changed[1] and changed[3] <= bottom

    # The editor says what the lettering did to keep it in.
    open_editor(page, board, job)
    row = page.locator('#lettering-sfx li[data-row="sfx-0"]')
    expect(row).to_contain_text("Made smaller and moved in to stay inside the panel.")
    page.locator("#lettering").scroll_into_view_if_needed()
    shoot("lettering-sfx-moved-in")


def test_a_style_changed_on_the_storyboard_screen_shows_on_the_page_for_nothing(page, stack, shoot):
    panels = [
        {
            "description": "Aiko at the door.",
            "shot": "medium",
            "characters": ["Aiko"],
            "dialogue": [{"speaker": "Aiko", "text": "Who's there?"}],
        }
    ]
    board, _ = drawn(page, stack, "restyler", panels)
    before = page_picture(page, board)
    spent = page.request.get("/api/me/").json()["credits"]
    art = storyboard(page, board)["panels"][0]["art_hash"]

    page.goto(f"/comics/{board}/storyboard/")
    style = page.locator(".panel-card").first.locator(".l-style").first
    expect(style).to_have_value("speech")
    style.select_option("shout")
    expect(page.locator("#save-state")).to_have_text("Saved", timeout=10000)
    panel = storyboard(page, board)["panels"][0]
    assert panel["dialogue"][0]["style"] == "shout"
    assert panel["art_hash"] == art  # lettering only: the picture is the same picture
    shoot("storyboard-line-style")

    after = page_picture(page, board)
    assert ImageChops.difference(before, after).getbbox() is not None, "the page shows it"
    assert page.request.get("/api/me/").json()["credits"] == spent
    quote = page.request.get(f"/api/storyboards/{board}/quote/").json()
    assert quote["render"] == [] and quote["credits"] == 0

    # Review shows each line's style before anyone pays for a picture.
    page.goto(f"/comics/{board}/review/")
    expect(page.locator(".review-panel .balloon.style-shout")).to_contain_text("Who's there?")
    expect(page.locator(".review-panel .balloon .style-tag")).to_have_text("(Shout)")
