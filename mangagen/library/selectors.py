"""Reads about a person's library: its entries as the API shows them."""

from __future__ import annotations

from django.urls import reverse

from .models import CastMember, SavedPlace


def _image_url(image) -> str | None:
    if not image:
        return None
    return reverse("library-image", args=[image.name.removeprefix("library/")])


def cast_json(member: CastMember) -> dict:
    """A cast member (docs/api.md, "Series, cast and places"): its description, outfits and
    the sheets it brings to a comic."""
    sheets = {
        s.outfit: {"image_url": _image_url(s.image), "hash": s.hash, "source": s.source}
        for s in member.sheets.all()
    }
    return {
        "id": member.pk,
        "name": member.name,
        "description": member.description,
        "outfits": [
            {"name": o["name"], "description": o["description"], "sheet": sheets.get(o["name"])}
            for o in member.outfits
        ],
        "sheet": sheets.get(""),
    }


def place_json(saved: SavedPlace) -> dict:
    picture = (
        {"image_url": _image_url(saved.picture), "hash": saved.picture_hash}
        if saved.picture
        else None
    )
    return {
        "id": saved.pk,
        "name": saved.name,
        "description": saved.description,
        "picture": picture,
    }


def cast_of(*, owner) -> list[CastMember]:
    return list(CastMember.objects.filter(owner=owner).prefetch_related("sheets"))


def places_of(*, owner) -> list[SavedPlace]:
    return list(SavedPlace.objects.filter(owner=owner))
