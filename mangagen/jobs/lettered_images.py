"""A shown panel's picture, lettered: what the image view (mangagen/views/images.py)
sends, and what a render's worker draws ahead.

Rendered images are never public: only the owner, only once delivered.
A panel is shown with its lettering drawn over the art from the storyboard's
current text (while the panel's picture is still the one the storyboard
asks for; otherwise the text the job started with), so a text edit shows at
once without a render. `?lang=` letters it in one of the comic's
translations instead (404 for a language it has none in). A comic's kept
takes are served the same way, to its owner only.

The lettered picture is kept in the cache (Redis) in one entry per image,
holding one picture per language the panel was lettered in, overwritten when
its text changes: however often a person edits a balloon, their images take
one entry each. The language is the one lettered, not the spelling asked for
(`?lang=EN%20` is `en`), and a spelling of no language the comic has answers
404 `no_such_translation` and stores nothing. One entry holds at most
LETTERED_CACHE_BYTES_PER_IMAGE: the pictures drawn longest ago leave to make
room. The person's drawing budget (`quotas`) is checked before the cache is
read, and drawing one that is not there counts against it.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db.models.fields.files import FieldFile

from mangagen.lettering import Letterable, cost
from mangagen.lettering.report import CAPTION, SFX, Placed
from mangagen.pages.builds import REVISION
from mangagen.pages.compose import PanelArt, compose_panel
from mangagen.storyboards.models import KeptArt, Storyboard
from mangagen.translations import selectors as translations

from .models import SHOWN_STATES, JobPanel

# Seconds a lettered panel stays drawn in the cache: the first paint after Generate
# and a session's revisits; past it a view draws it again.
LETTERED_TTL = 3600


@dataclass
class Shown:
    image: FieldFile
    storyboard: Storyboard
    art_hash: str
    faces: dict
    spec: dict  # the text to letter when the storyboard no longer asks for this picture
    index: int | None = None


def find_shown(user, name: str) -> Shown | None:
    panel = (
        JobPanel.objects.select_related("job", "job__storyboard")
        .filter(image=name, job__owner=user, job__confirmed=True, state__in=SHOWN_STATES)
        .first()
    )
    if panel is not None:
        job = panel.job
        return Shown(
            panel.image, job.storyboard, panel.art_hash, panel.faces, panel.spec, panel.index
        )
    kept = (
        KeptArt.objects.select_related("storyboard")
        .filter(image=name, storyboard__owner=user)
        .first()
    )
    if kept is None:
        return None
    return Shown(kept.image, kept.storyboard, kept.art_hash, kept.faces, {})


def lettering_of(
    shown: Shown, path: str, language: str | None = None
) -> tuple[str, str, str, Lettering]:
    """The ETag, the cache key (one per image), the language it is lettered in ("" for
    the original's, whatever `language` spelled it; else the translation's code) and
    the drawing of a shown panel with its lettering, in `language` (None: the
    original's; NoSuchTranslation for one the comic lacks); the drawing takes a dict to
    fill with where the lettering went (`layout_of`), when one is given."""
    same_art = shown.storyboard.panels.filter(art_hash=shown.art_hash).order_by("index")
    current = same_art.filter(index=shown.index).first() if shown.index else None
    current = current or same_art.first()
    # The original's text is the panel's own; a translation's is read only when asked for.
    lettering = (
        translations.lettering(storyboard=shown.storyboard, language=language) if language else None
    )
    if current is not None:
        text = lettering.of(current.index) if lettering else current
        fields = {
            "dialogue": text.dialogue,
            "caption": text.caption,
            "sfx": text.sfx,
            "shot": current.shot,
            "characters": current.characters,
            "blocking": current.blocking,
            "language": lettering.language if lettering else shown.storyboard.language,
        }
    else:
        spec = shown.spec
        fields = {
            "dialogue": spec.get("dialogue", []),
            "caption": spec.get("caption", ""),
            "sfx": spec.get("sfx", []),
            "shot": spec.get("shot", "medium"),
            "characters": spec.get("characters", []),
            "blocking": spec.get("blocking", {}),
            "language": shown.storyboard.language,  # the text the job started with
        }
    direction = shown.storyboard.reading_direction
    digest = hashlib.sha256(repr((REVISION, path, fields, direction, shown.faces)).encode())

    lettered = Lettering(shown, Letterable.of(faces=shown.faces, **fields), direction)

    translated = lettering is not None and lettering.translated and current is not None
    lettered_in = lettering.language if lettering and translated else ""
    # The key is only reachable after the owner check of the view.
    return f'"{digest.hexdigest()[:32]}"', lettered_cache_key(path), lettered_in, lettered


class Lettering:
    """The drawing of a shown panel with its lettering: call it for the PNG. `estimate`
    is what it is reckoned to cost (CPU seconds, for the drawing budget's reservation),
    at the size a render is drawn (its file is not read to know it)."""

    def __init__(self, shown: Shown, letterable: Letterable, direction: str):
        self.shown, self.letterable, self.direction = shown, letterable, direction

    def __call__(self, layout: dict | None = None) -> bytes:
        """The picture; `layout`, when given, is filled with where its lettering went
        (`layout_of`)."""

        def load() -> bytes:
            with self.shown.image.open("rb") as handle:
                return handle.read()

        art = PanelArt(index=0, letterable=self.letterable, load=load)
        report: list[Placed] = []
        picture = compose_panel(art, direction=self.direction, report=report)
        if layout is not None:
            layout.update(layout_of(report, picture.size))
        buffer = io.BytesIO()
        picture.save(buffer, "PNG", compress_level=1)
        return buffer.getvalue()

    @property
    def estimate(self) -> float:
        size = (settings.RENDER_WIDTH, settings.RENDER_HEIGHT)
        return cost.panel_seconds(self.letterable, size) + cost.encoding_seconds(size)


def cached(key: str, etag: str, language: str = "") -> bytes | None:
    """The lettered picture in the cache, if it was drawn with this text (the ETag).

    One entry per image: a mapping of language ("" for the original's) to
    (ETag, picture), so one image takes at most one picture per language."""
    entry = cache.get(key)
    drawn = entry.get(language) if isinstance(entry, dict) else None
    if isinstance(drawn, tuple) and len(drawn) == 2 and drawn[0] == etag:
        return drawn[1]
    return None


def store(key: str, etag: str, png: bytes, language: str = "") -> None:
    """Keeps `png` as the image's picture in `language`, and the most recently drawn of
    its others while they fit in LETTERED_CACHE_BYTES_PER_IMAGE with it (a picture
    larger than that on its own is not kept: it is drawn each time it is shown)."""
    room = settings.LETTERED_CACHE_BYTES_PER_IMAGE - len(png)
    if room < 0:
        return
    entry = cache.get(key)
    older = entry if isinstance(entry, dict) else {}
    older.pop(language, None)  # the drawing of the old text goes
    kept: dict[str, tuple[str, bytes]] = {}
    for other, drawn in reversed(older.items()):  # newest first
        size = len(drawn[1]) if isinstance(drawn, tuple) and len(drawn) == 2 else None
        if size is not None and size <= room:
            kept[other] = drawn
            room -= size
    entry = dict(reversed(kept.items()))  # oldest first: the order they leave in
    entry[language] = (etag, png)
    cache.set(key, entry, LETTERED_TTL)


def layout_of(report: list[Placed], size: tuple[int, int]) -> dict:
    """Where a panel's lettering went, as the API says it (docs/api.md, "Lettering you
    direct"): each dialogue line's balloon or box by its position in the panel's
    dialogue, the caption's, each sound effect's; fractions of the picture."""
    width, height = size
    lines: list[dict | None] = []
    caption, effects = None, []
    for placed in report:
        where = placed.as_fractions(width, height)
        if placed.kind == CAPTION:
            caption = where
        elif placed.kind == SFX:
            effects.append({"number": placed.number, **where})
        else:
            lines.append({"number": placed.number, **where})
    return {
        "width": width,
        "height": height,
        "lines": sorted(lines, key=lambda line: line["number"]),
        "caption": caption,
        "sfx": effects,
    }


def cached_layout(etag: str) -> dict | None:
    """Where the lettering went on the picture drawn with this text (its ETag), if it was
    drawn here lately."""
    layout = cache.get(_layout_key(etag))
    return layout if isinstance(layout, dict) else None


def store_layout(etag: str, layout: dict) -> None:
    if layout:
        cache.set(_layout_key(etag), layout, LETTERED_TTL)


def _layout_key(etag: str) -> str:
    return f"lettered-layout:{etag.strip(chr(34))}"


def lettered_cache_key(image_name: str) -> str:
    """The cache key of an image's lettered picture (`renders/…` or the URL's path),
    one per image: to find it, and to forget it with the image."""
    path = image_name.removeprefix("renders/")
    return f"lettered-panel:{hashlib.sha256(path.encode()).hexdigest()}"


def draw_ahead(panel: JobPanel) -> None:
    """Draws a just-rendered panel's lettering into the cache, in the worker, so that
    the request that first shows it (the job page right after Generate) only sends
    it. Nothing is revealed: the image is served only by `render_image`'s checks."""
    job = panel.job
    shown = Shown(panel.image, job.storyboard, panel.art_hash, panel.faces, panel.spec, panel.index)
    path = (panel.image.name or "").removeprefix("renders/")
    etag, key, _, lettered = lettering_of(shown, path)
    if cached(key, etag) is None:
        layout: dict = {}
        store(key, etag, lettered(layout))
        store_layout(etag, layout)
