"""Writes to a comic's places: the list (with the storyboard's edits) and each place's picture.

A picture is the person's own (checked and re-encoded like a sheet upload) and
costs nothing: it counts toward PICTURE_BYTES_PER_PERSON
(mangagen/characters/picture_budget.py). Its
hash joins the art hash of the panels set there, so the storyboard's panels are
hashed again in the same transaction.
"""

from __future__ import annotations

import hashlib
import secrets

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils.translation import gettext

from mangagen.characters.picture_budget import check_picture_bytes
from mangagen.kernel import storage
from mangagen.storyboards import limits
from mangagen.storyboards.errors import ListFull, NameTaken
from mangagen.storyboards.lock_objects import lock_storyboard
from mangagen.storyboards.models import Storyboard
from mangagen.storyboards.naming import renamed
from mangagen.storyboards.rehashing import rehash_storyboard

from .errors import NoSuchPlace
from .lock_objects import lock_place, lock_places
from .models import Place


def picture_hash(image: bytes) -> str:
    return hashlib.sha256(b"place:" + image).hexdigest()


def replace_places(*, storyboard: Storyboard, places: list[dict]) -> dict[str, str]:
    """Makes the storyboard's places `places`, in order; the caller holds the storyboard's
    row lock. A place that keeps its name, or is renamed in its row, keeps its picture; the
    pictures of places removed leave the storage once committed. Returns old -> new names
    ("" for a place removed), for the panels to follow."""
    existing = {p.name: p for p in lock_places(storyboard=storyboard)}
    before = [p.name for p in sorted(existing.values(), key=lambda p: p.position)]
    after = [p["name"] for p in places]
    renames = renamed(before=before, after=after)
    by_new_name = {new: existing[old] for old, new in renames.items() if new}
    gone = [existing[old] for old, new in renames.items() if not new]
    Place.objects.filter(pk__in=[p.pk for p in gone]).delete()
    files = [p.picture.name for p in gone if p.picture]
    # Names are unique per comic: park the rows kept under a temporary name first,
    # so a swap of two names never meets the constraint half done.
    kept = [p for p in existing.values() if p not in gone]
    parked = secrets.token_hex(8)
    for place in kept:
        place.name = f"moving {parked} {place.pk}"
    Place.objects.bulk_update(kept, ["name"])
    for position, item in enumerate(places, start=1):
        place = existing.get(item["name"]) or by_new_name.get(item["name"])
        if place is None:
            place = Place(storyboard=storyboard)
        place.position = position
        place.name = item["name"]
        place.description = item.get("description", "")
        place.save()
    storage.deleted_on_commit(files)
    return renames


def set_picture(*, storyboard: Storyboard, name: str, image: bytes) -> Place:
    """Makes `image` (already checked and re-encoded) the place's picture; the older one
    leaves the storage once committed. Raises NoSuchPlace, or Refused (UPLOADS_FULL)
    when the person's stored pictures would pass PICTURE_BYTES_PER_PERSON (then nothing
    changes)."""
    with storage.deleted_if_raised() as saved, transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        place = _place(storyboard, name)
        old = place.picture.name if place.picture else ""
        check_picture_bytes(
            owner_id=storyboard.owner_id,
            adding=len(image),
            freeing=place.picture_bytes if old else 0,
        )
        place.picture_hash = picture_hash(image)
        place.picture.save("picture.png", ContentFile(image), save=False)
        place.picture_bytes = len(image)
        saved.append(place.picture.name)
        place.save(update_fields=["picture", "picture_hash", "picture_bytes"])
        rehash_storyboard(storyboard=storyboard)
        storage.deleted_on_commit([old])
    return place


def remove_picture(*, storyboard: Storyboard, name: str) -> None:
    """The place goes back to its description alone; its panels are hashed again."""
    with transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        place = _place(storyboard, name)
        if not place.picture:
            return
        old = place.picture.name
        place.picture, place.picture_hash, place.picture_bytes = "", "", 0
        place.save(update_fields=["picture", "picture_hash", "picture_bytes"])
        rehash_storyboard(storyboard=storyboard)
        storage.deleted_on_commit([old])


def add_place(
    *,
    storyboard: Storyboard,
    name: str,
    description: str,
    picture,
    digest: str,
    saved: list[str],
) -> Place:
    """Adds a place to the storyboard, last, with a copy of `picture` (a stored file, or
    None) under the same hash, whose name is added to `saved`. The caller holds the
    storyboard's row lock and hashes its panels again. Raises NameTaken (a place of
    that name, ignoring case), ListFull, or Refused (UPLOADS_FULL) when the copy would
    pass PICTURE_BYTES_PER_PERSON."""
    names = list(Place.objects.filter(storyboard=storyboard).values_list("name", flat=True))
    if name.casefold() in {n.casefold() for n in names}:
        raise NameTaken(gettext("This comic already has a place named %(name)r.") % {"name": name})
    if len(names) >= limits.MAX_PLACES:
        raise ListFull(gettext("A comic has at most %(cap)s places.") % {"cap": limits.MAX_PLACES})
    place = Place(storyboard=storyboard, position=len(names) + 1, name=name)
    place.description = description
    if picture:
        with picture.open("rb") as handle:
            data = handle.read()
        check_picture_bytes(owner_id=storyboard.owner_id, adding=len(data))
        place.picture_hash = digest
        place.picture.save("picture.png", ContentFile(data), save=False)
        place.picture_bytes = len(data)
        saved.append(place.picture.name)
    place.save()
    return place


def add_place_copy(*, storyboard: Storyboard, of, saved: list[str]) -> Place:
    """`add_place` with what the place `of` has (a comic's Place or a library's
    SavedPlace): its name, its description, and its picture under the same hash."""
    return add_place(
        storyboard=storyboard,
        name=of.name,
        description=of.description,
        picture=of.picture or None,
        digest=of.picture_hash,
        saved=saved,
    )


def _place(storyboard: Storyboard, name: str) -> Place:
    place = lock_place(storyboard=storyboard, name=name)
    if place is None:
        raise NoSuchPlace(gettext("This comic has no place named %(name)r.") % {"name": name})
    return place
