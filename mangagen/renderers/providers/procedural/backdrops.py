"""Backdrops and places: the shot's background (screentone sky and skyline, speed and
focus lines, a style's sparkles or rain) and a place's own motif, the same in every panel
set there."""

from __future__ import annotations

import hashlib
import math
import random
import re
from dataclasses import dataclass

from .surface import INK, PAPER, Surface, digest_of


class Backgrounds(Surface):
    """The background of a canvas, drawn before its figures. A rough's (`sketching`)
    leaves the screentones out, as a pencil rough does: the shapes and lines stay."""

    sketching = False

    def background(self) -> None:
        shot = self.spec.shot
        if self.noir:
            self.draw.rectangle(self.inner, fill=40)
        if self.spec.place is not None:
            # A place looks the same in every panel set there: its backdrop is drawn from
            # the place alone, and the shot only adds its lines over it.
            Backdrop.of(self.spec.place).paint(self)
            if shot == "action":
                self.speed_lines()
            elif shot == "extreme-close-up":
                self.focus_lines(dense=True)
        elif shot in ("establishing", "wide"):
            self.skyline(buildings=shot == "establishing")
        elif shot == "action":
            self.speed_lines()
        elif shot in ("close-up", "extreme-close-up"):
            self.focus_lines(dense=shot == "extreme-close-up")
        else:
            self.screentone((self.inner[0], self.inner[1], self.inner[2], self.inner[3]), 7, 1.6)
        if self.spec.style == "shoujo":
            self.sparkles()
        if self.noir:
            self.rain()

    def screentone(self, box, step: int, radius: float, fade: bool = False) -> None:
        if self.sketching:
            return
        x0, y0, x1, y1 = box
        tone = PAPER if self.noir else INK
        for y in range(int(y0), int(y1), step):
            r = radius * (1 - (y - y0) / max(1, y1 - y0)) if fade else radius
            if r < 0.4:
                continue
            offset = step // 2 if (y // step) % 2 else 0
            for x in range(int(x0) + offset, int(x1), step):
                self.draw.ellipse((x - r, y - r, x + r, y + r), fill=tone)

    def skyline(self, *, buildings: bool) -> None:
        x0, y0, x1, y1 = self.inner
        horizon = y0 + (y1 - y0) * 0.68
        self.screentone((x0, y0, x1, horizon), 8, 2.2, fade=True)
        if buildings:
            x = x0
            while x < x1:
                bw = self.rng.randint(self.w // 18, self.w // 8)
                bh = self.rng.randint(int((y1 - y0) * 0.15), int((y1 - y0) * 0.5))
                top = horizon - bh
                self.draw.rectangle((x, top, x + bw, horizon), fill=70 if not self.noir else 15)
                for wy in range(int(top) + 8, int(horizon) - 6, 14):
                    for wx in range(int(x) + 6, int(x + bw) - 6, 12):
                        if self.rng.random() < 0.55:
                            self.draw.rectangle((wx, wy, wx + 4, wy + 6), fill=PAPER)
                x += bw + self.rng.randint(2, 10)
        self.draw.line((x0, horizon, x1, horizon), fill=INK, width=3)
        for i in range(6):  # ground perspective
            gx = x0 + (x1 - x0) * i / 5
            self.draw.line(((x0 + x1) / 2, horizon, gx, y1), fill=150, width=1)

    def speed_lines(self) -> None:
        x0, y0, x1, y1 = self.inner
        tone = PAPER if self.noir else INK
        for _ in range(140):
            y = self.rng.uniform(y0, y1)
            length = self.rng.uniform(0.2, 0.75) * (x1 - x0)
            start = self.rng.uniform(x0, x1 - length)
            width = self.rng.choice((1, 1, 2, 3))
            self.draw.line((start, y, start + length, y - length * 0.12), fill=tone, width=width)

    def focus_lines(self, *, dense: bool) -> None:
        x0, y0, x1, y1 = self.inner
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        reach = math.hypot(x1 - x0, y1 - y0) / 2
        clear = 0.42 if dense else 0.55
        tone = PAPER if self.noir else INK
        count = 220 if dense else 150
        for i in range(count):
            angle = 2 * math.pi * i / count + self.rng.uniform(-0.01, 0.01)
            inner = reach * (clear + self.rng.uniform(0, 0.2))
            a = (cx + math.cos(angle) * inner, cy + math.sin(angle) * inner)
            b = (cx + math.cos(angle) * reach * 1.1, cy + math.sin(angle) * reach * 1.1)
            spread = 0.006 * self.rng.uniform(0.5, 2.0)
            c = (
                cx + math.cos(angle + spread) * reach * 1.1,
                cy + math.sin(angle + spread) * reach * 1.1,
            )
            self.draw.polygon([a, b, c], fill=tone)

    def sparkles(self) -> None:
        x0, y0, x1, y1 = self.inner
        for _ in range(14):
            x, y, r = self.rng.uniform(x0, x1), self.rng.uniform(y0, y1), self.rng.uniform(4, 11)
            self.draw.polygon(
                [(x, y - r), (x + r / 4, y), (x, y + r), (x - r / 4, y)], fill=PAPER, outline=INK
            )
            self.draw.polygon(
                [(x - r, y), (x, y + r / 4), (x + r, y), (x, y - r / 4)], fill=PAPER, outline=INK
            )

    def rain(self) -> None:
        x0, y0, x1, y1 = self.inner
        for _ in range(160):
            x, y = self.rng.uniform(x0, x1), self.rng.uniform(y0, y1)
            self.draw.line((x, y, x - 6, y + 22), fill=200, width=1)


@dataclass(frozen=True)
class Backdrop:
    """A place's own background motif, drawn from the place alone (its description, and its
    picture when it has one): the same place looks the same in every panel set there."""

    motif: str  # windows | trees | waves | shelves | pillars | tiles
    seed: int

    KEYWORDS = (
        (("sea", "beach", "river", "lake", "harbor", "harbour", "ocean", "shore"), "waves"),
        (("forest", "park", "tree", "garden", "woods", "field"), "trees"),
        (("library", "shop", "store", "book", "classroom", "class", "café", "cafe"), "shelves"),
        (("shrine", "temple", "hall", "palace", "station", "castle"), "pillars"),
        (("room", "kitchen", "bedroom", "apartment", "house", "home", "corridor"), "tiles"),
        (("city", "street", "rooftop", "roof", "office", "building", "town", "alley"), "windows"),
    )
    MOTIFS = ("windows", "trees", "waves", "shelves", "pillars", "tiles")

    @classmethod
    def of(cls, place) -> Backdrop:
        text = place.description.casefold()
        picture = hashlib.sha256(place.reference).hexdigest() if place.reference else ""
        digest = digest_of("place", text, picture)
        motif = cls.MOTIFS[digest[0] % len(cls.MOTIFS)]
        for words, chosen in cls.KEYWORDS:
            if any(re.search(rf"\b{re.escape(w)}", text) for w in words):
                motif = chosen
                break
        return cls(motif=motif, seed=int.from_bytes(digest[1:9], "big"))

    def paint(self, canvas: Backgrounds) -> None:
        rng = random.Random(self.seed)  # the place's, not the panel's: the same each time
        stage = _Stage(canvas, rng, horizon=canvas.h * rng.uniform(0.55, 0.72))
        getattr(self, f"_{self.motif}")(stage)
        canvas.draw.line((0, stage.horizon, canvas.w, stage.horizon), fill=stage.ink, width=3)

    def _windows(self, stage: _Stage) -> None:
        cols, rows = stage.rng.randint(4, 8), stage.rng.randint(2, 4)
        cw, rh = stage.w / cols, stage.horizon / rows
        pad = min(cw, rh) * 0.18
        for c in range(cols):
            for r in range(rows):
                stage.draw.rectangle(
                    (c * cw + pad, r * rh + pad, (c + 1) * cw - pad, (r + 1) * rh - pad),
                    fill=150 if (c * 7 + r * 3 + self.seed) % 3 else 70,
                    outline=stage.ink,
                    width=2,
                )

    def _trees(self, stage: _Stage) -> None:
        count, ground = stage.rng.randint(3, 6), stage.horizon
        for i in range(count):
            x = stage.w * (i + 0.5) / count + stage.rng.uniform(-0.04, 0.04) * stage.w
            crown = stage.h * stage.rng.uniform(0.12, 0.2)
            trunk = (x - crown * 0.12, ground - crown * 1.2, x + crown * 0.12, ground)
            stage.draw.rectangle(trunk, fill=stage.ink)
            leaves = (x - crown, ground - crown * 2.6, x + crown, ground - crown * 0.9)
            stage.draw.ellipse(leaves, fill=110, outline=stage.ink, width=2)

    def _waves(self, stage: _Stage) -> None:
        stage.canvas.screentone((0, 0, stage.w, stage.horizon), 9, 1.8, fade=True)
        amplitude = stage.h * stage.rng.uniform(0.012, 0.025)
        length = stage.w / stage.rng.randint(6, 12)
        y = stage.horizon + stage.h * 0.05
        while y < stage.h:
            crest = [
                (x, y + amplitude * math.sin(x / length * 2 * math.pi))
                for x in range(0, stage.w + 8, 8)
            ]
            stage.draw.line(crest, fill=stage.ink, width=2)
            y += stage.h * stage.rng.uniform(0.05, 0.08)

    def _shelves(self, stage: _Stage) -> None:
        shelves = stage.rng.randint(3, 5)
        step = stage.horizon / shelves
        for k in range(shelves):
            base = (k + 1) * step
            stage.draw.line((0, base, stage.w, base), fill=stage.ink, width=4)
            x = stage.rng.uniform(0, 12)
            while x < stage.w:
                spine = stage.rng.uniform(0.012, 0.03) * stage.w
                top = base - step * stage.rng.uniform(0.55, 0.9)
                tone = stage.rng.choice((60, 120, 180))
                stage.draw.rectangle((x, top, x + spine, base), fill=tone, outline=stage.ink)
                x += spine + stage.rng.uniform(0, 4)

    def _pillars(self, stage: _Stage) -> None:
        count = stage.rng.randint(3, 5)
        beam = stage.h * stage.rng.uniform(0.06, 0.14)
        lintel = (0, beam - stage.h * 0.04, stage.w, beam + stage.h * 0.03)
        stage.draw.rectangle(lintel, fill=60, outline=stage.ink)
        for i in range(count):
            x = stage.w * (i + 0.5) / count
            half = stage.w * stage.rng.uniform(0.02, 0.035)
            column = (x - half, beam, x + half, stage.horizon)
            stage.draw.rectangle(column, fill=100, outline=stage.ink, width=2)

    def _tiles(self, stage: _Stage) -> None:
        wall = (0, 0, stage.w, stage.horizon)
        stage.canvas.screentone(wall, stage.rng.choice((6, 8, 10)), 1.2)
        size = stage.w / stage.rng.randint(8, 14)
        row, y = 0, stage.horizon
        while y < stage.h:
            for k, x in enumerate(range(0, stage.w, max(1, int(size)))):
                if (k + row) % 2:
                    stage.draw.rectangle((x, y, x + size, y + size * 0.5), fill=170)
            y += size * 0.5
            row += 1


class _Stage:
    """What a backdrop motif draws with: the canvas (edge to edge), the place's own random
    numbers, the horizon, and the ink of the style."""

    def __init__(self, canvas: Backgrounds, rng: random.Random, *, horizon: float):
        self.canvas, self.rng, self.horizon = canvas, rng, horizon
        self.draw, self.w, self.h = canvas.draw, canvas.w, canvas.h
        self.ink = PAPER if canvas.noir else INK
