"""Hashing a comic's panels again, when what their art depends on changed.

What a panel's art depends on lives in several apps (the characters' sheets,
the places' pictures), so each of their writes calls this, in the transaction
that changed them, holding the comic's row lock. It reads those apps' rows
through their selectors and writes only the panels' hashes and the comic's
version: it sits below every service that calls it (storyboards, places,
characters, library, series).
"""

from __future__ import annotations

from mangagen.characters.selectors import sheet_rows_in_use
from mangagen.places.selectors import places_of

from .hashing import ArtLooks, art_hash, content_hash, storyboard_version
from .models import Panel, Storyboard


def rehash_storyboard(*, storyboard: Storyboard) -> None:
    """Hashes the panels again (a character's sheet changed); the caller holds the row lock."""
    characters = list(storyboard.characters.all())
    descriptions = {c.name: c.description for c in characters}
    # The sheets in use, read once: each character's usual one, and each outfit's.
    in_use = {look: sheet.hash for look, sheet in sheet_rows_in_use(storyboard=storyboard).items()}
    sheets = {name: digest for (name, outfit), digest in in_use.items() if not outfit}
    looks = ArtLooks.build(
        characters=characters,
        places=places_of(storyboard=storyboard),
        outfit_sheets={look: digest for look, digest in in_use.items() if look[1]},
    )
    hashes = []
    panels = list(storyboard.panels.all())
    for panel in panels:
        panel.sheets = {n: sheets[n] for n in panel.characters if n in sheets}
        panel.art_inputs = looks.of(panel)
        panel.art_hash = art_hash(
            style=storyboard.style,
            description=panel.description,
            shot=panel.shot,
            characters=panel.characters,
            character_descriptions=descriptions,
            sheets=panel.sheets,
            art_inputs=panel.art_inputs,
            blocking=panel.blocking,
        )
        panel.content_hash = content_hash(
            art=panel.art_hash, dialogue=panel.dialogue, caption=panel.caption, sfx=panel.sfx
        )
        hashes.append(panel.content_hash)
    Panel.objects.bulk_update(panels, ["art_hash", "sheets", "art_inputs", "content_hash"])
    version = storyboard_version(hashes)
    if version != storyboard.version:
        storyboard.version = version
        Storyboard.objects.filter(pk=storyboard.pk).update(version=version)
