"""The drafters `DRAFTER` may name (Django-free: the settings check it while they load)."""

from enum import StrEnum


class DrafterName(StrEnum):
    RULES = "rules"  # offline
    OPENAI = "openai"  # any OpenAI-compatible chat-completions endpoint
