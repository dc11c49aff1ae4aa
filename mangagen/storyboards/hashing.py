"""Hashes: a panel's art hash covers what its picture depends on, its content hash everything.

The art hash covers style, the panel's description and shot, and the
characters present with their descriptions (not the panel's index: moving a
panel does not change its picture, and not its dialogue or caption: lettering
is drawn over the art). `sheets` joins it once characters have reference
sheets: a character's ready sheet hash is part of the art of every panel they
are in. Outfits, the place and the blocking join it the same way, only for
panels that use them: the description of the outfit a character wears there
(and its sheet's hash), the description of the place the panel is set in (and
its picture's hash), where each character stands. Absent keys stay absent, so
a panel that uses none of them hashes as it always did. Names of outfits and
places are not part of it: renaming one changes no picture. The content hash
is the art hash plus the lettering (text, balloon styles and places, sound
effects); the storyboard's version is the hash of
its panels' content hashes, in order.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass


def art_hash(
    *,
    style: str,
    description: str,
    shot: str,
    characters: list[str],
    character_descriptions: dict[str, str],
    sheets: dict[str, str] | None = None,
    art_inputs: dict | None = None,
    blocking: dict[str, str] | None = None,
) -> str:
    """`art_inputs` is the panel's `{"place": {...}, "outfits": {name: {...}}}` as
    `Panel.art_inputs` keeps it; `blocking` maps a character present to where they stand."""
    canonical: dict = {
        "style": style,
        "description": description,
        "shot": shot,
        "characters": [[name, character_descriptions.get(name, "")] for name in characters],
    }
    present_sheets = {n: sheets[n] for n in characters if sheets and sheets.get(n)}
    if present_sheets:  # absent until sheets exist, so today's hashes stay as they are
        canonical["sheets"] = present_sheets
    inputs = art_inputs or {}
    worn = inputs.get("outfits") or {}
    outfits = {
        n: [worn[n]["description"], worn[n].get("sheet", "")] for n in characters if n in worn
    }
    if outfits:
        canonical["outfits"] = outfits
    place = inputs.get("place")
    if place:
        canonical["place"] = [place["description"], place.get("picture", "")]
    stands = {n: blocking[n] for n in characters if blocking and blocking.get(n)}
    if stands:
        canonical["blocking"] = stands
    return _sha256(canonical)


@dataclass(frozen=True)
class ArtLooks:
    """A storyboard's outfits and places as the art hash takes them: each outfit by
    (character, outfit name) and each place by name, with their descriptions and the
    hashes of the outfit's sheet in use and the place's picture (absent when none)."""

    outfits: dict[tuple[str, str], dict]
    places: dict[str, dict]

    @classmethod
    def build(cls, *, characters, places, outfit_sheets: dict[tuple[str, str], str]) -> ArtLooks:
        outfits = {}
        for character in characters:
            for outfit in character.outfits:
                look = {"name": outfit["name"], "description": outfit.get("description", "")}
                sheet = outfit_sheets.get((character.name, outfit["name"]))
                if sheet:
                    look["sheet"] = sheet
                outfits[(character.name, outfit["name"])] = look
        found = {}
        for place in places:
            entry = {"name": place.name, "description": place.description}
            if place.picture_hash:
                entry["picture"] = place.picture_hash
            found[place.name] = entry
        return cls(outfits=outfits, places=found)

    def of(self, panel) -> dict:
        """The panel's `art_inputs`: the outfits worn by characters present, and its place."""
        inputs: dict = {}
        worn = {
            name: self.outfits[(name, outfit)]
            for name, outfit in panel.outfits.items()
            if name in panel.characters and (name, outfit) in self.outfits
        }
        if worn:
            inputs["outfits"] = worn
        if panel.place in self.places:
            inputs["place"] = self.places[panel.place]
        return inputs


def content_hash(*, art: str, dialogue: list[dict], caption: str, sfx: list[dict] = ()) -> str:
    """The art hash plus the lettering: each line's speaker and text (and its balloon's
    style and place when chosen), the caption, the sound effects. What is not chosen is
    absent, so a panel without them hashes as it always did."""
    lines = []
    for line in dialogue:
        entry: list = [line["speaker"], line["text"]]
        if line.get("style") or line.get("place"):
            entry += [line.get("style", ""), line.get("place")]
        lines.append(entry)
    canonical: dict = {"art": art, "dialogue": lines, "caption": caption}
    if sfx:
        canonical["sfx"] = list(sfx)
    return _sha256(canonical)


def storyboard_version(panel_hashes: list[str]) -> str:
    return _sha256(panel_hashes)[:32]


def _sha256(value) -> str:
    encoded = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()
