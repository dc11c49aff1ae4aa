"""A touch-up in the browser: on the job page, drag a box over a shown panel, move and
size it with the keyboard, say what to draw, redraw it for one credit, see the new
take, toggle before/after, and keep the earlier one."""

import re

from playwright.sync_api import expect

from .conftest import wait_until
from .test_wizard import sign_up

PANELS = [{"description": "Aiko on the rooftop.", "shot": "wide", "characters": ["Aiko"]}]


def headers(page) -> dict:
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    return {"X-CSRFToken": csrf, "Content-Type": "application/json"}


def generated(page, stack, name: str, title: str) -> tuple[int, int]:
    """A new person's comic of one panel, given 5 credits and generated: its storyboard's
    id and its job's."""
    sign_up(page, name)
    stack.manage("grant_credits", name, "5", "--reason", "e2e")
    board = page.request.post(
        "/api/storyboards/", data={"title": title}, headers=headers(page)
    ).json()["id"]
    page.request.patch(
        f"/api/storyboards/{board}/",
        data={"characters": [{"name": "Aiko", "description": "red scarf"}], "panels": PANELS},
        headers=headers(page),
    )
    job = page.request.post(f"/api/storyboards/{board}/generate/", headers=headers(page)).json()
    return board, job["job"]


def drag(page, picture, *points: tuple[float, float]) -> None:
    """The mouse pressed on `picture` at the first point, moved through the others and
    released at the last: fractions of the picture across and down."""
    frame = picture.bounding_box()
    assert frame is not None
    at = [(frame["x"] + frame["width"] * x, frame["y"] + frame["height"] * y) for x, y in points]
    page.mouse.move(*at[0])
    page.mouse.down()
    for point in at[1:]:
        page.mouse.move(*point)
    page.mouse.up()


def takes(page, board: int) -> list[dict]:
    return page.request.get(f"/api/storyboards/{board}/panels/1/takes/").json()["takes"]


def test_drag_a_box_redraw_it_toggle_and_keep_the_earlier_one(page, stack, shoot):
    board, job = generated(page, stack, "retoucher", "Touch-ups")
    page.goto(f"/comics/{board}/jobs/{job}/")
    panel = page.locator('.job-panel[data-index="1"]')
    expect(panel).to_have_attribute("data-state", "delivered", timeout=30000)
    expect(page.locator("#job-credits")).to_have_text("4")

    panel.get_by_role("button", name="Touch up panel 1…").click()
    dialog = page.get_by_role("dialog", name="Redraw part of panel 1")
    expect(dialog).to_be_visible()
    picture = dialog.locator("#touchup-picture")
    expect(picture).to_have_js_property("complete", True)
    # Drag from 20 % to 50 % across and 30 % to 70 % down.
    drag(page, picture, (0.2, 0.3), (0.35, 0.5), (0.5, 0.7))
    box = dialog.get_by_role("group", name=re.compile("The part to redraw"))
    expect(box).to_be_focused()
    expect(box).to_have_attribute("aria-description", "From 20% to 50% across, 30% to 70% down")
    # The keyboard moves it (arrows) and sizes it (Shift+arrows), 2 % a press.
    box.press("ArrowRight")
    box.press("Shift+ArrowDown")
    expect(box).to_have_attribute("aria-description", "From 22% to 52% across, 30% to 72% down")

    dialog.get_by_label("What to draw there").fill("a red umbrella")
    shoot("touchup-box")
    dialog.get_by_role("button", name="Redraw this part — 1 credit").click()
    expect(dialog.get_by_role("status")).to_contain_text("Redrawn", timeout=30000)
    newer, older = takes(page, board)
    assert newer["current"] and not older["current"]
    assert page.request.get("/api/me/").json()["credits"] == {"available": 3, "held": 0}
    expect(picture).to_have_attribute("src", newer["image_url"])
    shoot("touchup-after")

    toggle = dialog.get_by_role("button", name="Show before")
    toggle.click()
    expect(picture).to_have_attribute("src", older["image_url"])
    expect(dialog.get_by_role("button", name="Show after")).to_have_attribute(
        "aria-pressed", "true"
    )
    dialog.get_by_role("button", name="Show after").click()
    expect(picture).to_have_attribute("src", newer["image_url"])

    dialog.get_by_role("button", name="Keep the earlier one").click()
    expect(dialog.get_by_role("status")).to_contain_text("earlier picture is shown again")
    expect(picture).to_have_attribute("src", older["image_url"])
    assert takes(page, board)[0]["id"] == older["id"]
    assert page.request.get("/api/me/").json()["credits"] == {"available": 3, "held": 0}
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()
    expect(panel.locator(".frame img")).to_have_attribute("src", older["image_url"])


def test_in_the_reader_paint_a_mask_with_a_brush_and_redraw_it(page, stack, shoot):
    board, job = generated(page, stack, "painter", "Brushwork")

    def delivered():
        body = page.request.get(f"/api/jobs/{job}/").json()
        return body["panels"][0]["state"] == "delivered"

    wait_until(delivered, timeout=30, what="panel one to be delivered")
    approved = page.request.post(f"/api/jobs/{job}/panels/1/approve/", headers=headers(page))
    assert approved.status == 200
    page.goto(f"/comics/{board}/read/")
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
    page.get_by_label("Redraw part of a panel").select_option("1")
    page.get_by_role("button", name="Touch up…").click()
    dialog = page.get_by_role("dialog", name="Redraw part of panel 1")
    picture = dialog.locator("#touchup-picture")
    expect(picture).to_have_js_property("complete", True)
    dialog.get_by_label("Paint with a brush").check()
    dialog.get_by_label("Brush size").fill("40")
    drag(page, picture, (0.3, 0.4), (0.5, 0.5), (0.6, 0.6))
    shoot("touchup-brush")
    dialog.get_by_role("button", name="Redraw this part — 1 credit").click()
    expect(dialog.get_by_role("status")).to_contain_text("Redrawn", timeout=30000)
    newer, earlier = takes(page, board)
    assert newer["current"] and not earlier["current"]
    expect(picture).to_have_attribute("src", newer["image_url"])
    assert page.request.get("/api/me/").json()["credits"] == {"available": 3, "held": 0}
    with page.expect_navigation():  # the reader shows the pages with the new take
        dialog.get_by_role("button", name="Close").click()
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
