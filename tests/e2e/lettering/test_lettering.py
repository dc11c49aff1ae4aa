"""Lettering you direct, as a person does it: on the job page they drag a balloon and the end
of its tail, make it a shout, add a sound effect and nudge it with the arrow keys; each
change is saved as made and the panel is lettered again at once, for nothing. After a
reload all of it is kept (a line rewritten in the storyboard editor too), and the PDF's
page shows it; in the reader "Place automatically" gives the balloon back to the
lettering; the translation editor lists the sound effect to translate; and a sound
effect is deleted."""

import io
import re

from PIL import Image, ImageChops, ImageStat
from playwright.sync_api import expect

from .conftest import wait_until
from .test_wizard import sign_up

LINE = {"speaker": "Aiko", "text": "Over here, quickly!"}


def headers(page) -> dict:
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    return {"X-CSRFToken": csrf, "Content-Type": "application/json"}


def drawn_comic(page) -> tuple[int, int]:
    """A comic of one panel, generated and delivered: (storyboard, job)."""
    board = page.request.post(
        "/api/storyboards/", data={"title": "Letters"}, headers=headers(page)
    ).json()["id"]
    saved = page.request.patch(
        f"/api/storyboards/{board}/",
        data={
            "characters": [{"name": "Aiko", "description": "red scarf"}],
            "panels": [
                {
                    "description": "Aiko on a rooftop.",
                    "shot": "medium",
                    "characters": ["Aiko"],
                    "dialogue": [LINE],
                }
            ],
        },
        headers=headers(page),
    )
    assert saved.ok, saved.text()
    job = page.request.post(
        f"/api/storyboards/{board}/generate/", data={}, headers=headers(page)
    ).json()["job"]
    wait_until(
        lambda: quote(page, board)["kept"] == [1], timeout=60, what="the panel to be delivered"
    )
    return board, job


def quote(page, board: int) -> dict:
    return page.request.get(f"/api/storyboards/{board}/quote/").json()


def panel(page, board: int) -> dict:
    return page.request.get(f"/api/storyboards/{board}/").json()["panels"][0]


def drag(page, handle, to: tuple[float, float]) -> None:
    """Drags `handle` onto the point `to` of the panel's picture (fractions of it)."""
    page.locator("#lettering-stage").scroll_into_view_if_needed()
    box = page.locator("#lettering-stage").bounding_box()
    start = handle.bounding_box()
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    page.mouse.down()
    x, y = box["x"] + to[0] * box["width"], box["y"] + to[1] * box["height"]
    page.mouse.move(x, y, steps=8)
    page.mouse.up()


def lettered_again(page) -> None:
    """The editor's picture shows the panel as saved (its address names the text)."""

    def shown():
        src = page.locator("#lettering-image").get_attribute("src")
        return src and page.locator("#lettering-stage").get_attribute("data-shown") == src

    wait_until(shown, what="the panel lettered again")


def pdf_page(page, board: int) -> Image.Image:
    """The first page of the comic's PDF (the export embeds each page as a JPEG)."""
    data = page.request.get(f"/api/storyboards/{board}/export/?format=pdf").body()
    start = data.index(b"\xff\xd8\xff")
    return Image.open(io.BytesIO(data[start:])).convert("L")


def pages_image(page, board: int) -> Image.Image:
    url = page.request.get(f"/api/storyboards/{board}/pages/").json()["pages"][0]["image_url"]
    return Image.open(io.BytesIO(page.request.get(url).body())).convert("L")


def test_drag_restyle_add_a_sound_effect_reload_and_read_it_in_the_pdf(page, stack, shoot):
    sign_up(page, "balloonist")
    stack.manage("grant_credits", "balloonist", "3", "--reason", "e2e")
    board, job = drawn_comic(page)
    before = panel(page, board)
    pdf_before = pdf_page(page, board)
    spent = quote(page, board)

    page.goto(f"/comics/{board}/jobs/{job}/")
    editor = page.locator("#lettering")
    editor.locator("summary").click()
    expect(page.locator("#lettering-panel")).to_have_value("1")
    lettered_again(page)
    first_picture = page.locator("#lettering-image").get_attribute("src")

    # The balloon, placed by the lettering so far, is dragged to the bottom right.
    balloon = page.get_by_role("button", name=re.compile(r"^Balloon 1, Aiko"))
    expect(balloon).to_have_class(re.compile(r"\bauto\b"))
    drag(page, balloon, (0.75, 0.78))
    wait_until(lambda: panel(page, board)["dialogue"][0]["place"], what="the place saved")
    place = panel(page, board)["dialogue"][0]["place"]
    assert abs(place["x"] - 0.75) < 0.03 and abs(place["y"] - 0.78) < 0.03
    lettered_again(page)
    assert page.locator("#lettering-image").get_attribute("src") != first_picture

    # Its tail's end, then its style.
    drag(page, page.get_by_role("button", name="End of the tail of balloon 1"), (0.55, 0.55))
    wait_until(
        lambda: panel(page, board)["dialogue"][0]["place"].get("tail"), what="the tail saved"
    )
    editor.get_by_label(re.compile(r"^Style, Balloon 1")).select_option("shout")
    wait_until(lambda: panel(page, board)["dialogue"][0]["style"] == "shout", what="a shout")
    lettered_again(page)

    # A sound effect, added, then moved by keyboard.
    page.get_by_label("New sound effect").fill("BOOM")
    page.get_by_role("button", name="Add a sound effect").click()
    wait_until(lambda: [e["text"] for e in panel(page, board)["sfx"]] == ["BOOM"], what="sfx")
    sound = page.get_by_role("button", name="Sound effect: BOOM")
    sound.focus()
    for _ in range(5):  # from the middle, a twentieth of the panel a press
        page.keyboard.press("Shift+ArrowUp")
    page.keyboard.press("ArrowRight")
    wait_until(lambda: panel(page, board)["sfx"][0]["y"] == 0.25, what="the sfx moved up")
    assert panel(page, board)["sfx"][0]["x"] == 0.51
    lettered_again(page)
    shoot("lettering-job-page")

    # Nothing was rendered or charged: the art is the same art.
    after = panel(page, board)
    assert after["art_hash"] == before["art_hash"]
    assert after["content_hash"] != before["content_hash"]
    assert quote(page, board) == spent

    # Reload: all of it is kept, and the handles are where it was put.
    page.reload()
    page.locator("#lettering summary").click()
    lettered_again(page)
    kept = panel(page, board)
    assert kept["dialogue"][0]["style"] == "shout"
    assert kept["dialogue"][0]["place"]["tail"]
    assert [e["text"] for e in kept["sfx"]] == ["BOOM"]
    expect(page.get_by_role("button", name=re.compile(r"^Balloon 1, Aiko"))).not_to_have_class(
        re.compile(r"\bauto\b")
    )
    expect(page.get_by_role("button", name="Sound effect: BOOM")).to_be_visible()

    # The storyboard editor, which shows neither, keeps them when the line is rewritten.
    page.goto(f"/comics/{board}/storyboard/")
    line = page.locator(".panel-card").first.locator(".l-text").first
    expect(line).to_have_value(LINE["text"])
    line.fill("Over here, quickly, before the roof gives way!")
    expect(page.locator("#save-state")).to_have_text("Saved", timeout=10000)
    rewritten = panel(page, board)
    assert rewritten["dialogue"][0]["text"].endswith("gives way!")
    assert rewritten["dialogue"][0]["style"] == "shout"
    assert rewritten["dialogue"][0]["place"] == kept["dialogue"][0]["place"]
    assert rewritten["sfx"] == kept["sfx"]

    # The PDF's page is the page as lettered now, and not as it was.
    pdf_after, composed = pdf_page(page, board), pages_image(page, board)
    assert pdf_after.size == composed.size
    assert ImageStat.Stat(ImageChops.difference(pdf_after, composed)).mean[0] < 6
    assert ImageStat.Stat(ImageChops.difference(pdf_after, pdf_before)).mean[0] > 0.5

    # In the reader: the page follows each change, and "Place automatically" undoes a place.
    page.goto(f"/comics/{board}/read/")
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
    shown = page.locator("#page-image").get_attribute("src")
    page.locator("#lettering summary").click()
    lettered_again(page)
    page.get_by_role("button", name="Place automatically").click()
    wait_until(lambda: panel(page, board)["dialogue"][0]["place"] is None, what="auto again")
    expect(page.locator("#page-image")).not_to_have_attribute("src", shown)
    expect(page.get_by_role("button", name=re.compile(r"^Balloon 1, Aiko"))).to_have_class(
        re.compile(r"\bauto\b")
    )
    # The translation editor lists the sound effect; translated, the Japanese page letters it.
    made = page.request.put(
        f"/api/storyboards/{board}/translations/ja/", data={}, headers=headers(page)
    )
    assert made.ok, made.text()
    original_ja = page.request.get(f"/api/storyboards/{board}/pages/?lang=ja").json()
    page.goto(f"/comics/{board}/translations/?lang=ja")
    expect(page.locator("#translations")).to_have_attribute("data-language", "ja")
    sfx_row = page.locator('.t-row[data-slot="sfx"][data-panel="1"][data-line="0"]')
    expect(sfx_row.locator(".t-text")).to_have_text("BOOM")
    sfx_row.locator(".t-input").fill("ドーン")
    wait_until(
        lambda: (
            page.request.get(f"/api/storyboards/{board}/translations/ja/").json()["panels"][0][
                "sfx"
            ][0]["text"]
            == "ドーン"
        ),
        what="the sound effect translated",
    )
    translated_ja = page.request.get(f"/api/storyboards/{board}/pages/?lang=ja").json()
    assert translated_ja["pages"][0]["image_url"] != original_ja["pages"][0]["image_url"]

    # In the reader again, the sound effect is deleted from its list.
    page.goto(f"/comics/{board}/read/")
    expect(page.locator("#reader")).to_have_attribute("data-ready", "1")
    page.locator("#lettering summary").click()
    lettered_again(page)
    page.get_by_role("button", name="Delete sound effect 1").click()
    wait_until(lambda: panel(page, board)["sfx"] == [], what="the sfx deleted")
    assert quote(page, board) == spent
