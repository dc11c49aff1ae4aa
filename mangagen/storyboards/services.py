"""Writes to storyboards. Input arrives validated (see serializers.py)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from mangagen.drafting import Draft, StoryContext, get_drafter
from mangagen.kernel import quotas
from mangagen.lettering import languages
from mangagen.places.selectors import places_of
from mangagen.places.services import replace_places

from . import limits
from .errors import EmptyStory
from .lock_objects import lock_kept_art, lock_storyboard
from .models import BalloonStyle, Character, KeptArt, Panel, Storyboard, Style
from .naming import renamed
from .rehashing import rehash_storyboard


def check_storyboards(*, owner) -> None:
    """Raises LimitReached when `owner` already has MAX_STORYBOARDS_PER_PERSON."""
    cap = settings.MAX_STORYBOARDS_PER_PERSON
    if Storyboard.objects.filter(owner=owner).count() >= cap:
        raise quotas.LimitReached(
            quotas.Limit.STORYBOARDS,
            gettext(
                "You have %(cap)s comics, the most one account may keep; "
                "delete one to start another."
            )
            % {"cap": cap},
        )


@transaction.atomic
def create_storyboard(
    *, owner, title: str, story: str = "", style: str = Style.MANGA, language: str | None = None
) -> Storyboard:
    """A new storyboard; its `language` guessed from the title and story when not given."""
    storyboard = Storyboard.objects.create(
        owner=owner,
        title=title,
        story=story,
        style=style,
        language=language or languages.guess(f"{title} {story}"),
    )
    rehash_storyboard(storyboard=storyboard)
    return storyboard


def start_storyboard(
    *,
    owner,
    title: str,
    story: str = "",
    style: str = Style.MANGA,
    language: str | None = None,
    characters: list[dict] | None = None,
    places: list[dict] | None = None,
    panels: list[dict] | None = None,
) -> Storyboard:
    """A person's new comic, with any characters, places and panels given. Raises
    LimitReached when they already keep MAX_STORYBOARDS_PER_PERSON (nothing is made)."""
    check_storyboards(owner=owner)
    storyboard = create_storyboard(
        owner=owner, title=title, story=story, style=style, language=language
    )
    if characters or places or panels:
        storyboard = update_storyboard(
            storyboard=storyboard, characters=characters, places=places, panels=panels
        )
    return storyboard


@transaction.atomic
def update_storyboard(
    *,
    storyboard: Storyboard,
    title: str | None = None,
    story: str | None = None,
    style: str | None = None,
    language: str | None = None,
    characters: list[dict] | None = None,
    places: list[dict] | None = None,
    panels: list[dict] | None = None,
    layout: dict | None = None,
) -> Storyboard:
    """Applies the given changes; lists (characters, places, panels) replace what was there.

    `layout` may carry `direction`, `format`, `breaks` and `templates` (see
    mangagen.pages); each given key replaces what was there. A place that keeps
    its name (or is renamed in its row) keeps its picture.
    """
    storyboard = lock_storyboard(pk=storyboard.pk)
    for field, value in (
        ("title", title),
        ("story", story),
        ("style", style),
        ("language", language),
    ):
        if value is not None:
            setattr(storyboard, field, value)
    for key, field in LAYOUT_FIELDS.items():
        if layout is not None and key in layout:
            setattr(storyboard, field, layout[key])
    storyboard.save()
    follow = Renames()
    if characters is not None:
        before = list(storyboard.characters.order_by("position").values_list("name", flat=True))
        storyboard.characters.all().delete()
        Character.objects.bulk_create(
            Character(
                storyboard=storyboard,
                position=position,
                name=c["name"],
                description=c.get("description", ""),
                outfits=[
                    {"name": o["name"], "description": o.get("description", "")}
                    for o in c.get("outfits", [])
                ],
            )
            for position, c in enumerate(characters, start=1)
        )
        follow.characters = renamed(before=before, after=[c["name"] for c in characters])
    if places is not None:
        follow.places = replace_places(storyboard=storyboard, places=places)
    if panels is not None:
        storyboard.panels.all().delete()
        Panel.objects.bulk_create(
            Panel(
                storyboard=storyboard,
                index=index,
                description=p.get("description", ""),
                shot=p.get("shot") or Panel._meta.get_field("shot").default,
                characters=list(p.get("characters", [])),
                dialogue=[stored_line(d) for d in p.get("dialogue", [])],
                caption=p.get("caption", ""),
                sfx=[stored_sfx(e) for e in p.get("sfx", [])],
                place=p.get("place", ""),
                outfits=dict(p.get("outfits", {})),
                blocking=dict(p.get("blocking", {})),
                content_hash="",
            )
            for index, p in enumerate(panels, start=1)
        )
    elif characters is not None or places is not None:
        _follow(storyboard, follow)
    rehash_storyboard(storyboard=storyboard)
    return storyboard


def stored_line(line: dict) -> dict:
    """A dialogue line as a panel keeps it: speaker and text, and its balloon's style and
    place only when the person chose them (a plain speech balloon placed by the lettering
    is stored, and hashed, as lines always were)."""
    stored = {"speaker": line.get("speaker", ""), "text": line["text"]}
    if line.get("style") and line["style"] != BalloonStyle.SPEECH:
        stored["style"] = str(line["style"])
    place = line.get("place")
    if place:
        stored["place"] = {"x": float(place["x"]), "y": float(place["y"])}
        if place.get("tail"):
            stored["place"]["tail"] = {
                "x": float(place["tail"]["x"]),
                "y": float(place["tail"]["y"]),
            }
    return stored


def stored_sfx(effect: dict) -> dict:
    """A sound effect as a panel keeps it: text, centre, size and angle."""
    return {
        "text": effect["text"],
        "x": float(effect["x"]),
        "y": float(effect["y"]),
        "size": float(effect.get("size", limits.DEFAULT_SFX_SIZE)),
        "angle": float(effect.get("angle", 0)),
    }


@dataclass
class Renames:
    """What a save of the characters or places alone did to names the panels use:
    old name -> new name, or "" when removed (None: that list was not saved)."""

    characters: dict[str, str] | None = None
    places: dict[str, str] | None = None


def _follow(storyboard: Storyboard, renames: Renames) -> None:
    """Panels name their characters, speakers, outfits, blocking and place by name. When
    the characters or places change without the panels (the characters step saves them
    alone), a name renamed in its row follows in every panel, and a name removed leaves
    them: its lines stay, spoken by no one; an outfit no longer the character's is taken
    off. Otherwise the panels would name what is not there, and every later save of them
    would be refused."""
    people = renames.characters or {}
    places = renames.places or {}
    wardrobe = {c.name: {o["name"] for o in c.outfits} for c in storyboard.characters.all()}

    def now_called(name: str) -> str:
        return people.get(name, name)

    for panel in storyboard.panels.all():
        present = [n for n in (now_called(name) for name in panel.characters) if n]
        dialogue = [
            {**line, "speaker": now_called(line["speaker"])} if line.get("speaker") else line
            for line in panel.dialogue
        ]
        outfits = {
            now_called(n): o
            for n, o in panel.outfits.items()
            if now_called(n) in present and o in wardrobe.get(now_called(n), ())
        }
        blocking = {now_called(n): p for n, p in panel.blocking.items() if now_called(n) in present}
        place = places.get(panel.place, panel.place)
        changed = (present, dialogue, outfits, blocking, place) != (
            panel.characters,
            panel.dialogue,
            panel.outfits,
            panel.blocking,
            panel.place,
        )
        if changed:
            panel.characters, panel.dialogue, panel.place = present, dialogue, place
            panel.outfits, panel.blocking = outfits, blocking
            panel.save(update_fields=["characters", "dialogue", "outfits", "blocking", "place"])


LAYOUT_FIELDS = {
    "direction": "direction",
    "format": "page_format",
    "breaks": "page_breaks",
    "templates": "page_templates",
}


def draft_storyboard(*, storyboard: Storyboard) -> tuple[Storyboard, str]:
    """Fills the panels (and adds characters) from the story, knowing the cast, the places
    and, for a chapter of a series, how the chapter before it ended; returns any notice.

    Raises EmptyStory when no story is written, and LimitReached past the owner's daily
    quota of chat-model drafts (`quotas.take_draft`); then nothing changes.
    """
    if not storyboard.story.strip():
        raise EmptyStory(gettext("Write the story first; panels are drafted from it."))
    quotas.take_draft(user=storyboard.owner)
    cast = list(storyboard.characters.all())
    existing = [{"name": c.name, "description": c.description} for c in cast]
    context = StoryContext(
        places=[
            {"name": p.name, "description": p.description} for p in places_of(storyboard=storyboard)
        ],
        last_beats=last_beats(storyboard=storyboard),
    )
    draft: Draft = get_drafter().draft(
        title=storyboard.title, story=storyboard.story, characters=existing, context=context
    )
    wardrobe = {c.name: c.outfits for c in cast}  # a draft keeps the cast's outfits
    characters = [{**c, "outfits": wardrobe.get(c["name"], [])} for c in draft.characters]
    storyboard = update_storyboard(
        storyboard=storyboard, characters=characters, panels=draft.panels
    )
    return storyboard, draft.notice


LAST_BEATS = 3  # panels of the chapter before that a next chapter's draft picks up from


def last_beats(*, storyboard: Storyboard) -> list[str]:
    """The last panels of the chapter before this one in its series, each as what it shows
    then its lines ("Aiko: …"); [] for a standalone comic or a first chapter."""
    if storyboard.series_id is None or not storyboard.chapter:
        return []
    previous = (
        Storyboard.objects.filter(series_id=storyboard.series_id, chapter__lt=storyboard.chapter)
        .order_by("-chapter")
        .first()
    )
    if previous is None:
        return []
    beats = []
    for panel in list(previous.panels.order_by("-index")[:LAST_BEATS])[::-1]:
        lines = [f"{d['speaker'] or 'Narration'}: {d['text']}" for d in panel.dialogue]
        beats.append(" ".join([panel.description, *lines, panel.caption]).strip())
    return beats


# --- kept art: a delivered render belongs to the comic ------------------------------------------


def keep_render(
    *,
    storyboard_id: int,
    art_hash: str,
    image: bytes,
    faces: dict,
    source,
    attempt: int,
    aspect: str = "",
) -> KeptArt:
    """Keeps a delivered render on its storyboard under the art hash it was drawn for.

    Called in the delivering transaction (when the render is paid for), so
    whatever happens to the job later, the comic keeps the picture. It becomes
    the panel's current take. Idempotent per render (source and attempt).
    """
    existing = KeptArt.objects.filter(source=source, attempt=attempt).first()
    if existing is not None:
        return existing
    kept = KeptArt(
        storyboard_id=storyboard_id,
        art_hash=art_hash,
        faces=faces or {},
        source=source,
        attempt=attempt,
        aspect=aspect,
    )
    kept.image.save("art.png", ContentFile(image), save=False)
    kept.save()
    return kept


@transaction.atomic
def choose_take(*, storyboard: Storyboard, take: int) -> KeptArt:
    """Makes an older kept take of a panel's picture the one shown again; costs nothing.

    Raises KeptArt.DoesNotExist for a take that is not this storyboard's.
    """
    kept = lock_kept_art(storyboard=storyboard, pk=take)
    kept.chosen_at = timezone.now()
    kept.set_aside = False  # chosen again: shown again, whatever its shape
    kept.save(update_fields=["chosen_at", "set_aside"])
    return kept
