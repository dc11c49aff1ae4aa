"""Drafting translated lines with an OpenAI-compatible chat model (`TRANSLATOR=openai`).

It uses the chat drafter's endpoint and model (the `CHAT_*` settings) and is
counted in the same daily quota. The model is asked for a JSON object of
line ids to translations; each answer is held to the limits a person's line
is, and a line it did not answer usably stays to translate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext

from mangagen.kernel.chat_client import ChatFailed, ask_json
from mangagen.lettering import languages, one_line

from .errors import TranslatorFailed

SYSTEM_PROMPT = """You translate the lettering of a comic: its title, speech balloons,
captions and sound effects (ids ending in .sN: render each as the target language's own
sound word, as short as the original). Answer with one JSON object and nothing else, of this shape:
{"lines": {"<id>": "<the line translated>"}}
with one entry for every id you are given. Translate each line's meaning and tone as a
comic translator would, short enough for its balloon; keep people's and places' names
as they are (in the target script where it has its own); never add notes or quotes."""


@dataclass(frozen=True)
class Line:
    """A line to translate: its id in the request, its text, who says it, its limit."""

    id: str
    text: str
    speaker: str
    limit: int


class ChatTranslator:
    name = "openai"

    def __init__(self, *, base_url: str, api_key: str, model: str, timeout: float):
        self.base_url = base_url
        self.api_key = api_key
        self.model = model
        self.timeout = timeout

    def translate(self, *, source: str, target: str, lines: list[Line]) -> dict[str, str]:
        """id -> translation, for every line the model answered usably (one line of
        text within its limit). Raises TranslatorFailed when the model cannot be
        reached or answers nothing usable."""
        request = {
            "from": languages.name(source),
            "to": languages.name(target),
            "lines": [
                {"id": line.id, "text": line.text}
                | ({"speaker": line.speaker} if line.speaker else {})
                for line in lines
            ],
        }
        try:
            answer = ask_json(
                base_url=self.base_url,
                api_key=self.api_key,
                model=self.model,
                timeout=self.timeout,
                system=SYSTEM_PROMPT,
                user=json.dumps(request, ensure_ascii=False),
                temperature=0.2,
            )
        except ChatFailed as exc:
            exc.log("The chat translator")
            raise TranslatorFailed(
                gettext(
                    "The translation model could not be used (%(reason)s); nothing was changed."
                )
                % {"reason": exc.reason}
            ) from exc
        answered = answer.get("lines", answer) if isinstance(answer, dict) else None
        if not isinstance(answered, dict):
            raise TranslatorFailed(
                gettext(
                    "The translation model's answer was not a set of lines; nothing was changed."
                )
            )
        usable = {}
        for line in lines:
            text = answered.get(line.id)
            text = one_line(text) if isinstance(text, str) else ""
            if text and len(text) <= line.limit:
                usable[line.id] = text
        if lines and not usable:
            raise TranslatorFailed(
                gettext("The translation model answered none of the lines; nothing was changed.")
            )
        return usable


def get_translator() -> ChatTranslator | None:
    """The configured translator, or None when `TRANSLATOR` is `none`."""
    if settings.TRANSLATOR != "openai":
        return None
    return ChatTranslator(
        base_url=settings.CHAT_BASE_URL,
        api_key=settings.CHAT_API_KEY,
        model=settings.CHAT_MODEL,
        timeout=settings.CHAT_TIMEOUT_SECONDS,
    )
