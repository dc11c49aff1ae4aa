"""The procedural renderer: a panel's or a sheet's canvas drawn to PNG bytes, behind
a simulated GPU provider's pool."""

from __future__ import annotations

import io
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from django.conf import settings
from PIL import Image, ImageDraw

from ... import masks
from ...base import (
    CharacterSpec,
    FromRoughSpec,
    PanelSpec,
    Renderer,
    RenderResult,
    SheetSpec,
    TouchUpSpec,
    Waiting,
    sized,
)
from ...gpu_pool import GpuPool, Priority
from .backdrops import Backgrounds
from .figures import Figures, Look
from .sketch import pencil
from .surface import INK, PAPER

# A rough is drawn at this fraction of the final's width and height: a draft model's
# small picture, enough for the rough pages.
ROUGH_SCALE = 0.5


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


@dataclass(frozen=True)
class Drawing:
    """One piece of work on the simulated GPU: what draws it (the picture and its faces),
    its seed, and how long it takes on a container."""

    draw: Callable[[], tuple[bytes, dict]]
    seed: int
    seconds: float
    from_rough: bool = False
    draft: bool = False  # a rough: what its draft model drew (learned apart from finals)


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
        rough_seconds: float | None = None,
    ):
        self.width = width or settings.RENDER_WIDTH
        self.height = height or settings.RENDER_HEIGHT
        self._pool = pool
        self.cold_start_seconds = (
            settings.RENDER_COLD_START_SECONDS if cold_start_seconds is None else cold_start_seconds
        )
        self.idle_seconds = settings.RENDER_IDLE_SECONDS if idle_seconds is None else idle_seconds
        self.render_seconds = settings.RENDER_SECONDS if render_seconds is None else render_seconds
        self.rough_seconds = settings.ROUGH_SECONDS if rough_seconds is None else rough_seconds

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

    def panel_work(self, spec: PanelSpec, seed: int) -> Drawing:
        return Drawing(lambda: self.draw_with_faces(spec, seed), seed, self.render_seconds)

    def touchup_work(self, spec: TouchUpSpec, seed: int) -> Drawing:
        return Drawing(lambda: self.draw_touch_up(spec, seed), seed, self.render_seconds)

    def sheet_work(self, spec: SheetSpec, seed: int) -> Drawing:
        return Drawing(lambda: (self.draw_sheet(spec, seed), {}), seed, self.render_seconds)

    def rough_work(self, spec: PanelSpec, seed: int) -> Drawing:
        """Its draft model: the final's composition as a pencil sketch, half its size, in
        `rough_seconds` (ROUGH_SECONDS)."""
        return Drawing(lambda: self.draw_rough(spec, seed), seed, self.rough_seconds, draft=True)

    def from_rough_work(self, spec: FromRoughSpec, seed: int) -> Drawing:
        """A final from its rough: the rough was drawn from this very spec and seed, so
        drawing them again keeps every figure where the rough put it."""
        panel = spec.panel
        return Drawing(
            lambda: self.draw_with_faces(panel, seed), seed, self.render_seconds, from_rough=True
        )

    def perform(self, work: Drawing, waiting: Waiting) -> RenderResult:
        """Waits for a container of the simulated provider (and its cold start), then
        draws; the render takes the work's seconds (`render_seconds`, or `rough_seconds`
        for a rough) on the container. Raises Withdrawn."""
        draw, seed = work.draw, work.seed
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
            remaining = work.seconds - (time.monotonic() - drawn_at)
            if remaining > 0:
                time.sleep(remaining)
            rendered = time.monotonic() - drawn_at
        booted = max(0.0, drawn_at - started - slot.queued_seconds)
        width, height = _size_of(image) or (self.width, self.height)
        return RenderResult(
            image=image,
            content_type="image/png",
            width=width,
            height=height,
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
                "model": f"{self.model}-draft" if work.draft else self.model,
                "partial_boot": slot.joined,
                "cold_start_seconds": self.cold_start_seconds if slot.cold else 0.0,
                "queued_seconds": round(slot.queued_seconds, 3),
                "container": slot.index,
                "faces": faces,
                "from_rough": work.from_rough,
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

    def draw_rough(self, spec: PanelSpec, seed: int) -> tuple[bytes, dict]:
        """A rough: the final `draw_with_faces` would draw from `spec` and `seed`, drawn
        at ROUGH_SCALE of its size and sketched in pencil; the faces where the final's
        are. Deterministic."""
        width, height = sized(spec.aspect, self.width, self.height)
        small = (max(64, round(width * ROUGH_SCALE)), max(64, round(height * ROUGH_SCALE)))
        drawn, faces = self.draw_with_faces(spec, seed, size=(width, height), sketching=True)
        return pencil(drawn, small), faces

    def draw_with_faces(
        self,
        spec: PanelSpec,
        seed: int,
        *,
        size: tuple[int, int] | None = None,
        sketching: bool = False,
    ) -> tuple[bytes, dict]:
        """The image and where each face is: name -> [x/width, y/height, radius/height].
        At the renderer's size reshaped to the spec's `aspect` (the page cell's), or
        `size`. The seed frames the shot (where the figures stand, how close), as an
        image model's seed decides its composition. `sketching`: a rough's, without
        screentones."""
        width, height = size or sized(spec.aspect, self.width, self.height)
        canvas = Canvas(width, height, spec, random.Random(seed))
        canvas.frame(seed)
        canvas.sketching = sketching
        canvas.paint()
        buffer = io.BytesIO()
        canvas.image.save(buffer, format="PNG", optimize=False)
        faces = {
            name: [round(x / width, 4), round(y / height, 4), round(r / height, 4)]
            for name, (x, y, r) in canvas.heads.items()
        }
        return buffer.getvalue(), faces


def _size_of(png: bytes) -> tuple[int, int] | None:
    """The picture's size; None for bytes that are no picture (a caller's to refuse)."""
    try:
        with Image.open(io.BytesIO(png)) as image:
            return image.size
    except (OSError, ValueError):
        return None
