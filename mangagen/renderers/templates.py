"""Request templates and workflows: JSON with placeholders, filled for each render.

A string that is exactly one placeholder (`"{{seed}}"`) becomes its value as it
is: a number stays a number, a list a list. Placeholders inside a longer
string are replaced by their text. Keys are never filled. Every placeholder a
template names must be one of `PLACEHOLDERS`: a typo refuses to start the app
(`check`), rather than failing every render.

Django-free: the settings check templates while they load.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

PLACEHOLDER = re.compile(r"\{\{\s*([a-z0-9_]+)\s*\}\}")
# How many characters (and reference images) a template can address by number.
SLOTS = 4

GENERAL = (
    "prompt",
    "negative_prompt",
    "seed",
    "width",
    "height",
    "aspect_ratio",
    "blocking",
    "reference_images",
    "image",  # a touch-up's picture (each adapter says in which form)
    "mask",  # a touch-up's mask, in the provider's polarity (each adapter says in which form)
    "rough",  # a final's rough, its composition to keep (each adapter says in which form)
)
NUMBERED = (
    "reference_{i}",  # the i-th reference image (each adapter says in which form)
    "reference_{i}_weight",  # 1 when there is an i-th reference, else 0
    "reference_{i}_x",  # the box of whom it shows, in pixels (the whole frame if no one's)
    "reference_{i}_y",
    "reference_{i}_width",
    "reference_{i}_height",
    "character_{i}",  # the i-th character's words (name, look, outfit, where they stand)
    "character_{i}_x",  # the box blocking gives them, in pixels (the whole frame if none)
    "character_{i}_y",
    "character_{i}_width",
    "character_{i}_height",
    "character_{i}_strength",  # 1 when there is an i-th character, else 0
)
PLACEHOLDERS = frozenset(
    GENERAL + tuple(n.format(i=i) for n in NUMBERED for i in range(1, SLOTS + 1))
)


class TemplateError(ValueError):
    """A template that cannot be used (it says why)."""


def placeholders_in(template: Any) -> set[str]:
    """Every placeholder name a template uses."""
    found: set[str] = set()
    if isinstance(template, dict):
        for value in template.values():
            found |= placeholders_in(value)
    elif isinstance(template, list):
        for value in template:
            found |= placeholders_in(value)
    elif isinstance(template, str):
        found |= set(PLACEHOLDER.findall(template))
    return found


def references_in(template: Any) -> int:
    """How many reference pictures a template takes: the highest `{{reference_N}}` it
    names (written with or without spaces inside the braces, as `fill` reads them)."""
    numbers = (re.fullmatch(r"reference_(\d+)", name) for name in placeholders_in(template))
    return max((int(n.group(1)) for n in numbers if n), default=0)


def check(template: Any, *, what: str) -> Any:
    """The template, if it is a JSON object whose placeholders are all known."""
    if not isinstance(template, dict):
        raise TemplateError(f"{what} must be a JSON object.")
    unknown = sorted(placeholders_in(template) - PLACEHOLDERS)
    if unknown:
        names = ", ".join("{{" + u + "}}" for u in unknown)
        raise TemplateError(
            f"{what} names {names}, not a placeholder (use: "
            f"{', '.join(sorted('{{' + p + '}}' for p in GENERAL))}, "
            "and {{reference_N}}, {{character_N}}… numbered from 1)."
        )
    return template


def load(text: str, *, what: str) -> dict:
    """A template from JSON text, checked."""
    try:
        template = json.loads(text)
    except ValueError as exc:
        raise TemplateError(f"{what} is not valid JSON: {exc}") from exc
    return check(template, what=what)


def fill(template: Any, values: Mapping[str, Any]) -> Any:
    """A copy of `template` with every placeholder replaced by its value."""
    if isinstance(template, dict):
        return {key: fill(value, values) for key, value in template.items()}
    if isinstance(template, list):
        return [fill(value, values) for value in template]
    if not isinstance(template, str):
        return template
    whole = PLACEHOLDER.fullmatch(template.strip())
    if whole:
        return values[whole.group(1)]
    return PLACEHOLDER.sub(lambda m: _text(values[m.group(1)]), template)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
