"""Storyboard drafting from the story, pluggable like the renderers.

`DRAFTER=rules` (default, offline) or `DRAFTER=openai` (any OpenAI-compatible
chat-completions endpoint, with the rule-based draft as its fallback).
"""

from typing import Protocol

from django.conf import settings

from .draft import Draft, StoryContext


class Drafter(Protocol):
    name: str

    def draft(
        self,
        *,
        title: str,
        story: str,
        characters: list[dict],
        context: StoryContext | None = None,
    ) -> Draft: ...


def get_drafter() -> Drafter:
    from .openai_chat import ChatDrafter
    from .rules import RuleDrafter

    if settings.DRAFTER == "openai":
        return ChatDrafter(
            base_url=settings.CHAT_BASE_URL,
            api_key=settings.CHAT_API_KEY,
            model=settings.CHAT_MODEL,
            timeout=settings.CHAT_TIMEOUT_SECONDS,
        )
    if settings.DRAFTER == "rules":
        return RuleDrafter()
    raise ValueError(f"Unknown DRAFTER {settings.DRAFTER!r} (use 'rules' or 'openai').")


__all__ = ["Draft", "Drafter", "StoryContext", "get_drafter"]
