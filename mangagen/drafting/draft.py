"""What a drafter returns, and what it may know beyond the story."""

from dataclasses import dataclass, field


@dataclass
class Draft:
    characters: list[dict] = field(default_factory=list)
    panels: list[dict] = field(default_factory=list)
    notice: str = ""


@dataclass(frozen=True)
class StoryContext:
    """What a chapter of a series is drafted with besides its story and its cast (the
    drafters' `characters`): the comic's places (name and description), and the last
    beats of the chapter before it (each a panel: what it shows, then its lines)."""

    places: list[dict] = field(default_factory=list)
    last_beats: list[str] = field(default_factory=list)
