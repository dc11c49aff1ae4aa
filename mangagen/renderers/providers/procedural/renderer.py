"""The procedural renderer: a panel's or a sheet's canvas drawn to PNG bytes, behind
a simulated GPU provider's pool."""

from __future__ import annotations

import io
import random
import time
from collections.abc import Callable
from dataclasses import replace

from django.conf import settings
from PIL import Image, ImageDraw

from ... import masks
from ...base import (
    CharacterSpec,
    PanelSpec,
    Renderer,
    RenderResult,
    SheetSpec,
    TouchUpSpec,
    Waiting,
)
from ...gpu_pool import GpuPool, Priority
from .backdrops import Backgrounds
from .figures import Figures, Look
from .surface import INK, PAPER


class Canvas(Backgrounds, Figures):
    """A panel: its background, then its figures."""

    # --- composition --------------------------------------------------------------

    def paint(self) -> None:
        self.background()
        self.figures()


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


class ProceduralRenderer(Renderer):
    name = "procedural"
    model = "simulated"  # the simulated GPU: its timings are the settings'
    can_touch_up = True  # it redraws a region itself (draw_touch_up)
    touch_up_follows_words = False  # with shapes of its own, whatever words were typed

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
        width, height = masks.size_of(spec.image)
        image = Image.open(io.BytesIO(drawn)).convert("L")
        if image.size != (width, height):
            image = image.resize((width, height), Image.Resampling.LANCZOS)
        x, y, w, h = masks.bounds(spec.mask)
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
