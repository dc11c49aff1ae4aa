"""What drawing a panel is reckoned to cost, in CPU seconds, before it is drawn: the drawing
budget's reservation for a build (mangagen/kernel/quotas.py `drawing`), settled with the
CPU time it really took once it ends.

Reckoned from what will be drawn: the frame (its art decoded, scaled and cropped, or a
placeholder hatched), each line of dialogue and the caption (set, fitted, drawn: by
their letters), each sound effect (its layer is at most the panel's size, turned), and
the picture's encoding. The figures were measured on the development machine (two
cores, busy) and set about half again above what they measured, so a reservation
rarely falls short: the worst panel a comic may have (six lines and a caption of 300
letters, eight sound effects of 40 at the largest size) took 0.22 CPU s at a strip's
width, and is reckoned 0.44; a strip of 24 of them took 6.0 s, reckoned 11.2.
"""

from __future__ import annotations

from .panel import Letterable

SECONDS_PER_FRAME = 0.01
SECONDS_PER_FRAME_MEGAPIXEL = 0.06
SECONDS_PER_LINE = 0.005
SECONDS_PER_LETTER = 0.00011
SECONDS_PER_EFFECT = 0.006
SECONDS_PER_EFFECT_MEGAPIXEL = 0.025
SECONDS_PER_ENCODED_MEGAPIXEL = 0.045  # a PNG


def panel_seconds(panel: Letterable, size: tuple[int, int]) -> float:
    """A panel drawn and lettered at `size` (width, height in pixels)."""
    megapixels = size[0] * size[1] / 1e6
    lines = [line.text for line in panel.dialogue]
    if panel.caption.strip():
        lines.append(panel.caption)
    effects = len(panel.sfx)
    return (
        SECONDS_PER_FRAME
        + SECONDS_PER_FRAME_MEGAPIXEL * megapixels
        + SECONDS_PER_LINE * len(lines)
        + SECONDS_PER_LETTER * sum(len(text) for text in lines)
        + effects * (SECONDS_PER_EFFECT + SECONDS_PER_EFFECT_MEGAPIXEL * megapixels)
    )


def encoding_seconds(size: tuple[int, int]) -> float:
    """A picture of `size` encoded as a PNG."""
    return SECONDS_PER_ENCODED_MEGAPIXEL * size[0] * size[1] / 1e6
