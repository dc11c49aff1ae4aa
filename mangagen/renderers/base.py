"""The renderer interface: a panel spec and a seed in, image bytes and metadata out."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict, Unpack

from mangagen.kernel import failed_render


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
    # The shape of the page cell the picture is drawn for, "W:H" ("" for the renderer's
    # own size): the request's width and height follow it (`sized`).
    aspect: str = ""

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


@dataclass(frozen=True)
class TouchUpSpec:
    """A region of a panel drawn again (a touch-up).

    `panel` is what the panel's art is drawn from, its characters narrowed to those the
    region covers; `image` the picture now (PNG bytes of the current take); `mask` the
    one canonical mask (a PNG, mode "L", the picture's size: 255 = redraw, 0 = keep;
    the studio makes it, mangagen/jobs/regions.py; masks.py converts it); `prompt` what
    to draw there.
    Each provider's own polarity is made from `mask` in its adapter, nowhere else.
    """

    panel: PanelSpec
    image: bytes = field(repr=False)
    mask: bytes = field(repr=False)
    prompt: str

    def default_seed(self) -> int:
        key = hashlib.sha256(self.image + self.mask + self.prompt.encode()).hexdigest()
        return int(key[:8], 16)


@dataclass(frozen=True)
class FromRoughSpec:
    """A panel's final drawn from its rough: the composition the person approved kept.

    `panel` is what the picture is drawn from (its `aspect` the cell's shape); `rough`
    the rough's picture (PNG bytes), which each provider takes its own way (an init or
    control image, or only the rough's seed where it offers nothing else); the seed is
    the rough's, so a provider that takes neither picture still draws the same layout.
    """

    panel: PanelSpec
    rough: bytes = field(repr=False)

    def default_seed(self) -> int:
        return self.panel.default_seed()


def sized(aspect: str, width: int, height: int) -> tuple[int, int]:
    """`width`×`height` reshaped to `aspect` ("W:H") with about the same number of
    pixels, in multiples of 8; as it is when `aspect` says nothing usable."""
    w, _, h = aspect.partition(":")
    try:
        ratio = float(w) / float(h)
    except (ValueError, ZeroDivisionError):
        return width, height
    if not 0.1 <= ratio <= 10:
        return width, height
    area = width * height
    new_w = (area * ratio) ** 0.5
    return max(64, round(new_w / 8) * 8), max(64, round(new_w / ratio / 8) * 8)


@dataclass
class RenderResult:
    """A render's picture. `metadata["phases"]` is what the render's phases took in
    seconds, from every renderer: `{"queued": …, "cold_start": …, "render": …}` (queued:
    waiting for capacity, ours or the provider's; cold_start: a container or worker
    booting; render: drawing). `metadata["provider"]` and `metadata["model"]` name what
    drew it (what the learned timings are kept under)."""

    image: bytes
    content_type: str
    width: int
    height: int
    renderer: str
    seconds: float
    cold: bool | None
    metadata: dict = field(default_factory=dict)


# A failed render's public message, stored as it is (in English) and translated when
# shown: the kernel's words for a failed render (one place).
RENDER_FAILED = failed_render.RENDER_FAILED


class RenderError(Exception):
    """A render failed. `retryable` says whether trying again may help. The message is
    for the log and operators (it may quote the provider); `public` is what the person
    is told (never the provider's internals)."""

    def __init__(self, message: str, *, retryable: bool, public: str = RENDER_FAILED):
        super().__init__(message)
        self.retryable = retryable
        self.public = public


class Verb(StrEnum):
    """What a provider is asked to draw; a provider says which it can do, and each is one
    of a renderer's methods (`draw` calls it)."""

    RENDER = "render"  # a panel from its description (`Renderer.render`)
    SHEET = "sheet"  # a character's reference sheet (`Renderer.render_sheet`)
    TOUCH_UP = "touch-up"  # a region of a picture drawn again (`Renderer.touch_up`)
    ROUGH = "rough"  # a panel's fast, low-resolution draft, by the draft model (`rough`)
    FROM_ROUGH = "from-rough"  # a panel's final keeping its rough's composition


VERB_METHODS = {
    Verb.RENDER: "render",
    Verb.SHEET: "render_sheet",
    Verb.TOUCH_UP: "touch_up",
    Verb.ROUGH: "rough",
    Verb.FROM_ROUGH: "from_rough",
}


class ProviderState(StrEnum):
    """Where a render stands while it waits on a provider (reported to `on_state`)."""

    QUEUED = "queued"  # in the provider's own queue (a self-hosted server's)
    STARTING = "starting"  # waiting for a worker: Replicate's `starting`, RunPod's IN_QUEUE
    BOOTING = "booting"  # starting long enough to be a cold start
    RENDERING = "rendering"
    UNREACHABLE = "unreachable"  # the provider does not answer; retrying


@dataclass(frozen=True)
class StateChange:
    """What `on_state` is told: the new state, a sentence for the person, and when the
    next try comes (for UNREACHABLE)."""

    state: ProviderState
    detail: str = ""
    retry_in: float | None = None


OnState = Callable[[StateChange], None]


@dataclass(frozen=True)
class Waiting:
    """How one render waits: its ticket in the provider's queue, the queue (a
    mangagen.renderers.gpu_pool.Priority), a heartbeat, and who is told its states."""

    ticket: str | None = None
    priority: str = "confirmed"
    while_waiting: Callable[[], None] | None = None
    on_state: OnState | None = None


class WaitingOptions(TypedDict, total=False):
    """A render's keyword arguments, `Waiting`'s fields: what `render`, `render_sheet`
    and `touch_up` take after the spec and the seed."""

    ticket: str | None
    priority: str
    while_waiting: Callable[[], None] | None
    on_state: OnState | None


class Renderer:
    """What every renderer is. Panels and sheets go the same way: a renderer says what
    each is as work (`panel_work`, `sheet_work`) and how work is rendered (`perform`).
    `model` names what the provider runs: the key of its learned timings."""

    name: str
    model: str
    # Whether this renderer can redraw a region of a picture (`touch_up`); a touch-up is
    # refused before any hold where it cannot.
    can_touch_up: bool = False
    # Whether a touch-up draws what the person typed (an image model reads the words); the
    # offline renderer draws shapes of its own there, and the touch-up dialog says so.
    touch_up_follows_words: bool = True

    def render(self, spec: PanelSpec, seed: int, **waiting: Unpack[WaitingOptions]) -> RenderResult:
        """Renders one panel. `ticket` names the render in the provider's queue,
        `priority` is its queue (mangagen.renderers.gpu_pool.Priority), `while_waiting`
        is called about once a second while it waits or renders, and `on_state` each
        time a remote render changes state (queued, booting, rendering, unreachable).
        Raises RenderError, or Withdrawn when the ticket is withdrawn meanwhile (after
        cancelling the render at the provider if it had reached one)."""
        return self.perform(self.panel_work(spec, seed), Waiting(**waiting))

    def render_sheet(
        self, spec: SheetSpec, seed: int, **waiting: Unpack[WaitingOptions]
    ) -> RenderResult:
        """Renders a character's reference sheet (a front view and a few expressions,
        one image) through the same provider and queue as panels."""
        return self.perform(self.sheet_work(spec, seed), Waiting(**waiting))

    def touch_up(
        self, spec: TouchUpSpec, seed: int, **waiting: Unpack[WaitingOptions]
    ) -> RenderResult:
        """Draws the region `spec.mask` marks again, through the same provider and queue
        as panels. The result is the provider's whole picture at the image's size;
        whatever it did outside the region is undone by the caller, which composites it
        into the original (mangagen/jobs/regions.py `composite`)."""
        return self.perform(self.touchup_work(spec, seed), Waiting(**waiting))

    def rough(self, spec: PanelSpec, seed: int, **waiting: Unpack[WaitingOptions]) -> RenderResult:
        """A rough of the panel: its composition, fast and small, by the provider's draft
        model (or workflow), through the same queue as panels (its `priority` the
        pool's lowest). `seed` is the one its final will be drawn with."""
        return self.perform(self.rough_work(spec, seed), Waiting(**waiting))

    def from_rough(
        self, spec: FromRoughSpec, seed: int, **waiting: Unpack[WaitingOptions]
    ) -> RenderResult:
        """A panel's final drawn from its rough, keeping its composition (the provider's
        init or control image, or the same seed where it takes neither)."""
        return self.perform(self.from_rough_work(spec, seed), Waiting(**waiting))

    def panel_work(self, spec: PanelSpec, seed: int) -> Any:
        raise NotImplementedError

    def rough_work(self, spec: PanelSpec, seed: int) -> Any:
        raise NotImplementedError

    def from_rough_work(self, spec: FromRoughSpec, seed: int) -> Any:
        """A provider that takes no picture with a request still keeps what it can: the
        panel drawn with the rough's seed (a provider overrides this with its own way of
        taking the rough: an init, control or input image)."""
        return self.panel_work(spec.panel, seed)

    def touchup_work(self, spec: TouchUpSpec, seed: int) -> Any:
        raise NotImplementedError

    def sheet_work(self, spec: SheetSpec, seed: int) -> Any:
        raise NotImplementedError

    def perform(self, work: Any, waiting: Waiting) -> RenderResult:
        raise NotImplementedError


def draw(
    renderer: Renderer, verb: Verb, spec: Any, seed: int, **waiting: Unpack[WaitingOptions]
) -> RenderResult:
    """Asks `renderer` for `verb` (its method of that name: a test may replace one)."""
    return getattr(renderer, VERB_METHODS[verb])(spec, seed, **waiting)
