"""Outfits, places, blocking and the library, as a person uses them in the wizard: an outfit
and a pictured place on the Characters step, each panel's place, outfit and blocking on
the Storyboard step, and both kept in the library and added to another comic."""

import io

from PIL import Image
from playwright.sync_api import expect

from .conftest import wait_until
from .test_character_sheets import credits
from .test_generate import make_comic
from .test_wizard import sign_up


def storyboard(page, board: int) -> dict:
    return page.request.get(f"/api/storyboards/{board}/").json()


def saved(page) -> None:
    expect(page.locator("#save-state")).to_have_text("Saved", timeout=10000)


def picture(tmp_path) -> str:
    path = tmp_path / "rooftop.png"
    buffer = io.BytesIO()
    Image.new("RGB", (160, 120), (40, 90, 160)).save(buffer, format="PNG")
    path.write_bytes(buffer.getvalue())
    return str(path)


def test_outfits_places_and_blocking_in_the_wizard_and_the_library(page, stack, tmp_path, shoot):
    sign_up(page, "costumer")
    board = make_comic(page, "Winter")  # Aiko in panels 2 and 3, Kenji in 3

    # Characters step: Aiko's winter coat, and a place with a picture of our own.
    page.goto(f"/comics/{board}/characters/")
    aiko = page.locator(".character-row").first
    expect(aiko.locator(".c-name")).to_have_value("Aiko")
    aiko.get_by_role("button", name="+ Add outfit").click()
    aiko.get_by_label("Outfit").fill("winter coat")
    aiko.get_by_label("What it looks like").fill("a long navy duffle coat")
    page.get_by_role("button", name="+ Add place").click()
    place = page.locator(".place-row").first
    place.get_by_label("Place").fill("Rooftop")
    place.get_by_label("What it looks like").fill("the school rooftop at dusk")
    saved(page)
    place.locator(".p-upload").set_input_files(picture(tmp_path))
    expect(place.locator(".p-picture")).to_be_visible(timeout=10000)
    data = storyboard(page, board)
    assert data["characters"][0]["outfits"] == [
        {"name": "winter coat", "description": "a long navy duffle coat", "sheet": None}
    ]
    picture_hash = data["places"][0]["picture"]["hash"]

    # …kept in the library for other comics.
    aiko.get_by_role("button", name="Save to my cast").click()
    expect(aiko.locator(".c-saved")).to_have_text("Saved to your cast.")
    place.get_by_role("button", name="Save to my places").click()
    expect(place.locator(".p-saved")).to_have_text("Saved to your places.")
    shoot("characters-outfits-places")

    # Storyboard step: panel 3 is on the rooftop, Aiko in her coat on the left, Kenji right.
    page.get_by_role("button", name="Next: storyboard →").click()
    third = page.locator(".panel-card").nth(2)
    expect(third.locator(".p-title")).to_have_text("Panel 3")
    third.get_by_label("Place").select_option("Rooftop")
    third.get_by_label("What Aiko wears").select_option("winter coat")
    third.get_by_label("Aiko stands: Left").check()
    third.get_by_label("Kenji stands: Right").check()
    saved(page)
    shoot("storyboard-blocking")
    before = storyboard(page, board)["panels"]
    panel = before[2]
    assert panel["place"] == "Rooftop" and panel["outfits"] == {"Aiko": "winter coat"}
    assert panel["blocking"] == {"Aiko": "left", "Kenji": "right"}
    # Kenji leaves the panel: his place in the blocking goes with him.
    third.locator(".p-characters").get_by_label("Kenji").uncheck()
    saved(page)
    after = storyboard(page, board)["panels"]
    assert after[2]["blocking"] == {"Aiko": "left"} and after[2]["characters"] == ["Aiko"]
    assert [p["art_hash"] for p in after[:2]] == [p["art_hash"] for p in before[:2]]
    assert after[2]["art_hash"] != before[2]["art_hash"]

    # Another comic takes Aiko and the rooftop from the library, as they were.
    other = make_comic(page, "Spring")
    page.goto(f"/comics/{other}/characters/")
    expect(page.locator("#places-library")).to_be_visible()
    page.locator("#place-chips").get_by_role("button", name="+ Rooftop").click()
    expect(page.locator(".place-row").first.locator(".p-picture")).to_be_visible(timeout=10000)
    added = storyboard(page, other)["places"][0]
    assert added["name"] == "Rooftop" and added["picture"]["hash"] == picture_hash
    # Aiko is there already (make_comic names her): the library says so instead of adding.
    expect(page.locator("#cast-library")).to_be_hidden()
    page.locator(".character-row").first.get_by_role("button", name="Remove").click()
    saved(page)
    page.reload()
    page.locator("#cast-chips").get_by_role("button", name="+ Aiko").click()
    wait_until(
        lambda: any(c["name"] == "Aiko" for c in storyboard(page, other)["characters"]),
        what="Aiko added from the cast",
    )
    aiko = next(c for c in storyboard(page, other)["characters"] if c["name"] == "Aiko")
    assert aiko["outfits"][0]["name"] == "winter coat"
    assert credits(page) == {"available": 0, "held": 0}  # nothing was rendered or held
