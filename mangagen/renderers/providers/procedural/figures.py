"""Figures and faces: a character's look, where the blocking stands each one, and how a
figure is drawn (a bust, a full body, a head, its hair, its face, a close-up's eyes)."""

from __future__ import annotations

import hashlib
import math
import random
import re
from dataclasses import dataclass

from mangagen.lettering.panel import BLOCKING_X

from ...base import CharacterSpec
from .outfits import Outfit
from .surface import INK, PAPER, Surface


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


class Figures(Surface):
    """The figures of a canvas: one for each character present (at most five), where the
    panel's blocking and the shot's framing (`frame`) put them."""

    # The framing: the figures moved sideways by `shift` (a fraction of the width) and
    # scaled by `zoom`; none until `frame` chooses them from the seed.
    shift = 0.0
    zoom = 1.0

    def frame(self, seed: int) -> None:
        """Frames the shot from `seed`, as an image model's seed decides a composition:
        the camera a little to one side, a little closer or farther. Small enough that
        a figure the blocking puts in a third of the frame stays in it."""
        camera = random.Random(f"frame:{seed}")
        self.shift = camera.uniform(-0.075, 0.075)
        self.zoom = camera.uniform(0.85, 1.12)

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
            cx = x0 + (x1 - x0) * min(0.95, max(0.05, slots[i] + self.shift))
            if shot == "extreme-close-up" and i == 0:
                self.eyes_band(look, character)
                continue
            if shot == "extreme-close-up":
                continue
            if shot == "close-up":
                r = (y1 - y0) * (0.3 if i == 0 else 0.16) * self.zoom
                if not character.position:
                    spot = 0.5 if n == 1 else (0.4 if i == 0 else 0.78)
                    cx = x0 + (x1 - x0) * min(0.95, max(0.05, spot + self.shift))
                cy = y1 - r * 0.9
                self.bust(cx, cy, r, look, character)
            elif shot in ("wide", "establishing"):
                height = (y1 - y0) * 0.5 * self.zoom
                self.full_body(cx, y0 + (y1 - y0) * 0.93, height, look, character, chibi, 0)
            elif shot == "action":
                height = (y1 - y0) * 0.7 * min(1.0, self.zoom)
                lean = -0.35 if i % 2 == 0 else 0.3
                self.full_body(cx, y1 - 6, height, look, character, chibi, lean)
            else:  # medium
                r = (y1 - y0) * (0.15 if n < 3 else 0.11) * self.zoom
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
