"""Reads about a comic's places: the list, how the API shows one, a picture for the renderers."""

from __future__ import annotations

from django.urls import reverse

from mangagen.storyboards.models import Storyboard

from .models import Place


def places_of(*, storyboard: Storyboard) -> list[Place]:
    """The comic's places, in their order (`position`)."""
    return places_of_each(storyboards=[storyboard])[storyboard.pk]


def places_of_each(*, storyboards: list[Storyboard]) -> dict[int, list[Place]]:
    """storyboard pk -> its `places_of`, for every one of `storyboards` in one query."""
    each: dict[int, list[Place]] = {board.pk: [] for board in storyboards}
    for place in Place.objects.filter(storyboard__in=storyboards).order_by("position"):
        each[place.storyboard_id].append(place)
    return each


def picture_url(place: Place) -> str | None:
    if not place.picture:
        return None
    return reverse("place-image", args=[place.picture.name.removeprefix("places/")])


def as_json(place: Place) -> dict:
    """A place as the storyboard carries it (docs/api.md, "Places")."""
    picture = (
        {"image_url": picture_url(place), "hash": place.picture_hash} if place.picture else None
    )
    return {"name": place.name, "description": place.description, "picture": picture}


def picture_bytes(*, storyboard_id: int, name: str, picture_hash: str) -> bytes:
    """The picture of the place with that hash (for the renderers), or b"" when the place or
    its picture has changed since: the panel is then drawn from the description alone."""
    place = Place.objects.filter(
        storyboard_id=storyboard_id, name=name, picture_hash=picture_hash
    ).first()
    if place is None or not place.picture:
        return b""
    try:
        with place.picture.open("rb") as handle:
            return handle.read()
    except OSError:
        return b""
