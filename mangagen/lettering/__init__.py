"""The lettering layer: balloons (four styles), tails, narration boxes, captions and sound
effects drawn over a panel's art.

A render is art only; the lettering is composed from the storyboard's current
text whenever a panel or page is shown, so a text edit needs no render.

By what each part does: `panel` (what a panel's lettering is made from),
`placement` (`letter()`: where each balloon, box and caption goes), `text`
(setting and drawing a balloon's text), `shapes` (balloons' outlines by style),
`sound_effects`; the shipped `fonts`, and the `languages` they can set.
"""

from .fonts import cjk_font, lettering_font, title_font
from .panel import Letterable, Speaker
from .placement import letter
from .text import one_line

__all__ = [
    "Letterable",
    "Speaker",
    "cjk_font",
    "letter",
    "lettering_font",
    "one_line",
    "title_font",
]
