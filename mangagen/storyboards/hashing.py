"""Hashes: a panel's art hash covers what its picture depends on, its content hash everything.

The art hash covers style, the panel's description and shot, and the
characters present with their descriptions (not the panel's index: moving a
panel does not change its picture, and not its dialogue or caption: lettering
is drawn over the art). `sheets` joins it once characters have reference
sheets: a character's ready sheet hash is part of the art of every panel they
are in. The content hash is the art hash plus the lettering; the storyboard's
version is the hash of its panels' content hashes, in order.
"""

import hashlib
import json


def art_hash(
    *,
    style: str,
    description: str,
    shot: str,
    characters: list[str],
    character_descriptions: dict[str, str],
    sheets: dict[str, str] | None = None,
) -> str:
    canonical = {
        "style": style,
        "description": description,
        "shot": shot,
        "characters": [[name, character_descriptions.get(name, "")] for name in characters],
    }
    present_sheets = {n: sheets[n] for n in characters if sheets and sheets.get(n)}
    if present_sheets:  # absent until sheets exist, so today's hashes stay as they are
        canonical["sheets"] = present_sheets
    return _sha256(canonical)


def content_hash(*, art: str, dialogue: list[dict], caption: str) -> str:
    canonical = {
        "art": art,
        "dialogue": [[line["speaker"], line["text"]] for line in dialogue],
        "caption": caption,
    }
    return _sha256(canonical)


def storyboard_version(panel_hashes: list[str]) -> str:
    return _sha256(panel_hashes)[:32]


def _sha256(value) -> str:
    encoded = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()
