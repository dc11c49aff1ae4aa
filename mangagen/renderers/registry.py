"""The image providers in a registry, and the renderer for each purpose.

Each provider is a module of providers/ named for it (its name one of
catalog.RendererName): importing it registers it with the verbs it can do (`register`)
and how its renderer is built from the settings. `provider(name)` imports it the first
time it is asked for; nothing here names a provider.

Which provider draws what is the settings': `RENDERER` for every verb, `RENDERER_FOR`
for a verb drawn by another (`sheet=openai,touch-up=a1111`), so one process holds a
renderer per purpose: a fast model can draw beside the final one. A purpose whose
provider cannot do its verb refuses to start (`check_purposes`, when the apps load).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .base import Renderer, Verb
from .catalog import RendererName


@dataclass(frozen=True)
class Provider:
    """A provider as it registered: its name, the verbs it can do, and its renderer
    built from the settings (a new one each time: a process may hold several)."""

    name: str
    verbs: frozenset[Verb]
    build: Callable[[], Renderer]


_PROVIDERS: dict[str, Provider] = {}


def register(name: str, *, verbs: Iterable[Verb], build: Callable[[], Renderer]) -> Provider:
    """Registers the provider `name` (what its module does when it is imported)."""
    if name not in RendererName.__members__.values():
        raise ValueError(f"{name!r} is not a provider RENDERER may name (catalog.RendererName).")
    found = Provider(name=name, verbs=frozenset(verbs), build=build)
    _PROVIDERS[name] = found
    return found


def provider(name: str) -> Provider:
    """The provider `name`, its module imported on first ask. ValueError for a name that
    is none (the settings refuse one at start)."""
    if name not in _PROVIDERS and name in RendererName.__members__.values():
        importlib.import_module(f"{__package__}.providers.{name}")
    try:
        return _PROVIDERS[name]
    except KeyError:
        known = ", ".join(RendererName)
        raise ValueError(f"Unknown RENDERER {name!r} (use one of: {known}).") from None


def provider_for(verb: Verb) -> str:
    """The name of the provider the settings choose for `verb`."""
    return settings.RENDERER_FOR.get(str(verb)) or settings.RENDERER


def renderer_for(verb: Verb = Verb.RENDER, *, name: str | None = None) -> Renderer:
    """A renderer of provider `name` (by default the one the settings choose for `verb`),
    configured by the settings. ValueError when that provider cannot do `verb`."""
    chosen = provider(name or provider_for(verb))
    if verb not in chosen.verbs:
        raise ValueError(f"The {chosen.name} provider cannot {verb}.")
    return chosen.build()


def supports(verb: Verb) -> bool:
    """Whether the provider the settings choose for `verb` can do it at all (a renderer
    may still say it cannot as configured, as `can_touch_up` does)."""
    return verb in provider(provider_for(verb)).verbs


def check_purposes() -> None:
    """Refuses (ImproperlyConfigured) a verb RENDERER_FOR gives to a provider that cannot
    do it. (A verb RENDERER's provider cannot do is refused when it is asked for.)"""
    for verb in settings.RENDERER_FOR:
        if not supports(Verb(verb)):
            name = provider_for(Verb(verb))
            raise ImproperlyConfigured(f"RENDERER_FOR: the {name} provider cannot {verb}.")
