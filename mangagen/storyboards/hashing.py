"""Content hashes: a panel's covers everything that affects its image.

Style, the panel's own fields (not its index: moving a panel does not change
its picture) and the descriptions of the characters it shows. The
storyboard's version is the hash of its panels' hashes, in order.
"""

import hashlib
import json


def panel_hash(
    *,
    style: str,
    description: str,
    shot: str,
    characters: list[str],
    dialogue: list[dict],
    caption: str,
    character_descriptions: dict[str, str],
) -> str:
    canonical = {
        "style": style,
        "description": description,
        "shot": shot,
        "characters": [[name, character_descriptions.get(name, "")] for name in characters],
        "dialogue": [[line["speaker"], line["text"]] for line in dialogue],
        "caption": caption,
    }
    return _sha256(canonical)


def storyboard_version(panel_hashes: list[str]) -> str:
    return _sha256(panel_hashes)[:32]


def _sha256(value) -> str:
    encoded = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()
