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


POSITION_WORDS = {"left": "on the left", "center": "in the center", "right": "on the right"}
NEGATIVE = "text, lettering, speech balloons, captions, watermark, signature, logo, blurry"


def place_words(spec: PanelSpec) -> str:
    """Where the panel happens: its place's name (which the reference images name its
    picture by) and description; "" when the panel has no place."""
    if spec.place is None:
        return ""
    setting = spec.place.description.strip()
    return f"Setting: {spec.place.name}" + (f", {setting}" if setting else "")


def outfit_words(character: CharacterSpec) -> str:
    """What the character wears in this panel, when it is not their usual look."""
    if not character.outfit.strip():
        return ""
    return f", wearing {character.outfit.strip()}"


def character_words(character: CharacterSpec) -> str:
    """A character as the prompt draws them: name, look, and the outfit the panel gives."""
    look = character.description.strip() or "distinctive look"
    return f"{character.name}: {look}{outfit_words(character)}"


def blocking_text(spec: PanelSpec) -> str:
    """Where the panel's characters stand, as words ("Aiko on the left, Kenji on the
    right"); "" when the panel places no one."""
    placed = [
        f"{c.name} {POSITION_WORDS[c.position]}"
        for c in spec.characters
        if c.position in POSITION_WORDS
    ]
    return ", ".join(placed)


def image_prompt(spec: PanelSpec, *, references: tuple[str, ...] = ()) -> str:
    """The panel's prompt; `references` names, in order, what the reference images sent
    with it show (a character's name for their sheet; the place's name for its picture)."""
    parts = [STYLE_WORDS.get(spec.style, STYLE_WORDS["manga"]), SHOT_WORDS.get(spec.shot, "")]
    parts.append(spec.description.strip())
    parts.append(place_words(spec))
    for character in spec.characters:
        parts.append(character_words(character))
    parts.append(blocking_text(spec))
    if references:
        named = ", ".join(f"image {i} is {name}" for i, name in enumerate(references, start=1))
        place = spec.place.name if spec.place is not None else None
        sheets = [n for n in references if n != place]
        words = f"The reference images ({named}) are "
        words += "character sheets" if sheets else ""
        words += " and " if sheets and place in references else ""
        words += "a picture of the setting" if place in references else ""
        if sheets:
            words += (
                ": draw each character with the same face, hair and clothes as their sheet, "
                "in this panel's pose and framing"
            )
        parts.append(words)
    if spec.characters:  # the lettering layer goes over the art, wherever it covers least
        parts.append("leave some empty space near the top for speech balloons")
    parts.append("no text, no lettering, no speech balloons, no watermark")
    return ". ".join(p.strip().rstrip(".") for p in parts if p.strip())


def sheet_prompt(spec: SheetSpec) -> str:
    """A character's reference sheet: what every later panel of them is conditioned on."""
    parts = [
        STYLE_WORDS.get(spec.style, STYLE_WORDS["manga"]).replace(" panel", ""),
        f"character reference sheet of {character_words(spec.character)}",
        "a full-body front view on the left, and on the right three head shots with "
        "different expressions (neutral, smiling, angry)",
        "plain white background, even lighting, the same outfit in every view",
        "no text, no labels, no watermark",
    ]
    return ". ".join(parts)


def negative_prompt() -> str:
    """What a model that takes a negative prompt is asked to leave out (the lettering
    layer draws every word)."""
    return NEGATIVE
