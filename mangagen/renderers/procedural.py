"""The offline renderer: draws a real manga-style panel with Pillow.

A background chosen from the shot (screentone sky and skyline,
focus lines, speed lines); a figure for each character present, whose look
(hair, eyes, accessories) follows from their name and description (or,
once they have a reference sheet, from the sheet) so the same character looks
the same in every panel. Art only: no text is painted
(the lettering layer, mangagen.lettering, draws balloons and captions over
it), and the dialogue and caption do not change a pixel. Where it drew each
face is reported in the result's metadata (`faces`), so balloons can avoid
them and point their tails at the speaker. Same spec and seed give the same
bytes.

It also simulates a GPU provider: a cold start after `RENDER_IDLE_SECONDS`
of quiet (shared by all workers through Redis) and `RENDER_SECONDS` a render.
"""

from __future__ import annotations

import hashlib
import io
import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from django.conf import settings
from PIL import Image, ImageDraw

from mangagen.lettering.balloons import BLOCKING_X

from . import regions
from .base import (
    CharacterSpec,
    PanelSpec,
    Renderer,
    RenderResult,
    SheetSpec,
    TouchUpSpec,
    Waiting,
)
from .gpu_pool import GpuPool, Priority

INK = 0
PAPER = 255


@dataclass(frozen=True)
class Look:
    """How a character is drawn: from their sheet when they have one, else their name,
    and the description's words (hair colour, glasses…) either way.

    A redone sheet is a new look, the same one in the sheet and in every panel drawn from it.
    """

    hair: str  # spiky | long | bob | ponytail | messy
    hair_tone: int  # 0 black, 1 screentone, 2 white
    eyes: str  # round | sharp | sleepy
    glasses: bool
    scarf: bool
    hat: bool
    scar: bool
    build: float  # shoulder width factor

    @classmethod
    def of(cls, character: CharacterSpec) -> Look:
        source = f"sheet:{character.sheet}" if character.sheet else character.name.casefold()
        digest = hashlib.sha256(source.encode()).digest()
        text = character.description.casefold()
        tone = digest[1] % 3
        if any(w in text for w in ("black hair", "dark hair", "raven")):
            tone = 0
        elif any(w in text for w in ("blond", "white hair", "silver", "platinum", "grey hair")):
            tone = 2
        elif any(w in text for w in ("red hair", "brown hair", "auburn", "pink hair")):
            tone = 1
        hair = ["spiky", "long", "bob", "ponytail", "messy"][digest[0] % 5]
        for pattern, style in (
            (r"ponytail", "ponytail"),
            (r"\blong\b[^,.;]*\bhair", "long"),
            (r"\b(short|bob)\b[^,.;]*\bhair|\bbob\b", "bob"),
            (r"spiky|spiked", "spiky"),
            (r"messy|curly|wild hair", "messy"),
        ):
            if re.search(pattern, text):
                hair = style
                break
        return cls(
            hair=hair,
            hair_tone=tone,
            eyes=["round", "sharp", "sleepy"][digest[2] % 3],
            glasses="glasses" in text or "spectacles" in text,
            scarf="scarf" in text,
            hat=any(w in text for w in (" hat", "cap", "hood")) or text.startswith("hat"),
            scar="scar" in text,
            build=0.85 + (digest[3] % 5) * 0.08,
        )


class ProceduralRenderer(Renderer):
    name = "procedural"
    model = "simulated"  # the simulated GPU: its timings are the settings'
    can_touch_up = True  # it redraws a region itself (draw_touch_up)

    def __init__(
        self,
        *,
        width: int | None = None,
        height: int | None = None,
        pool: GpuPool | None = None,
        cold_start_seconds: float | None = None,
        idle_seconds: float | None = None,
        render_seconds: float | None = None,
    ):
        self.width = width or settings.RENDER_WIDTH
        self.height = height or settings.RENDER_HEIGHT
        self._pool = pool
        self.cold_start_seconds = (
            settings.RENDER_COLD_START_SECONDS if cold_start_seconds is None else cold_start_seconds
        )
        self.idle_seconds = settings.RENDER_IDLE_SECONDS if idle_seconds is None else idle_seconds
        self.render_seconds = settings.RENDER_SECONDS if render_seconds is None else render_seconds

    @property
    def pool(self) -> GpuPool:
        if self._pool is None:
            self._pool = GpuPool(
                idle_seconds=self.idle_seconds, cold_start_seconds=self.cold_start_seconds
            )
        return self._pool

    def expected_wait(self) -> float:
        """Seconds a render asked for now would wait for a booted container (for the UI)."""
        return self.pool.expected_wait()

    def panel_work(self, spec: PanelSpec, seed: int) -> tuple[Callable, int]:
        return (lambda: self.draw_with_faces(spec, seed)), seed

    def touchup_work(self, spec: TouchUpSpec, seed: int) -> tuple[Callable, int]:
        return (lambda: self.draw_touch_up(spec, seed)), seed

    def sheet_work(self, spec: SheetSpec, seed: int) -> tuple[Callable, int]:
        return (lambda: (self.draw_sheet(spec, seed), {})), seed

    def perform(self, work: tuple[Callable, int], waiting: Waiting) -> RenderResult:
        """Waits for a container of the simulated provider (and its cold start), then
        draws; the render takes `render_seconds` on the container. Raises Withdrawn."""
        draw, seed = work
        started = time.monotonic()
        with self.pool.container(
            ticket=waiting.ticket,
            priority=Priority(waiting.priority),
            cold_start_seconds=self.cold_start_seconds,
            idle_seconds=self.idle_seconds,
            while_waiting=waiting.while_waiting,
        ) as slot:
            drawn_at = time.monotonic()
            image, faces = draw()
            remaining = self.render_seconds - (time.monotonic() - drawn_at)
            if remaining > 0:
                time.sleep(remaining)
            rendered = time.monotonic() - drawn_at
        booted = max(0.0, drawn_at - started - slot.queued_seconds)
        return RenderResult(
            image=image,
            content_type="image/png",
            width=self.width,
            height=self.height,
            renderer=self.name,
            seconds=time.monotonic() - started,
            cold=slot.cold,
            metadata={
                "seed": seed,
                "phases": {
                    "queued": round(slot.queued_seconds, 3),
                    "cold_start": round(booted, 3) if slot.cold else 0.0,
                    "render": round(rendered, 3),
                },
                "provider": self.name,
                "model": self.model,
                "partial_boot": slot.joined,
                "cold_start_seconds": self.cold_start_seconds if slot.cold else 0.0,
                "queued_seconds": round(slot.queued_seconds, 3),
                "container": slot.index,
                "faces": faces,
            },
        )

    def draw(self, spec: PanelSpec, seed: int) -> bytes:
        """The image alone, with no simulated GPU time. Deterministic."""
        return self.draw_with_faces(spec, seed)[0]

    def draw_sheet(self, spec: SheetSpec, seed: int) -> bytes:
        """A character sheet: a full-body front view and three expressions. Deterministic."""
        panel = PanelSpec(
            style=spec.style, description="", shot="wide", characters=(spec.character,)
        )
        canvas = SheetCanvas(self.width, self.height, panel, random.Random(seed))
        canvas.paint()
        buffer = io.BytesIO()
        canvas.image.save(buffer, format="PNG", optimize=False)
        return buffer.getvalue()

    def draw_touch_up(self, spec: TouchUpSpec, seed: int) -> tuple[bytes, dict]:
        """A touch-up's whole picture, at the original's size: the panel drawn again with
        the touch-up's seed and words, and the region hatched in a pattern drawn from
        them (so what was redrawn shows, offline too). Like a provider's, it changes
        pixels outside the region as well: the caller composites it into the original.
        Deterministic."""
        drawn, faces = self.draw_with_faces(replace(spec.panel, description=spec.prompt), seed)
        width, height = regions.size_of(spec.image)
        image = Image.open(io.BytesIO(drawn)).convert("L")
        if image.size != (width, height):
            image = image.resize((width, height), Image.Resampling.LANCZOS)
        x, y, w, h = regions.bounds(spec.mask)
        box = (x * width, y * height, (x + w) * width, (y + h) * height)
        rng = random.Random(f"{seed}:{spec.prompt}")
        step, tone = rng.randint(5, 11), rng.choice((INK, 96, 160))
        pen = ImageDraw.Draw(image)
        for offset in range(-int(box[3] - box[1]), int(box[2] - box[0]), step):
            pen.line(
                (box[0] + offset, box[3], box[0] + offset + (box[3] - box[1]), box[1]),
                fill=tone,
                width=2,
            )
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", optimize=False)
        return buffer.getvalue(), faces

    def draw_with_faces(self, spec: PanelSpec, seed: int) -> tuple[bytes, dict]:
        """The image and where each face is: name -> [x/width, y/height, radius/height]."""
        canvas = Canvas(self.width, self.height, spec, random.Random(seed))
        canvas.paint()
        buffer = io.BytesIO()
        canvas.image.save(buffer, format="PNG", optimize=False)
        faces = {
            name: [round(x / self.width, 4), round(y / self.height, 4), round(r / self.height, 4)]
            for name, (x, y, r) in canvas.heads.items()
        }
        return buffer.getvalue(), faces


class Canvas:
    def __init__(self, width: int, height: int, spec: PanelSpec, rng: random.Random):
        self.w, self.h, self.spec, self.rng = width, height, spec, rng
        self.image = Image.new("L", (width, height), PAPER)
        self.draw = ImageDraw.Draw(self.image)
        # Edge to edge: the frame, like the lettering, is drawn where the panel is
        # composed (a page's borders and gutters), not baked into the art.
        self.inner = (0, 0, width, height)
        self.noir = spec.style == "noir"
        self.heads: dict[str, tuple[float, float, float]] = {}  # name -> (x, y, radius)

    # --- composition --------------------------------------------------------------

    def paint(self) -> None:
        self.background()
        self.figures()

    # --- backgrounds ------------------------------------------------------------------

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

    # --- figures -----------------------------------------------------------------------

    def figures(self) -> None:
        cast = list(self.spec.characters)[:5]
        if not cast:
            return
        x0, y0, x1, y1 = self.inner
        shot, n = self.spec.shot, len(cast)
        chibi = self.spec.style == "chibi"
        slots = placements(cast)
        for i, character in enumerate(cast):
            look = Look.of(character)
            cx = x0 + (x1 - x0) * slots[i]
            if shot == "extreme-close-up" and i == 0:
                self.eyes_band(look, character)
                continue
            if shot == "extreme-close-up":
                continue
            if shot == "close-up":
                r = (y1 - y0) * (0.3 if i == 0 else 0.16)
                if not character.position:
                    cx = x0 + (x1 - x0) * (0.5 if n == 1 else (0.4 if i == 0 else 0.78))
                cy = y1 - r * 0.9
                self.bust(cx, cy, r, look, character)
            elif shot in ("wide", "establishing"):
                height = (y1 - y0) * 0.5
                self.full_body(cx, y0 + (y1 - y0) * 0.93, height, look, character, chibi, 0)
            elif shot == "action":
                height = (y1 - y0) * 0.7
                lean = -0.35 if i % 2 == 0 else 0.3
                self.full_body(cx, y1 - 6, height, look, character, chibi, lean)
            else:  # medium
                r = (y1 - y0) * (0.15 if n < 3 else 0.11)
                cy = y1 - r * 2.2
                self.bust(cx, cy, r, look, character)

    def bust(self, cx, cy, r, look: Look, character: CharacterSpec) -> None:
        y1 = self.inner[3]
        shoulders = r * 1.7 * look.build
        self.draw.rounded_rectangle(
            (cx - shoulders, cy + r * 0.8, cx + shoulders, y1 + r),
            radius=int(r * 0.6),
            fill=PAPER,
            outline=INK,
            width=3,
        )
        self.draw.line((cx, cy + r * 1.0, cx, min(y1, cy + r * 2.2)), fill=INK, width=2)
        if character.outfit:
            Outfit.of(character.outfit).on_bust(self, cx, cy, r, shoulders)
        if look.scarf:
            self.draw.rounded_rectangle(
                (cx - r * 0.9, cy + r * 0.75, cx + r * 0.9, cy + r * 1.15), radius=8, fill=90
            )
        self.head(cx, cy, r, look, character)

    def full_body(self, cx, feet_y, height, look, character, chibi: bool, lean: float) -> None:
        head_r = height * (0.2 if chibi else 0.11)
        hip_y = feet_y - height * 0.42
        neck_y = feet_y - height + head_r * 2
        hip_x = cx + lean * height * 0.15
        neck_x = cx + lean * height * 0.35
        w = 3
        self.draw.line((neck_x, neck_y, hip_x, hip_y), fill=INK, width=w + 3)  # torso
        if character.outfit:
            Outfit.of(character.outfit).on_body(self, (neck_x, neck_y), (hip_x, hip_y), height)
        stride = height * 0.16
        self.draw.line((hip_x, hip_y, cx - stride, feet_y), fill=INK, width=w + 1)
        self.draw.line((hip_x, hip_y, cx + stride, feet_y), fill=INK, width=w + 1)
        arm_y = neck_y + height * 0.08
        swing = height * (0.28 if lean else 0.16)
        self.draw.line((neck_x, arm_y, neck_x - swing, arm_y + height * 0.2), fill=INK, width=w)
        self.draw.line(
            (neck_x, arm_y, neck_x + swing, arm_y + height * (0.05 if lean else 0.2)),
            fill=INK,
            width=w,
        )
        if look.scarf:
            self.draw.line(
                (neck_x, neck_y, neck_x - height * 0.25, neck_y + height * 0.05), fill=90, width=7
            )
        self.head(neck_x, neck_y - head_r * 0.9, head_r, look, character)

    def head(self, cx, cy, r, look: Look, character: CharacterSpec) -> None:
        self.heads[character.name] = (cx, cy, r)
        hair_fill = {0: INK, 1: 110, 2: PAPER}[look.hair_tone]
        if look.hair in ("long", "ponytail"):  # hair behind the head
            back = (
                cx - r * 1.1,
                cy - r * 1.05,
                cx + r * 1.1,
                cy + r * (1.6 if look.hair == "long" else 0.6),
            )
            self.draw.rounded_rectangle(
                back, radius=int(r * 0.9), fill=hair_fill, outline=INK, width=2
            )
            if look.hair == "ponytail":
                self.draw.ellipse(
                    (cx + r * 0.8, cy - r * 0.6, cx + r * 1.6, cy + r * 0.9),
                    fill=hair_fill,
                    outline=INK,
                    width=2,
                )
        self.draw.ellipse(
            (cx - r * 0.85, cy - r, cx + r * 0.85, cy + r), fill=PAPER, outline=INK, width=3
        )
        self.hair(cx, cy, r, look, hair_fill)
        self.face(cx, cy, r, look, character)
        if look.hat:
            self.draw.chord(
                (cx - r * 1.0, cy - r * 1.35, cx + r * 1.0, cy - r * 0.05),
                180,
                360,
                fill=60,
                outline=INK,
                width=2,
            )
            self.draw.line(
                (cx - r * 1.2, cy - r * 0.7, cx + r * 1.2, cy - r * 0.7), fill=INK, width=4
            )

    def hair(self, cx, cy, r, look: Look, fill: int) -> None:
        top = cy - r * 1.05
        if look.hair == "spiky":
            points = [(cx - r * 0.95, cy - r * 0.1)]
            for k in range(7):
                t = k / 6
                x = cx - r * 0.95 + t * r * 1.9
                points.append((x - r * 0.15, top - r * (0.35 + 0.1 * ((k * 7) % 3))))
                points.append((x + r * 0.12, top + r * 0.35))
            points.append((cx + r * 0.95, cy - r * 0.1))
            self.draw.polygon(points, fill=fill, outline=INK)
        elif look.hair == "messy":
            for k in range(9):
                a = math.pi + k * math.pi / 8
                self.draw.ellipse(
                    (
                        cx + math.cos(a) * r * 0.8 - r * 0.35,
                        cy + math.sin(a) * r * 0.8 - r * 0.3 - r * 0.15,
                        cx + math.cos(a) * r * 0.8 + r * 0.35,
                        cy + math.sin(a) * r * 0.8 + r * 0.3 - r * 0.15,
                    ),
                    fill=fill,
                    outline=INK,
                )
        else:  # bob, long, ponytail: a cap of hair with a fringe
            self.draw.chord(
                (cx - r * 0.95, top, cx + r * 0.95, cy + r * 0.5),
                180,
                360,
                fill=fill,
                outline=INK,
                width=2,
            )
            self.draw.polygon(
                [
                    (cx - r * 0.9, cy - r * 0.2),
                    (cx - r * 0.3, cy - r * 0.55),
                    (cx + r * 0.1, cy - r * 0.2),
                    (cx + r * 0.5, cy - r * 0.55),
                    (cx + r * 0.9, cy - r * 0.2),
                    (cx + r * 0.9, cy - r * 0.45),
                    (cx - r * 0.9, cy - r * 0.45),
                ],
                fill=fill,
            )
            if look.hair == "bob":
                for side in (-1, 1):
                    self.draw.rectangle(
                        sorted_box(
                            cx + side * r * 0.95, cy - r * 0.3, cx + side * r * 0.7, cy + r * 0.55
                        ),
                        fill=fill,
                        outline=INK,
                    )

    def face(self, cx, cy, r, look: Look, character: CharacterSpec) -> None:
        eye_y = cy + r * 0.1
        # Art only: the mouth follows the shot, never the dialogue (lettering is a layer above).
        speaking = self.spec.shot in ("action", "close-up")
        for side in (-1, 1):
            ex = cx + side * r * 0.38
            if look.eyes == "round":
                self.draw.ellipse(
                    (ex - r * 0.16, eye_y - r * 0.22, ex + r * 0.16, eye_y + r * 0.18), fill=INK
                )
                self.draw.ellipse(
                    (ex - r * 0.07, eye_y - r * 0.14, ex, eye_y - r * 0.06), fill=PAPER
                )
            elif look.eyes == "sharp":
                self.draw.polygon(
                    [
                        (ex - r * 0.2, eye_y),
                        (ex + r * 0.2, eye_y - r * 0.1 * side),
                        (ex + r * 0.12, eye_y + r * 0.1),
                    ],
                    fill=INK,
                )
            else:
                self.draw.arc(
                    (ex - r * 0.18, eye_y - r * 0.12, ex + r * 0.18, eye_y + r * 0.12),
                    0,
                    180,
                    fill=INK,
                    width=3,
                )
            if look.glasses:
                self.draw.ellipse(
                    (ex - r * 0.26, eye_y - r * 0.26, ex + r * 0.26, eye_y + r * 0.22),
                    outline=INK,
                    width=2,
                )
        if look.glasses:
            self.draw.line((cx - r * 0.12, eye_y, cx + r * 0.12, eye_y), fill=INK, width=2)
        self.draw.line((cx, eye_y + r * 0.22, cx - r * 0.06, eye_y + r * 0.35), fill=INK, width=2)
        mouth_y = cy + r * 0.62
        if speaking:
            self.draw.ellipse(
                (cx - r * 0.14, mouth_y - r * 0.08, cx + r * 0.14, mouth_y + r * 0.14), fill=INK
            )
        else:
            self.draw.line((cx - r * 0.14, mouth_y, cx + r * 0.14, mouth_y), fill=INK, width=2)
        if look.scar:
            self.draw.line(
                (cx + r * 0.45, cy - r * 0.2, cx + r * 0.25, cy + r * 0.45), fill=INK, width=2
            )

    def eyes_band(self, look: Look, character: CharacterSpec) -> None:
        x0, y0, x1, y1 = self.inner
        cy, w = (y0 + y1) / 2, (x1 - x0)
        self.draw.rectangle((x0, cy - (y1 - y0) * 0.22, x1, cy + (y1 - y0) * 0.22), fill=PAPER)
        for side in (-1, 1):
            ex = (x0 + x1) / 2 + side * w * 0.22
            self.draw.ellipse(
                (ex - w * 0.12, cy - w * 0.07, ex + w * 0.12, cy + w * 0.07),
                fill=PAPER,
                outline=INK,
                width=5,
            )
            self.draw.ellipse(
                (ex - w * 0.05, cy - w * 0.06, ex + w * 0.05, cy + w * 0.06), fill=INK
            )
            self.draw.ellipse(
                (ex - w * 0.03, cy - w * 0.045, ex - w * 0.005, cy - w * 0.02), fill=PAPER
            )
            brow = -0.1 if look.eyes == "sharp" else 0.0
            self.draw.line(
                (
                    ex - w * 0.13,
                    cy - w * (0.1 - brow * side),
                    ex + w * 0.13,
                    cy - w * (0.1 + brow * side),
                ),
                fill=INK,
                width=8,
            )
        self.heads[character.name] = ((x0 + x1) / 2, cy, w * 0.1)


def sorted_box(x0, y0, x1, y1):
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


# Where the blocking puts a character, as a fraction of the panel's width: where the
# lettering points a balloon's tail when a renderer reports no faces.
STANDS = BLOCKING_X


def placements(cast: list[CharacterSpec]) -> list[float]:
    """Each figure's centre as a fraction of the width: where the blocking puts it, and the
    others evenly in the room left; two placed in one spot stand side by side there."""
    n = len(cast)
    free = [(i + 1) / (n + 1) for i in range(n)]
    spots = []
    crowd: dict[str, int] = {}
    for i, character in enumerate(cast):
        if character.position in STANDS:
            k = crowd.get(character.position, 0)
            crowd[character.position] = k + 1
            spots.append(STANDS[character.position] + (0.15 if k % 2 else -0.15) * ((k + 1) // 2))
        else:
            spots.append(free[i])
    return [min(0.92, max(0.08, x)) for x in spots]


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x1f".join(parts).encode()).digest()


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
        digest = _digest("outfit", text)
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

    def on_bust(self, canvas: Canvas, cx, cy, r, shoulders) -> None:
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

    def on_body(self, canvas: Canvas, neck, hip, height) -> None:
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

    def _pattern(self, canvas: Canvas, box, *, step: int, clip=None) -> None:
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
        digest = _digest("place", text, picture)
        motif = cls.MOTIFS[digest[0] % len(cls.MOTIFS)]
        for words, chosen in cls.KEYWORDS:
            if any(re.search(rf"\b{re.escape(w)}", text) for w in words):
                motif = chosen
                break
        return cls(motif=motif, seed=int.from_bytes(digest[1:9], "big"))

    def paint(self, canvas: Canvas) -> None:
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

    def __init__(self, canvas: Canvas, rng: random.Random, *, horizon: float):
        self.canvas, self.rng, self.horizon = canvas, rng, horizon
        self.draw, self.w, self.h = canvas.draw, canvas.w, canvas.h
        self.ink = PAPER if canvas.noir else INK


class SheetCanvas(Canvas):
    """A reference sheet on plain paper: the figure on the left, three expressions beside it."""

    EXPRESSIONS = ("neutral", "smiling", "angry")

    def paint(self) -> None:
        character = self.spec.characters[0]
        look = Look.of(character)
        chibi = self.spec.style == "chibi"
        self.expression = "neutral"
        self.full_body(self.w * 0.18, self.h * 0.95, self.h * 0.85, look, character, chibi, 0)
        self.draw.line((self.w * 0.36, self.h * 0.06, self.w * 0.36, self.h * 0.94), fill=150)
        r = min(self.h * 0.2, self.w * 0.08)
        for i, expression in enumerate(self.EXPRESSIONS):
            self.expression = expression
            self.head(self.w * (0.47 + i * 0.2), self.h * 0.45, r, look, character)

    def face(self, cx, cy, r, look: Look, character: CharacterSpec) -> None:
        super().face(cx, cy, r, look, character)
        mouth_y = cy + r * 0.62
        if self.expression == "smiling":
            self.draw.line((cx - r * 0.14, mouth_y, cx + r * 0.14, mouth_y), fill=PAPER, width=3)
            self.draw.arc(
                (cx - r * 0.2, mouth_y - r * 0.15, cx + r * 0.2, mouth_y + r * 0.12),
                0,
                180,
                fill=INK,
                width=3,
            )
        elif self.expression == "angry":
            for side in (-1, 1):
                ex = cx + side * r * 0.38
                self.draw.line(
                    (ex - side * r * 0.2, cy - r * 0.22, ex + side * r * 0.18, cy - r * 0.08),
                    fill=INK,
                    width=4,
                )
