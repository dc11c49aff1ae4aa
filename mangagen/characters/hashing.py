"""A sheet's hash: what its picture was made from. It joins the art hash of its character's panels.

A rendered sheet's hash covers the description and style it was drawn for
and the take (a redo is a new picture, so its panels must change too); an
uploaded sheet's hash is its image's.
"""

import hashlib
import json


def rendered_sheet_hash(
    *, name: str, description: str, style: str, take: str, outfit: str = ""
) -> str:
    """`outfit` is the outfit's description for an outfit's sheet ("" for the usual look)."""
    canonical = {"name": name, "description": description, "style": style, "take": take}
    if outfit:
        canonical["outfit"] = outfit
    encoded = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()


def uploaded_sheet_hash(*, image: bytes) -> str:
    return hashlib.sha256(b"upload:" + image).hexdigest()
