"""Writes to storyboards. Input arrives validated (see serializers.py)."""

from __future__ import annotations

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from mangagen.characters.selectors import sheets_in_use
from mangagen.drafting import Draft, get_drafter
from mangagen.lettering import languages

from .hashing import art_hash, content_hash, storyboard_version
from .models import Character, KeptArt, Panel, Storyboard, Style


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
    _rehash(storyboard)
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
    panels: list[dict] | None = None,
    layout: dict | None = None,
) -> Storyboard:
    """Applies the given changes; lists (characters, panels) replace what was there.

    `layout` may carry `direction`, `format`, `breaks` and `templates` (see
    mangagen.pages); each given key replaces what was there.
    """
    storyboard = Storyboard.objects.select_for_update().get(pk=storyboard.pk)
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
    if characters is not None:
        before = list(storyboard.characters.order_by("position").values_list("name", flat=True))
        storyboard.characters.all().delete()
        Character.objects.bulk_create(
            Character(
                storyboard=storyboard,
                position=position,
                name=c["name"],
                description=c.get("description", ""),
            )
            for position, c in enumerate(characters, start=1)
        )
        if panels is None:
            _follow_names(storyboard, before=before, after=[c["name"] for c in characters])
    if panels is not None:
        storyboard.panels.all().delete()
        Panel.objects.bulk_create(
            Panel(
                storyboard=storyboard,
                index=index,
                description=p.get("description", ""),
                shot=p.get("shot") or Panel._meta.get_field("shot").default,
                characters=list(p.get("characters", [])),
                dialogue=[
                    {"speaker": d.get("speaker", ""), "text": d["text"]}
                    for d in p.get("dialogue", [])
                ],
                caption=p.get("caption", ""),
                content_hash="",
            )
            for index, p in enumerate(panels, start=1)
        )
    _rehash(storyboard)
    return storyboard


def _follow_names(storyboard: Storyboard, *, before: list[str], after: list[str]) -> None:
    """Panels name their characters and speakers by name. When the characters
    change without the panels (the characters step saves them alone), a name
    renamed in its row (the old name gone, the new one new) follows in every
    panel, and a name removed leaves the panels: its lines stay, spoken by no
    one. Otherwise the panels would name someone who is not a character,
    which every later save of them would be refused for."""
    kept, known = set(after), set(before)
    renamed = {
        old: new
        for old, new in zip(before, after, strict=False)
        if old not in kept and new not in known
    }

    def now_called(name: str) -> str:
        return renamed.get(name, name if name in kept else "")

    for panel in storyboard.panels.all():
        present = [now_called(name) for name in panel.characters]
        dialogue = [
            {**line, "speaker": now_called(line["speaker"])} if line.get("speaker") else line
            for line in panel.dialogue
        ]
        if present != panel.characters or dialogue != panel.dialogue:
            panel.characters = [name for name in present if name]
            panel.dialogue = dialogue
            panel.save(update_fields=["characters", "dialogue"])


LAYOUT_FIELDS = {
    "direction": "direction",
    "format": "page_format",
    "breaks": "page_breaks",
    "templates": "page_templates",
}


def draft_storyboard(*, storyboard: Storyboard) -> tuple[Storyboard, str]:
    """Fills the panels (and adds characters) from the story; returns any notice."""
    existing = [{"name": c.name, "description": c.description} for c in storyboard.characters.all()]
    draft: Draft = get_drafter().draft(
        title=storyboard.title, story=storyboard.story, characters=existing
    )
    storyboard = update_storyboard(
        storyboard=storyboard, characters=draft.characters, panels=draft.panels
    )
    return storyboard, draft.notice


def rehash_storyboard(*, storyboard: Storyboard) -> None:
    """Hashes the panels again (a character's sheet changed); the caller holds the row lock."""
    _rehash(storyboard)


def _rehash(storyboard: Storyboard) -> None:
    descriptions = {c.name: c.description for c in storyboard.characters.all()}
    sheets = sheets_in_use(storyboard=storyboard)
    hashes = []
    panels = list(storyboard.panels.all())
    for panel in panels:
        panel.sheets = {n: sheets[n] for n in panel.characters if n in sheets}
        panel.art_hash = art_hash(
            style=storyboard.style,
            description=panel.description,
            shot=panel.shot,
            characters=panel.characters,
            character_descriptions=descriptions,
            sheets=panel.sheets,
        )
        panel.content_hash = content_hash(
            art=panel.art_hash, dialogue=panel.dialogue, caption=panel.caption
        )
        hashes.append(panel.content_hash)
    Panel.objects.bulk_update(panels, ["art_hash", "sheets", "content_hash"])
    version = storyboard_version(hashes)
    if version != storyboard.version:
        storyboard.version = version
        Storyboard.objects.filter(pk=storyboard.pk).update(version=version)


# --- kept art: a delivered render belongs to the comic ------------------------------------------


def keep_render(
    *, storyboard_id: int, art_hash: str, image: bytes, faces: dict, source, attempt: int
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
    )
    kept.image.save("art.png", ContentFile(image), save=False)
    kept.save()
    return kept


@transaction.atomic
def choose_take(*, storyboard: Storyboard, take: int) -> KeptArt:
    """Makes an older kept take of a panel's picture the one shown again; costs nothing.

    Raises KeptArt.DoesNotExist for a take that is not this storyboard's.
    """
    kept = KeptArt.objects.select_for_update().get(pk=take, storyboard=storyboard)
    kept.chosen_at = timezone.now()
    kept.save(update_fields=["chosen_at"])
    return kept
