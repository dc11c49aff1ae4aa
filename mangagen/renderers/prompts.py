"""The one place where an image model's prompt is built from a panel."""

from .base import PanelSpec

STYLE_WORDS = {
    "manga": "black-and-white manga panel, clean ink lines, screentone shading",
    "shonen": "shonen manga action panel, bold ink, dynamic speed lines, high contrast",
    "shoujo": "shoujo manga panel, delicate linework, sparkles and flowers, soft screentone",
    "noir": "noir comic panel, heavy shadows, stark black and white, rain and neon",
    "chibi": "chibi comedy manga panel, cute super-deformed characters, simple shading",
}
SHOT_WORDS = {
    "establishing": "establishing shot of the setting",
    "wide": "wide shot",
    "medium": "medium shot, waist up",
    "close-up": "close-up on the face",
    "extreme-close-up": "extreme close-up, eyes and expression",
    "action": "dynamic action shot with motion lines",
}


def image_prompt(spec: PanelSpec) -> str:
    parts = [STYLE_WORDS.get(spec.style, STYLE_WORDS["manga"]), SHOT_WORDS.get(spec.shot, "")]
    parts.append(spec.description.strip())
    for character in spec.characters:
        look = character.description.strip() or "distinctive look"
        parts.append(f"{character.name}: {look}")
    if spec.characters:  # the lettering layer goes over the art, wherever it covers least
        parts.append("leave some empty space near the top for speech balloons")
    parts.append("no text, no lettering, no speech balloons, no watermark")
    return ". ".join(p for p in parts if p)
