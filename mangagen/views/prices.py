"""What each render a person can ask for costs, on every page (a context processor):
the buttons that start one say its kind's price (mangagen/render_kinds/), in the
templates (`render_prices.redo`) and, through base.html's "render-prices", in the
scripts (static/js/prices.js)."""

from mangagen.characters.kinds import SHEET
from mangagen.jobs.kinds.panel import PANEL, REDO
from mangagen.jobs.kinds.touchup import TOUCH_UP


def render_prices(request) -> dict:
    return {
        "render_prices": {
            "panel": PANEL.credits,
            "redo": REDO.credits,
            "touch_up": TOUCH_UP.credits,
            "sheet": SHEET.credits,
        }
    }
