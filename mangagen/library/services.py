"""Writes to a person's library: save a character (with its outfits and sheets in use) or a
place (with its picture) from a comic, remove one, and add one to a comic.

Adding brings the same sheets under the same hashes (and the same picture), so nothing
is rendered or paid again; the panels of the comic are hashed again in the same
transaction. Saving a name the library already has (ignoring case) replaces that entry.
The library keeps copies of the pictures: the comic they came from may be deleted. Every
copy counts toward PICTURE_BYTES_PER_PERSON (mangagen/characters/picture_budget.py).
"""

from __future__ import annotations

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils.translation import gettext

from mangagen.characters.errors import NoSuchCharacter
from mangagen.characters.models import made_from
from mangagen.characters.picture_budget import check_picture_bytes
from mangagen.characters.selectors import sheet_rows_in_use
from mangagen.characters.services import add_character
from mangagen.kernel import quotas, storage
from mangagen.places.errors import NoSuchPlace
from mangagen.places.models import Place
from mangagen.places.services import add_place_copy
from mangagen.storyboards import limits
from mangagen.storyboards.lock_objects import lock_storyboard
from mangagen.storyboards.models import Character, Storyboard
from mangagen.storyboards.rehashing import rehash_storyboard

from .lock_objects import lock_entry
from .models import CastMember, CastSheet, SavedPlace


def check_library(*, entries) -> None:
    """Raises LimitReached when a library list (`entries`: the person's cast members, or
    their places, as a queryset) already holds limits.MAX_LIBRARY."""
    if entries.count() >= limits.MAX_LIBRARY:
        raise quotas.LimitReached(
            quotas.Limit.LIBRARY,
            gettext(
                "Your library keeps at most %(cap)s characters and as many places; "
                "remove one to save another."
            )
            % {"cap": limits.MAX_LIBRARY},
        )


def save_character(*, owner, storyboard: Storyboard, name: str) -> tuple[CastMember, bool]:
    """Keeps the comic's character `name` in the owner's cast; returns it and whether it is
    new. Raises NoSuchCharacter, LimitReached when the library is full, or Refused
    (UPLOADS_FULL) when the copies of its sheets would pass PICTURE_BYTES_PER_PERSON."""
    with storage.deleted_if_raised() as stored, transaction.atomic():
        storyboard, character = _in_comic(storyboard, Character, name)
        member, created = _entry(CastMember, owner=owner, name=name)
        member.description = character.description
        member.outfits = list(character.outfits)
        member.save()
        old = list(member.sheets.all())
        member.sheets.all().delete()
        in_use = sheet_rows_in_use(storyboard=storyboard)
        pictures = {
            outfit: _read(sheet.image) for (who, outfit), sheet in in_use.items() if who == name
        }
        check_picture_bytes(
            owner_id=owner.pk,
            adding=sum(map(len, pictures.values())),
            freeing=sum(s.bytes for s in old),
        )
        for (who, outfit), sheet in in_use.items():
            if who != name:
                continue
            kept = CastSheet(member=member, outfit=outfit, **made_from(sheet))
            kept.image.save("sheet.png", ContentFile(pictures[outfit]), save=False)
            kept.bytes = len(pictures[outfit])
            stored.append(kept.image.name)
            kept.save()
        _forget_files([s.image for s in old])
    return member, created


def save_place(*, owner, storyboard: Storyboard, name: str) -> tuple[SavedPlace, bool]:
    """Keeps the comic's place `name` in the owner's library; returns it and whether it is
    new. Raises NoSuchPlace, LimitReached when the library is full, or Refused
    (UPLOADS_FULL) when the copy of its picture would pass PICTURE_BYTES_PER_PERSON."""
    with storage.deleted_if_raised() as stored, transaction.atomic():
        storyboard, place = _in_comic(storyboard, Place, name)
        saved, created = _entry(SavedPlace, owner=owner, name=name)
        old = [saved.picture] if saved.picture else []
        picture = _read(place.picture) if place.picture else b""
        check_picture_bytes(
            owner_id=owner.pk,
            adding=len(picture),
            freeing=saved.picture_bytes if old else 0,
        )
        saved.description = place.description
        saved.picture, saved.picture_hash, saved.picture_bytes = "", "", 0
        if picture:
            saved.picture_hash = place.picture_hash
            saved.picture.save("picture.png", ContentFile(picture), save=False)
            saved.picture_bytes = len(picture)
            stored.append(saved.picture.name)
        saved.save()
        _forget_files(old)
    return saved, created


def forget(*, entry: CastMember | SavedPlace) -> None:
    """Removes a library entry; its pictures leave the storage once that is committed."""
    with transaction.atomic():
        if isinstance(entry, CastMember):
            files = [s.image for s in entry.sheets.all()]
        else:
            files = [entry.picture] if entry.picture else []
        entry.delete()
        _forget_files(files)


def add_character_to(*, storyboard: Storyboard, member: CastMember) -> Character:
    """The cast member as a character of the comic, last, with its sheets in use (the same
    hashes: no credit). Raises NameTaken, ListFull, or Refused (UPLOADS_FULL: the copies
    of its sheets would pass PICTURE_BYTES_PER_PERSON)."""
    with storage.deleted_if_raised() as saved, transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        character = add_character(
            storyboard=storyboard,
            name=member.name,
            description=member.description,
            outfits=list(member.outfits),
            sheets={s.outfit: (s, s.image) for s in member.sheets.all()},
            saved=saved,
        )
        rehash_storyboard(storyboard=storyboard)
    return character


def add_place_to(*, storyboard: Storyboard, saved: SavedPlace) -> Place:
    """The saved place as a place of the comic, last, with its picture (the same hash).
    Raises NameTaken, ListFull, or Refused (UPLOADS_FULL: the copy of its picture would
    pass PICTURE_BYTES_PER_PERSON)."""
    with storage.deleted_if_raised() as stored, transaction.atomic():
        storyboard = lock_storyboard(pk=storyboard.pk)
        place = add_place_copy(storyboard=storyboard, of=saved, saved=stored)
        rehash_storyboard(storyboard=storyboard)
    return place


def _in_comic(storyboard: Storyboard, model, name: str):
    """The storyboard, locked, and its character (or place) `name`; raises NoSuchCharacter
    (or NoSuchPlace)."""
    storyboard = lock_storyboard(pk=storyboard.pk)
    found = model.objects.filter(storyboard=storyboard, name=name).first()
    if found is None:
        if model is Place:
            raise NoSuchPlace(gettext("This comic has no place named %(name)r.") % {"name": name})
        raise NoSuchCharacter(
            gettext("This comic has no character named %(name)r.") % {"name": name}
        )
    return storyboard, found


def _entry(model, *, owner, name: str):
    """The owner's entry of that name (ignoring case), locked, or a new one (checked
    against the library's size)."""
    entry = lock_entry(model=model, owner=owner, name=name)
    if entry is not None:
        entry.name = name
        return entry, False
    check_library(entries=model.objects.filter(owner=owner))
    return model(owner=owner, name=name), True


def _read(image) -> bytes:
    with image.open("rb") as handle:
        return handle.read()


def _forget_files(files) -> None:
    storage.deleted_on_commit([f.name for f in files])
