"""A rough: the panel's final, as a pencil sketch of the same composition.

The procedural renderer's draft model is its own final drawn small and reduced to its
lines: the same figures in the same places at the same shot (the same spec and seed),
the screentones melted into the paper, the contours traced in a non-photo-blue pencil,
as a manga artist's *name* is. So what a person approves on the rough pages is exactly
what the final will show (mangagen/roughs/ and docs/features.md, "Rough pages").
"""

from __future__ import annotations

import io

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageOps

PAPER_TINT = (251, 249, 243)  # a sketchbook's off-white
PENCIL = (74, 104, 156)  # non-photo blue, darkened enough to read on a screen


def pencil(png: bytes, size: tuple[int, int]) -> bytes:
    """`png` (a procedural panel drawn `sketching`: no screentones) as a pencil sketch of
    `size`: its contours as pencil lines on paper, its dark fills a light wash."""
    with Image.open(io.BytesIO(png)) as opened:
        picture = opened.convert("L").resize(size, Image.Resampling.BOX)
    edges = picture.filter(ImageFilter.FIND_EDGES)
    strength = edges.point(lambda v: 0 if v < 40 else min(255, 100 + v))
    # FIND_EDGES sees the picture's own border as an edge: that is no line of the panel.
    ImageDraw.Draw(strength).rectangle((0, 0, size[0] - 1, size[1] - 1), outline=0)
    # A light wash where the final is dark (hair, a building), as a pencil's shading.
    shade = ImageOps.invert(picture).point(lambda v: v // 4)
    amount = ImageChops.lighter(strength, shade)
    paper = Image.new("RGB", size, PAPER_TINT)
    lead = Image.new("RGB", size, PENCIL)
    sketch = Image.composite(lead, paper, amount)
    buffer = io.BytesIO()
    sketch.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()
