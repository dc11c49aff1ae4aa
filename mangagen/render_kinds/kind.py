"""What a render kind declares, and what a prepared render of it is."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from ledger.models import Hold
from mangagen.kernel import paid_render
from mangagen.renderers import Renderer, RenderResult
from mangagen.renderers.base import OnState, Verb
from mangagen.renderers.gpu_pool import Priority, Withdrawn
from mangagen.renderers.registry import renderer_for


@dataclass(frozen=True)
class Request:
    """What the provider is asked for: the verb, its spec and the seed."""

    verb: Verb
    spec: Any
    seed: int


@dataclass
class Work:
    """One render its kind prepared: what it renders (`ref`, the kind's own), with which
    renderer, the request, its ticket in the GPU pool and its place there (`priority`),
    what beats while it waits and draws (`beats`), who hears of a remote provider's
    states (`on_state`), and what the kind keeps for its picture's arrival (`extra`)."""

    ref: Any
    renderer: Renderer
    request: Request
    ticket: str
    priority: Priority
    beats: AbstractContextManager = field(default_factory=nullcontext)
    on_state: OnState | None = None
    extra: Any = None


@dataclass(frozen=True)
class Checked:
    """The picture to keep and its check (None when unchecked), as a panel carries it."""

    result: RenderResult
    check: dict | None = None


class RenderKind:
    """A kind of render. A subclass declares `name`, `credits`, `verb` and `priority`
    (or `priority_of`, for a kind whose renders wait in different places) and says how
    a render of it is prepared and kept; the rest has defaults."""

    name: ClassVar[str]
    # What one render costs the person: held before any GPU work, captured when its
    # picture is shown, released on every other path. 0: never held, never charged.
    credits: ClassVar[int]
    verb: ClassVar[Verb]
    priority: ClassVar[Priority] = Priority.CONFIRMED

    def renderer(self) -> Renderer:
        """The renderer the settings choose for this kind's verb (one per purpose)."""
        return renderer_for(self.verb)

    def place_hold(self, *, owner, key: str, reference: str, expires_in: int) -> Hold:
        """One render's hold of `credits` on its owner's account (paid_render.place_hold)."""
        return paid_render.place_hold(
            owner=owner, credits=self.credits, key=key, reference=reference, expires_in=expires_in
        )

    def prepare(self, ref: Any) -> Work | str:
        """The render of `ref` to draw, its request built; or, when there is nothing to
        draw (it moved on, another copy draws it), the outcome to answer at once."""
        raise NotImplementedError

    def finish(self, work: Work, result: RenderResult) -> RenderResult:
        """What the provider's picture becomes once it arrives (as it is, by default)."""
        return result

    def check(self, work: Work, result: RenderResult) -> Checked:
        """Checked before shown: the picture to keep (unchecked, by default)."""
        return Checked(result)

    def keep(self, work: Work, first: RenderResult, checked: Checked) -> str:
        """Keeps `checked.result` (and captures the hold) if the render is still wanted;
        `first` is what the provider drew first. Returns the outcome."""
        raise NotImplementedError

    def withdrawn(self, work: Work, withdrawn: Withdrawn) -> str:
        """The render was withdrawn while it waited or drew; returns the outcome."""
        raise NotImplementedError

    def retrying(self, ref: Any, *, error: str, retry_in: float) -> None:
        """The render is tried again in `retry_in` seconds (`error`: the person's words)."""

    def fail(self, ref: Any, *, error: str, detail: str = "") -> None:
        """The render failed for good: its hold is released. `error` is what the person
        is told; `detail` (the provider's own words) is for operators."""
        raise NotImplementedError

    def describe(self, ref: Any) -> str:
        """The render, as the logs name it."""
        return f"{self.name} {ref}"


_KINDS: dict[str, RenderKind] = {}
K = TypeVar("K", bound=RenderKind)


def register(kind: K) -> K:
    """Makes `kind` known by its name (see `named`); returns it."""
    if not isinstance(kind.credits, int) or kind.credits < 0:
        raise ValueError(f"A render kind's price is a whole number of credits: {kind.credits!r}")
    known = _KINDS.get(kind.name)
    if known is not None and type(known) is not type(kind):
        raise ValueError(f"Two render kinds are named {kind.name!r}.")
    _KINDS[kind.name] = kind
    return kind


def named(name: str) -> RenderKind:
    """The registered kind of that name; LookupError if none is."""
    try:
        return _KINDS[name]
    except KeyError:
        raise LookupError(f"No render kind is named {name!r}.") from None


def registered() -> dict[str, RenderKind]:
    """Every registered kind, by name."""
    return dict(_KINDS)
