"""The one place where an image model's prompt is built from a panel."""

from .base import CharacterSpec, PanelSpec, SheetSpec

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


def image_prompt(spec: PanelSpec, *, references: tuple[str, ...] = ()) -> str:
    """The panel's prompt; `references` names, in order, the characters whose sheets are
    sent with it as reference images."""
    parts = [STYLE_WORDS.get(spec.style, STYLE_WORDS["manga"]), SHOT_WORDS.get(spec.shot, "")]
    parts.append(spec.description.strip())
    parts.append(place_words(spec))
    for character in spec.characters:
        look = character.description.strip() or "distinctive look"
        parts.append(f"{character.name}: {look}{outfit_words(character)}")
    if references:
        named = ", ".join(f"image {i} is {name}" for i, name in enumerate(references, start=1))
        parts.append(
            f"The reference images are character sheets ({named}): draw each of them with "
            "the same face, hair and clothes as their sheet, in this panel's pose and framing"
        )
    if spec.characters:  # the lettering layer goes over the art, wherever it covers least
        parts.append("leave some empty space near the top for speech balloons")
    parts.append("no text, no lettering, no speech balloons, no watermark")
    return ". ".join(p for p in parts if p)


def place_words(spec: PanelSpec) -> str:
    """Where the panel happens, from its place's description ("" when it has none)."""
    if spec.place is None or not spec.place.description.strip():
        return ""
    return f"setting: {spec.place.description.strip()}"


def outfit_words(character: CharacterSpec) -> str:
    """What the character wears in this panel, when it is not their usual look."""
    if not character.outfit.strip():
        return ""
    return f", wearing {character.outfit.strip()}"


def sheet_prompt(spec: SheetSpec) -> str:
    """A character's reference sheet: what every later panel of them is conditioned on."""
    character = spec.character
    look = character.description.strip() or "distinctive look"
    parts = [
        STYLE_WORDS.get(spec.style, STYLE_WORDS["manga"]).replace(" panel", ""),
        f"character reference sheet of {character.name}: {look}{outfit_words(character)}",
        "a full-body front view on the left, and on the right three head shots with "
        "different expressions (neutral, smiling, angry)",
        "plain white background, even lighting, the same outfit in every view",
        "no text, no labels, no watermark",
    ]
    return ". ".join(parts)
