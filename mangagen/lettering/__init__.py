"""The lettering layer: balloons (four styles), tails, narration boxes, captions and sound
effects drawn over a panel's art.

A render is art only; the lettering is composed from the storyboard's current
text whenever a panel or page is shown, so a text edit needs no render.
"""

from .balloons import Letterable, Speaker, letter, one_line
from .fonts import cjk_font, lettering_font, title_font

__all__ = [
    "Letterable",
    "Speaker",
    "cjk_font",
    "letter",
    "lettering_font",
    "one_line",
    "title_font",
]
