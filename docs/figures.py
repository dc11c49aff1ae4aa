"""Draws docs/procedural-panels.png: procedural renders (art only) above the same panels lettered.

Run from the repository root: `DEBUG=1 .venv/bin/python docs/figures.py`.
Offline and deterministic (no database, no simulated GPU time).
"""

import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangagen.settings")

import django  # noqa: E402

django.setup()

from PIL import Image, ImageDraw  # noqa: E402

from mangagen.lettering import Letterable, letter, title_font  # noqa: E402
from mangagen.lettering.languages import guess  # noqa: E402
from mangagen.renderers import CharacterSpec, PanelSpec  # noqa: E402
from mangagen.renderers.providers.procedural import ProceduralRenderer  # noqa: E402

AIKO = CharacterSpec("Aiko", "long black hair, red scarf")
KENJI = CharacterSpec("Kenji", "spiky hair, glasses")
PANELS = [
    ("establishing", "manga", (), [], "Neo-Kyoto, 2 a.m. The last train is gone."),
    (
        "medium",
        "manga",
        (AIKO, KENJI),
        [("Aiko", "They're right behind us!"), ("Kenji", "Then we jump.")],
        "",
    ),
    ("close-up", "shoujo", (AIKO,), [("Aiko", "待って！一緒に行く")], ""),
    ("action", "shonen", (KENJI,), [("Kenji", "NOW!")], ""),
]


def main() -> None:
    renderer = ProceduralRenderer(width=512, height=362, pool=object(), render_seconds=0)
    arts, lettered = [], []
    for shot, style, cast, lines, caption in PANELS:
        spec = PanelSpec(style=style, description="", shot=shot, characters=cast)
        png, faces = renderer.draw_with_faces(spec, 7)
        art = Image.open(io.BytesIO(png)).convert("RGB")
        arts.append(art)
        panel = Letterable.of(
            dialogue=[{"speaker": s, "text": t} for s, t in lines],
            caption=caption,
            shot=shot,
            characters=[c.name for c in cast],
            faces=faces,
            language=guess(" ".join(text for _, text in lines)),  # the Japanese line: vertical
        )
        lettered.append(letter(art, panel=panel, direction="rtl"))
    gap, label_h = 16, 56
    width = len(arts) * (512 + gap) + gap
    height = 2 * (362 + label_h) + gap
    sheet = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(sheet)
    for row, (images, label) in enumerate(
        [(arts, "The render: art only"), (lettered, "Composed: lettering drawn over it")]
    ):
        top = row * (362 + label_h)
        draw.text((gap, top + label_h / 2), label, font=title_font(30), fill="black", anchor="lm")
        for i, image in enumerate(images):
            x, y = gap + i * (512 + gap), top + label_h
            sheet.paste(image, (x, y))
            draw.rectangle((x, y, x + 511, y + 361), outline="black", width=4)
    out = ROOT / "docs" / "procedural-panels.png"
    sheet.save(out, optimize=True)
    print(f"wrote {out.relative_to(ROOT)} ({sheet.width}×{sheet.height})")


if __name__ == "__main__":
    main()
