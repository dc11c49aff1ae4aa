"""The renderer interface: a panel spec and a seed in, image bytes and metadata out."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class CharacterSpec:
    """A character present. `sheet` is the hash of their reference sheet in use (if any) and
    `reference` its image, for the renderers that condition on it. `position` is where the
    panel's blocking places them (`left`, `center`, `right`, or "" when it says nothing)
    and `outfit` the description of the outfit the panel has them wear ("" for their
    usual look)."""

    name: str
    description: str = ""
    sheet: str = ""
    reference: bytes = field(default=b"", repr=False, compare=False)
    position: str = ""
    outfit: str = ""


@dataclass(frozen=True)
class PlaceSpec:
    """Where a panel happens: a place of the comic, its description, and its reference
    picture (if any) for the renderers that condition on one."""

    name: str
    description: str = ""
    reference: bytes = field(default=b"", repr=False, compare=False)


@dataclass(frozen=True)
class SheetSpec:
    """What a character sheet is drawn from: one character, their description, the style.

    `sheet` is the hash the sheet will have, so the sheet and the panels drawn
    from it agree on the character's look.
    """

    style: str
    character: CharacterSpec

    def default_seed(self) -> int:
        key = self.character.sheet or repr(self)
        return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)


@dataclass(frozen=True)
class DialogueSpec:
    speaker: str
    text: str


@dataclass(frozen=True)
class PanelSpec:
    """What a panel's image is drawn from (what its art hash covers).

    `dialogue` and `caption` are the panel's text, for callers that want it;
    the jobs never pass them to a renderer, since lettering is a separate
    layer drawn over the art.
    """

    style: str
    description: str
    shot: str
    characters: tuple[CharacterSpec, ...] = ()
    dialogue: tuple[DialogueSpec, ...] = ()
    caption: str = ""
    index: int = 1
    content_hash: str = ""
    art_hash: str = ""
    place: PlaceSpec | None = None

    @classmethod
    def from_panel(cls, panel, *, style: str, cast: dict[str, str]) -> PanelSpec:
        return cls(
            style=style,
            description=panel.description,
            shot=panel.shot,
            characters=tuple(CharacterSpec(n, cast.get(n, "")) for n in panel.characters),
            # A line without a speaker is narration, as everywhere else (storyboards, lettering).
            dialogue=tuple(DialogueSpec(d.get("speaker", ""), d["text"]) for d in panel.dialogue),
            caption=panel.caption,
            index=panel.index,
            content_hash=panel.content_hash,
            art_hash=getattr(panel, "art_hash", ""),
        )

    def default_seed(self) -> int:
        """The same picture's inputs give the same seed: a text edit never changes the art."""
        key = self.art_hash or self.content_hash or repr(self)
        return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)


@dataclass
class RenderResult:
    """A render's picture. `metadata["phases"]`, when the renderer knows them, is what the
    render's phases took in seconds: `{"queued": …, "cold_start": …, "render": …}`
    (queued: waiting for capacity, ours or the provider's; cold_start: a container
    booting; render: drawing)."""

    image: bytes
    content_type: str
    width: int
    height: int
    renderer: str
    seconds: float
    cold: bool | None
    metadata: dict = field(default_factory=dict)


class RenderError(Exception):
    """A render failed. `retryable` says whether trying again may help."""

    def __init__(self, message: str, *, retryable: bool):
        super().__init__(message)
        self.retryable = retryable


class Renderer(Protocol):
    name: str

    def render(
        self,
        spec: PanelSpec,
        seed: int,
        *,
        ticket: str | None = None,
        priority: str = "confirmed",
        while_waiting: Callable[[], None] | None = None,
    ) -> RenderResult:
        """Renders one panel. `ticket` names the render in the provider's queue,
        `priority` is its queue (mangagen.renderers.warmth.Priority), and
        `while_waiting` is called about once a second while it waits or renders."""
        ...

    def render_sheet(
        self,
        spec: SheetSpec,
        seed: int,
        *,
        ticket: str | None = None,
        priority: str = "confirmed",
        while_waiting: Callable[[], None] | None = None,
    ) -> RenderResult:
        """Renders a character's reference sheet (a front view and a few expressions,
        one image) through the same provider and queue as panels."""
        ...
