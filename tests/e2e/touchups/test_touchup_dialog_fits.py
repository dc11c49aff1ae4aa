"""The touch-up dialog fits the window: its Redraw button is in sight on a laptop
(1366×768) and on a phone 390 pixels wide, and with the offline renderer it says that
it draws shapes of its own, not the words typed, before anyone pays."""

import pytest
from playwright.sync_api import expect

from .test_touchups import generated

# Whether what is at the element's centre and at both ends of its middle line is the
# element itself (or inside it): nothing is drawn over it there.
UNCOVERED = """field => {
  const r = field.getBoundingClientRect();
  const y = r.top + r.height / 2;
  return [r.left + 4, r.left + r.width / 2, r.right - 4].every((x) => {
    const hit = document.elementFromPoint(x, y);
    return hit === field || field.contains(hit);
  });
}"""


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)], ids=["laptop", "phone"])
def test_redraw_is_in_sight(page, stack, shoot, width, height):
    board, job = generated(page, stack, f"fitter{width}", "In sight")
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"/comics/{board}/jobs/{job}/")
    panel = page.locator('.job-panel[data-index="1"]')
    expect(panel).to_have_attribute("data-state", "delivered", timeout=30000)
    panel.get_by_role("button", name="Touch up panel 1…").click()
    dialog = page.get_by_role("dialog", name="Redraw part of panel 1")
    expect(dialog.locator("#touchup-picture")).to_have_js_property("complete", True)
    redraw = dialog.get_by_role("button", name="Redraw this part — 1 credit")
    expect(redraw).to_be_in_viewport(ratio=1)
    # The field to type in is in sight too, and not under the actions' bar: a tap on it
    # reaches it (on a phone it once landed on Redraw).
    field = dialog.get_by_label("What to draw there")
    expect(field).to_be_in_viewport(ratio=1)
    assert field.evaluate(UNCOVERED), "the field is under something else"
    # With the words typed, the keyboard open or not, it stays in sight.
    dialog.get_by_label("What to draw there").fill("a red baseball cap")
    expect(redraw).to_be_in_viewport(ratio=1)
    shapes = dialog.locator("#touchup-shapes")
    expect(shapes).to_contain_text("with shapes of its own, not the words you type")
    expect(shapes).to_be_in_viewport(ratio=1)
    shoot(f"touchup-dialog-{width}x{height}")
    dialog.get_by_role("button", name="Close").click()
