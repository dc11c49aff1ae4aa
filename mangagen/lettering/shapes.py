"""Balloons' outlines, by style: a speech oval with a tail to the speaker, a thought's
cloud of puffs with a trail of shrinking bubbles, a shout's spiky burst whose nearest
spike is its tail, a whisper's dashed oval and tail; and the box of a caption or of
narration. Each balloon's text sits in the ellipse of its box (a burst's spikes and a
cloud's puffs stand out from it, by `reach`)."""

from __future__ import annotations

import math
import random
import zlib

from PIL import ImageDraw

from .panel import SHOUT, THOUGHT, WHISPER

INK, PAPER = (0, 0, 0), (255, 255, 255)
BURST_REACH = 1.3  # how far a shout's spikes reach past the text's ellipse
CLOUD_REACH = 1.18  # how far a thought's puffs stand out from it


def reach(style: str) -> float:
    """How far a balloon of `style` stands out from its text's ellipse (1: not at all)."""
    return BURST_REACH if style == SHOUT else CLOUD_REACH if style == THOUGHT else 1.0


class Outlines:
    """Draws balloons and boxes on one panel: its pen, its size (the bubbles of a
    thought stay inside it) and its lines' width."""

    def __init__(self, draw: ImageDraw.ImageDraw, size: tuple[int, int], line: int):
        self.draw = draw
        self.w, self.h = size
        self.line = line

    def box(self, box) -> None:
        """A caption's or narration's box."""
        self.draw.rectangle(box, fill=PAPER, outline=INK, width=self.line)

    def balloon(self, style: str, box, target, *, seed: str) -> None:
        """A balloon of `style` in `box` whose tail (or trail, or spike) aims at `target`:
        a face `(x, y, r)` it stops short of, a point `(x, y, 0)` it reaches, or None."""
        if style == SHOUT:
            self._burst(box, target, seed=seed)
        elif style == THOUGHT:
            self._cloud(box, target)
        elif style == WHISPER:
            self._dashed(box, target)
        else:
            self.draw.ellipse(box, fill=PAPER, outline=INK, width=self.line)
            if target is not None:
                self._tail(box, target)

    def _burst(self, box, target, *, seed: str) -> None:
        """A shout: an irregular spiky outline around the text's ellipse; the spike nearest
        the speaker reaches toward them as the tail."""
        x0, y0, x1, y1 = box
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        ox, oy = (x1 - x0) / 2, (y1 - y0) / 2  # the spikes' reach
        ix, iy = _inner(ox, oy, BURST_REACH)  # the valleys: the text's ellipse
        rng = random.Random(zlib.crc32(seed.encode()))
        perimeter = 2 * math.pi * math.sqrt((ox * ox + oy * oy) / 2)
        spikes = max(9, min(28, round(perimeter / max(12.0, self.line * 14))))
        points, tips = [], []
        for i in range(2 * spikes):
            a = 2 * math.pi * (i + rng.uniform(-0.25, 0.25)) / (2 * spikes)
            if i % 2 == 0:
                reach = rng.uniform(0.82, 1.0)
                tips.append(len(points))
                points.append((cx + math.cos(a) * ox * reach, cy + math.sin(a) * oy * reach))
            else:
                points.append((cx + math.cos(a) * ix, cy + math.sin(a) * iy))
        tip = _tip(box, target, ix, iy)
        if tip is not None:  # the spike pointing most toward the speaker becomes the tail
            aim = math.atan2(tip[1] - cy, tip[0] - cx)
            nearest = min(
                tips,
                key=lambda k: abs(
                    math.remainder(math.atan2(points[k][1] - cy, points[k][0] - cx) - aim, math.tau)
                ),
            )
            points[nearest] = tip
        self.draw.polygon(points, fill=PAPER)
        self.draw.line([*points, points[0]], fill=INK, width=self.line, joint="curve")

    def _cloud(self, box, target) -> None:
        """A thought: a cloud of puffs around the text's ellipse, and a trail of shrinking
        bubbles toward the thinker instead of a tail."""
        x0, y0, x1, y1 = box
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        ix, iy = _inner((x1 - x0) / 2, (y1 - y0) / 2, CLOUD_REACH)
        puff = max(4.0, (min(x1 - x0, y1 - y0) / 2 - min(ix, iy)) * 1.1)
        perimeter = 2 * math.pi * math.sqrt((ix * ix + iy * iy) / 2)
        count = max(8, round(perimeter / (puff * 1.3)))
        centres = [
            (cx + math.cos(a) * ix, cy + math.sin(a) * iy)
            for a in (2 * math.pi * k / count for k in range(count))
        ]
        for px, py in centres:  # outlines, then the insides painted over: only the rim stays
            self.draw.ellipse((px - puff, py - puff, px + puff, py + puff), fill=INK)
        inner = puff - self.line
        for px, py in centres:
            self.draw.ellipse((px - inner, py - inner, px + inner, py + inner), fill=PAPER)
        self.draw.ellipse((cx - ix, cy - iy, cx + ix, cy + iy), fill=PAPER)
        tip = _tip(box, target, ix + puff, iy + puff)
        if tip is None:
            return
        angle = math.atan2(tip[1] - cy, tip[0] - cx)
        edge = _ellipse_radius(ix + puff, iy + puff, angle)
        start = (cx + math.cos(angle) * edge, cy + math.sin(angle) * edge)
        length = math.hypot(tip[0] - start[0], tip[1] - start[1])
        radii = [min(ix, iy) * size for size in (0.3, 0.2, 0.12)]  # shrinking to the thinker
        needed = sum(2 * r for r in radii) + radii[-1] * len(radii)  # with a gap before each
        # Close by: smaller bubbles (a little past the point if need be), still three and
        # apart, and never past the panel's edge.
        dx, dy = math.cos(angle), math.sin(angle)
        room = min(
            (self.w - start[0]) / dx if dx > 1e-9 else start[0] / -dx if dx < -1e-9 else math.inf,
            (self.h - start[1]) / dy if dy > 1e-9 else start[1] / -dy if dy < -1e-9 else math.inf,
        )
        scale = min(1.0, max(0.6, length / needed), room / needed)
        radii = [max(2.0, r * scale) for r in radii]
        along = 0.0
        for r in radii:
            along += radii[-1] + r
            bx, by = start[0] + math.cos(angle) * along, start[1] + math.sin(angle) * along
            inset = r + self.line  # a bubble stays inside the panel
            bx, by = min(max(bx, inset), self.w - inset), min(max(by, inset), self.h - inset)
            self.draw.ellipse(
                (bx - r, by - r, bx + r, by + r), fill=PAPER, outline=INK, width=self.line
            )
            along += r

    def _dashed(self, box, target) -> None:
        """A whisper: the balloon's oval drawn in dashes, its tail too."""
        x0, y0, x1, y1 = box
        ax, ay = (x1 - x0) / 2, (y1 - y0) / 2
        self.draw.ellipse(box, fill=PAPER)
        perimeter = math.pi * (3 * (ax + ay) - math.sqrt((3 * ax + ay) * (ax + 3 * ay)))
        dashes = max(10, round(perimeter / max(10.0, self.line * 7)))
        span = 360 / dashes
        for k in range(dashes):
            self.draw.arc(box, k * span, k * span + span * 0.55, fill=INK, width=self.line)
        if target is None:
            return
        wedge = self._fill_wedge(box, target)
        if wedge is None:
            return
        base_a, tip, base_b = wedge
        for start in (base_a, base_b):
            length = math.hypot(tip[0] - start[0], tip[1] - start[1])
            pieces = max(2, round(length / max(6.0, self.line * 4)))
            for k in range(0, pieces, 2):
                a, b = k / pieces, min(1.0, (k + 1) / pieces)
                self.draw.line(
                    [
                        (start[0] + (tip[0] - start[0]) * a, start[1] + (tip[1] - start[1]) * a),
                        (start[0] + (tip[0] - start[0]) * b, start[1] + (tip[1] - start[1]) * b),
                    ],
                    fill=INK,
                    width=self.line,
                )

    def _tail(self, box, face) -> None:
        """A wedge from the balloon's edge toward the speaker, stopping short of the face
        (or reaching the point the person set)."""
        wedge = self._fill_wedge(box, face)
        if wedge is None:
            return  # the balloon sits on its speaker: no tail to draw
        base_a, tip, base_b = wedge
        self.draw.line([base_a, tip, base_b], fill=INK, width=self.line, joint="curve")

    def _fill_wedge(self, box, face):
        """A tail's wedge filled with paper from inside the balloon: its two corners on
        the rim and its tip, or None (nothing drawn) when no tail fits."""
        x0, y0, x1, y1 = box
        cx, cy, ax, ay = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
        tip = _tip(box, face, ax, ay)
        if tip is None:
            return None
        angle = math.atan2(tip[1] - cy, tip[0] - cx)
        edge = _ellipse_radius(ax, ay, angle)
        spread = min(0.35, (min(ax, ay) * 0.35) / max(1.0, edge))
        points = []
        for delta in (-spread, spread):
            a = angle + delta
            e = _ellipse_radius(ax, ay, a)
            points.append((cx + math.cos(a) * e, cy + math.sin(a) * e))
        inner = [(cx + (px - cx) * 0.8, cy + (py - cy) * 0.8) for px, py in points]
        self.draw.polygon([inner[0], points[0], tip, points[1], inner[1]], fill=PAPER)
        return points[0], tip, points[1]


def tail_end(style: str, box, target) -> tuple[float, float] | None:
    """Where the tail (a shout's spike, a thought's trail) of a balloon of `style` in
    `box` toward `target` (a face `(x, y, r)` or a point `(x, y, 0)`) ends, as drawn;
    None when the balloon sits on it (no tail)."""
    x0, y0, x1, y1 = box
    ax, ay = (x1 - x0) / 2, (y1 - y0) / 2
    if style == SHOUT:
        return _tip(box, target, *_inner(ax, ay, BURST_REACH))
    if style == THOUGHT:
        ix, iy = _inner(ax, ay, CLOUD_REACH)
        puff = max(4.0, (min(ax, ay) - min(ix, iy)) * 1.1)
        return _tip(box, target, ix + puff, iy + puff)
    return _tip(box, target, ax, ay)


def _tip(box, target, ax: float, ay: float) -> tuple[float, float] | None:
    """Where a tail toward `target` ends, for a balloon whose rim is the ellipse
    (ax, ay) around the box's centre: short of a face, on a point the person set;
    None when the balloon sits on it."""
    if target is None:
        return None
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    fx, fy, r = target
    distance = math.hypot(fx - cx, fy - cy)
    angle = math.atan2(fy - cy, fx - cx)
    edge = _ellipse_radius(ax, ay, angle)
    if distance <= edge:
        return None
    if r > 0:
        reach = max(distance - r * 1.25, edge + min(ax, ay) * 0.4)
        reach = min(reach, edge + max(ax, ay) * 1.2)
    else:
        reach = distance  # the point the person set
    return cx + math.cos(angle) * reach, cy + math.sin(angle) * reach


def _inner(ox: float, oy: float, reach: float) -> tuple[float, float]:
    """The text's ellipse inside a burst or cloud of half-sizes (ox, oy): what the
    balloon's `reach` added to each side of its box, taken off again."""
    extra = (reach - 1) * min(ox, oy) / reach
    return ox - extra, oy - extra


def _ellipse_radius(ax: float, ay: float, angle: float) -> float:
    c, s = math.cos(angle), math.sin(angle)
    return (ax * ay) / math.sqrt((ay * c) ** 2 + (ax * s) ** 2)
