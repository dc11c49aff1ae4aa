"""Outfits: how what a character wears changes their figure, the same in every panel."""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image, ImageDraw

from .surface import INK, PAPER, Surface, digest_of


@dataclass(frozen=True)
class Outfit:
    """How an outfit changes a figure: its tone and pattern, a coat's long hem or a skirt.
    From the outfit's description alone, so it is the same in every panel."""

    tone: int
    pattern: str  # plain | stripes | dots | check
    hem: str  # none | coat | skirt
    collar: bool

    @classmethod
    def of(cls, description: str) -> Outfit:
        text = description.casefold()
        digest = digest_of("outfit", text)
        hem = "none"
        if any(w in text for w in ("coat", "cloak", "robe", "kimono", "trench")):
            hem = "coat"
        elif any(w in text for w in ("dress", "skirt", "gown")):
            hem = "skirt"
        return cls(
            tone=(40, 90, 140, 190)[digest[0] % 4],
            pattern=("plain", "stripes", "dots", "check")[digest[1] % 4],
            hem=hem,
            collar="uniform" in text or "suit" in text or bool(digest[2] % 2),
        )

    def on_bust(self, canvas: Surface, cx, cy, r, shoulders) -> None:
        box = (cx - shoulders, cy + r * 0.8, cx + shoulders, canvas.inner[3] + r)
        canvas.draw.rounded_rectangle(
            box, radius=int(r * 0.6), fill=self.tone, outline=INK, width=3
        )
        self._pattern(canvas, box, step=max(6, int(r * 0.35)))
        if self.collar:
            canvas.draw.polygon(
                [(cx - r * 0.5, cy + r * 0.85), (cx, cy + r * 1.5), (cx + r * 0.5, cy + r * 0.85)],
                fill=PAPER,
                outline=INK,
            )

    def on_body(self, canvas: Surface, neck, hip, height) -> None:
        (nx, ny), (hx, hy) = neck, hip
        half = height * 0.09
        bottom = hy + height * (0.25 if self.hem == "coat" else 0.0)
        flare = half * (1.8 if self.hem in ("coat", "skirt") else 1.0)
        if self.hem == "skirt":
            bottom = hy + height * 0.18
        body = [(nx - half, ny), (nx + half, ny), (hx + flare, bottom), (hx - flare, bottom)]
        canvas.draw.polygon(body, fill=self.tone, outline=INK)
        xs, ys = [p[0] for p in body], [p[1] for p in body]
        self._pattern(
            canvas, (min(xs), min(ys), max(xs), max(ys)), step=max(5, int(height * 0.04)), clip=body
        )
        if self.collar:
            canvas.draw.line(
                (nx - half, ny, nx, ny + half * 1.2, nx + half, ny), fill=PAPER, width=3
            )

    def _pattern(self, canvas: Surface, box, *, step: int, clip=None) -> None:
        if self.pattern == "plain":
            return
        x0, y0, x1, y1 = box
        mark = PAPER if self.tone < 120 else INK
        layer = Image.new("L", canvas.image.size, 0)
        pen = ImageDraw.Draw(layer)
        for y in range(int(y0), int(y1), step):
            if self.pattern == "stripes":
                pen.line((x0, y, x1, y), fill=255, width=max(1, step // 4))
            for x in range(int(x0), int(x1), step):
                if self.pattern == "dots":
                    pen.ellipse((x, y, x + step / 3, y + step / 3), fill=255)
                elif self.pattern == "check" and (x // step + y // step) % 2:
                    pen.rectangle((x, y, x + step / 2, y + step / 2), fill=255)
        mask = Image.new("L", canvas.image.size, 0)
        shape = ImageDraw.Draw(mask)
        if clip:
            shape.polygon(clip, fill=255)
        else:
            shape.rounded_rectangle(box, radius=6, fill=255)
        canvas.image.paste(mark, (0, 0), Image.composite(layer, mask.point(lambda _: 0), mask))
