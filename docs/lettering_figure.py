"""Draws docs/lettering-styles.png: each balloon style in both writing directions, with a
placed tail and a sound effect, over procedural art.

Run from the repository root: `DEBUG=1 .venv/bin/python docs/lettering_figure.py`.
Offline and deterministic. The shapes are checked from the pixels by
mangagen/lettering/tests/test_lettering_styles.py.
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
from mangagen.renderers import CharacterSpec, PanelSpec  # noqa: E402
from mangagen.renderers.providers.procedural import ProceduralRenderer  # noqa: E402

AIKO = CharacterSpec("Aiko", "long black hair, red scarf")
STYLES = ["speech", "thought", "shout", "whisper"]
LINES = {
    "en": {
        "speech": "The last train left without us.",
        "thought": "She never waits for anyone.",
        "shout": "Get down, now!",
        "whisper": "Don't tell the others.",
    },
    "ja": {
        "speech": "終電、行っちゃった。",
        "thought": "誰も待たないんだ。",
        "shout": "伏せて！",
        "whisper": "内緒だよ。",
    },
}
SFX = {"en": ["BOOM", "rustle", "KRAK", "shh"], "ja": ["ゴゴゴ", "ザワ", "ドン", "シーン"]}


def main() -> None:
    renderer = ProceduralRenderer(width=512, height=362, pool=object(), render_seconds=0)
    spec = PanelSpec(style="manga", description="", shot="medium", characters=(AIKO,))
    png, faces = renderer.draw_with_faces(spec, 7)
    art = Image.open(io.BytesIO(png)).convert("RGB")
    gap, label_w, head = 16, 60, 48
    width = label_w + len(STYLES) * (512 + gap) + gap
    height = head + 2 * (362 + gap) + gap
    sheet = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(sheet)
    for column, style in enumerate(STYLES):
        x = label_w + gap + column * (512 + gap)
        draw.text((x + 256, head / 2), style, font=title_font(30), fill="black", anchor="mm")
    for row, language in enumerate(["en", "ja"]):
        y = head + gap + row * (362 + gap)
        draw.text((label_w / 2, y + 181), language, font=title_font(30), fill="black", anchor="mm")
        for column, style in enumerate(STYLES):
            line = {
                "speaker": "Aiko",
                "text": LINES[language][style],
                "style": style,
                "place": {"x": 0.26, "y": 0.28, "tail": {"x": 0.42, "y": 0.42}},
            }
            effect = {"text": SFX[language][column], "x": 0.8, "y": 0.25, "size": 0.16}
            panel = Letterable.of(
                dialogue=[line],
                caption="",
                shot="medium",
                characters=["Aiko"],
                faces=faces,
                language=language,
                sfx=[effect | {"angle": 10 if language == "en" else 0}],
            )
            x = label_w + gap + column * (512 + gap)
            sheet.paste(letter(art, panel=panel, direction="rtl"), (x, y))
            draw.rectangle((x, y, x + 511, y + 361), outline="black", width=4)
    out = ROOT / "docs" / "lettering-styles.png"
    sheet.save(out, optimize=True)
    print(f"wrote {out.relative_to(ROOT)} ({sheet.width}×{sheet.height})")


if __name__ == "__main__":
    main()
