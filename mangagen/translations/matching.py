"""Which stored translated line belongs to which line of the original, as the original is now.

Pure: no database. A translated line is stored with where it was (the title,
or a panel's index and the line's position) and the original text it
translates (`source`). Panels are edited, added, moved and removed, so a
stored line is paired with the original in three passes:

1. same place, same original text: the line, current;
2. the same original text anywhere else (its panel moved, a line was
   inserted above it): the line, current, moved with it — the nearest first;
3. same place, other text (the original was edited): the line, kept and
   flagged stale, with the text it was translated from.

A line no pass pairs is missing (lettered in the original). Stored lines
that pair with nothing now (their panel was removed) are kept aside as
orphans, capped, and come back only if their exact original text does (a
removed line typed back in): never as a stale translation of a new line.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from mangagen.storyboards import limits

# Orphans kept at most: as many lines as a storyboard can hold.
MAX_ORPHANS = 1 + limits.MAX_PANELS * (limits.MAX_DIALOGUE_LINES + 1 + limits.MAX_SFX_PER_PANEL)


class Slot(StrEnum):
    TITLE = "title"
    DIALOGUE = "dialogue"
    CAPTION = "caption"
    SFX = "sfx"  # a panel's sound effect, by position


@dataclass(frozen=True, order=True)
class Place:
    """Where a line is: the title (panel 0), a panel's dialogue line (0-based), its caption,
    one of its sound effects (0-based)."""

    slot: Slot
    panel: int = 0
    line: int = 0


@dataclass(frozen=True)
class Original:
    place: Place
    text: str
    speaker: str = ""


@dataclass(frozen=True)
class Entry:
    """A translated line as stored: where it was, its text, the original it translates."""

    place: Place
    text: str
    source: str
    drafted: bool = False  # by a chat model, and not edited by a person since
    orphan: bool = False

    @classmethod
    def from_json(cls, data: dict) -> Entry:
        place = Place(Slot(data["slot"]), int(data.get("panel", 0)), int(data.get("line", 0)))
        return cls(
            place=place,
            text=str(data["text"]),
            source=str(data.get("source", "")),
            drafted=bool(data.get("drafted", False)),
            orphan=bool(data.get("orphan", False)),
        )

    def to_json(self) -> dict:
        data = {
            "slot": str(self.place.slot),
            "panel": self.place.panel,
            "line": self.place.line,
            "text": self.text,
            "source": self.source,
        }
        if self.drafted:
            data["drafted"] = True
        if self.orphan:
            data["orphan"] = True
        return data


@dataclass(frozen=True)
class Resolved:
    """One line of the original now, with its translation (None: missing)."""

    original: Original
    entry: Entry | None

    @property
    def text(self) -> str:
        return self.entry.text if self.entry else ""

    @property
    def missing(self) -> bool:
        return self.entry is None

    @property
    def stale(self) -> bool:
        return self.entry is not None and self.entry.source != self.original.text

    @property
    def drafted(self) -> bool:
        return self.entry is not None and self.entry.drafted


@dataclass(frozen=True)
class Edit:
    """A line as sent: its text ("" to remove it), whether the sender says it
    translates the original as it is now (a stale line confirmed as it stands),
    and whether a chat model wrote it."""

    text: str
    current: bool = False
    drafted: bool = False


def originals(*, title: str, panels) -> list[Original]:
    """Every line of the original that can be translated: the title, each panel's
    dialogue lines, each caption that is not empty, each sound effect. `panels` have
    `index`, `dialogue`, `caption` and `sfx`."""
    found = [Original(Place(Slot.TITLE), title)] if title.strip() else []
    for panel in panels:
        for position, line in enumerate(panel.dialogue):
            found.append(
                Original(
                    Place(Slot.DIALOGUE, panel.index, position),
                    line["text"],
                    line.get("speaker", ""),
                )
            )
        if panel.caption.strip():
            found.append(Original(Place(Slot.CAPTION, panel.index), panel.caption))
        for position, effect in enumerate(getattr(panel, "sfx", None) or []):
            found.append(Original(Place(Slot.SFX, panel.index, position), effect["text"]))
    return found


def resolve(lines: list[Original], entries: list[Entry]) -> tuple[list[Resolved], list[Entry]]:
    """Each original line with its translation, and the stored lines paired with none."""
    pairs: dict[Place, Entry] = {}
    unused = list(entries)

    def take(entry: Entry, line: Original) -> None:
        pairs[line.place] = entry
        unused.remove(entry)

    live = [e for e in unused if not e.orphan]
    at = {e.place: e for e in live}
    for line in lines:  # 1. same place, same original
        entry = at.get(line.place)
        if entry is not None and entry.source == line.text:
            take(entry, line)
    for line in lines:  # 2. the same original elsewhere: it moved
        if line.place in pairs:
            continue
        same = [e for e in unused if e.source == line.text and e.place.slot == line.place.slot]
        if same:
            take(min(same, key=lambda e: _distance(e.place, line.place)), line)
    for line in lines:  # 3. same place, edited original: kept, stale
        entry = at.get(line.place)
        if line.place not in pairs and entry is not None and entry in unused:
            take(entry, line)
    return [Resolved(line, pairs.get(line.place)) for line in lines], unused


def apply(resolved: list[Resolved], unused: list[Entry], edits: dict[Place, Edit]) -> list[Entry]:
    """The lines to store after `edits`: each translated line at its place now; an
    edited line translates the original as it is now (no longer stale or drafted);
    a line sent unchanged keeps its state; lines pairing with nothing are orphans."""
    stored = []
    for line in resolved:
        edit = edits.get(line.original.place)
        entry = line.entry
        if edit is not None and not edit.text:
            continue  # removed: missing again
        if edit is not None and (edit.text != line.text or edit.current):
            entry = Entry(line.original.place, edit.text, line.original.text, edit.drafted)
        if entry is not None:
            stored.append(replace(entry, place=line.original.place, orphan=False))
    orphans = [replace(e, orphan=True) for e in unused][:MAX_ORPHANS]
    return stored + orphans


def _distance(a: Place, b: Place) -> tuple[int, int]:
    return abs(a.panel - b.panel), abs(a.line - b.line)
