"""What every part of a procedural picture draws on: a greyscale page edge to edge,
its ink and paper, and the panel's own random numbers."""

from __future__ import annotations

import hashlib
import random

from PIL import Image, ImageDraw

from ...base import PanelSpec

INK = 0
PAPER = 255


def digest_of(*parts: str) -> bytes:
    """The same bytes for the same words: what an outfit or a place looks like."""
    return hashlib.sha256("\x1f".join(parts).encode()).digest()


class Surface:
    """A canvas's page: its size, the panel it draws, the panel's random numbers, the
    image and its pen, and where it drew each face (`heads`)."""

    def __init__(self, width: int, height: int, spec: PanelSpec, rng: random.Random):
        self.w, self.h, self.spec, self.rng = width, height, spec, rng
        self.image = Image.new("L", (width, height), PAPER)
        self.draw = ImageDraw.Draw(self.image)
        # Edge to edge: the frame, like the lettering, is drawn where the panel is
        # composed (a page's borders and gutters), not baked into the art.
        self.inner = (0, 0, width, height)
        self.noir = spec.style == "noir"
        self.heads: dict[str, tuple[float, float, float]] = {}  # name -> (x, y, radius)
