"""What a drafter returns."""

from dataclasses import dataclass, field


@dataclass
class Draft:
    characters: list[dict] = field(default_factory=list)
    panels: list[dict] = field(default_factory=list)
    notice: str = ""
