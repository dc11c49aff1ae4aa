"""Drafting with an OpenAI-compatible chat-completions endpoint, asking for JSON.

The model's answer is validated with the same rules as a person's edits; an
unusable answer (bad JSON, wrong shape, over the limits, an HTTP error) falls
back to the rule-based draft with a notice saying so, in the fixed words of
its kind of failure (`mangagen.kernel.chat_client.ChatFailure`); what went wrong exactly goes
to the log.
"""

from __future__ import annotations

from django.utils.translation import gettext

from mangagen.kernel.chat_client import ChatFailed, ChatFailure, ask_json
from mangagen.storyboards import limits
from mangagen.storyboards.models import BalloonStyle

from .draft import Draft, StoryContext
from .rules import RuleDrafter

SYSTEM_PROMPT = f"""You turn a short story into a manga storyboard.
Answer with one JSON object and nothing else, of this shape:
{{"characters": [{{"name": "...", "description": "appearance, clothes, build"}}],
  "panels": [{{"description": "what the panel shows",
              "shot": "establishing|wide|medium|close-up|extreme-close-up|action",
              "characters": ["names present"],
              "dialogue": [{{"speaker": "a character's name", "text": "...",
                             "style": "speech|thought|shout|whisper"}}],
              "caption": "narration box text or empty",
              "place": "one of the known places' names, or empty"}}]}}
At most {limits.MAX_PANELS} panels, {limits.MAX_CHARACTERS} characters and
{limits.MAX_DIALOGUE_LINES} dialogue lines a panel; dialogue lines at most
{limits.MAX_DIALOGUE_TEXT} characters. Every speaker and every name in a panel's
"characters" must be one of "characters". Keep the story's own words for dialogue.
A line's "style" is its balloon: "shout" for a line shouted, yelled or cried (or
ending in "!"), "whisper" for one whispered or murmured, "thought" for a thought (in
parentheses or italics, or what someone thinks or wonders), "speech" otherwise.
Known characters keep their names and looks; when the story continues a series, pick
up where the previous chapter's last beats left off."""


class ChatDrafter:
    name = "openai"

    def __init__(self, *, base_url: str, api_key: str, model: str, timeout: float):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.timeout = timeout

    def draft(
        self,
        *,
        title: str,
        story: str,
        characters: list[dict],
        context: StoryContext | None = None,
    ) -> Draft:
        """`context` (a series' places and the previous chapter's last beats) goes to the
        model with the story; its answer may set each panel in one of the places."""
        context = context or StoryContext()
        try:
            answer = self._ask(title=title, story=story, characters=characters, context=context)
            return self._validated(answer, characters, places=context.places)
        except ChatFailed as exc:
            failure = exc
        except (ValueError, KeyError, TypeError, IndexError) as exc:  # broke the rules
            failure = ChatFailed(ChatFailure.UNUSABLE, f"{type(exc).__name__}: {exc}")
        failure.log("The chat drafter (falling back to the rules)")
        fallback = RuleDrafter().draft(
            title=title, story=story, characters=characters, context=context
        )
        fallback.notice = gettext(
            "The language model's draft could not be used (%(reason)s), "
            "so this draft was made by the built-in rules instead."
        ) % {"reason": failure.reason}
        return fallback

    def _ask(
        self, *, title: str, story: str, characters: list[dict], context: StoryContext
    ) -> dict:
        known = "".join(f"\n- {c['name']}: {c.get('description', '')}" for c in characters)
        known = known or " none"
        places = "".join(f"\n- {p['name']}: {p.get('description', '')}" for p in context.places)
        known += f"\nKnown places:{places or ' none'}"
        if context.last_beats:
            beats = "".join(f"\n- {beat}" for beat in context.last_beats)
            known += f"\nThe previous chapter ended with:{beats}"
        return ask_json(
            base_url=self.base_url,
            api_key=self.api_key,
            model=self.model,
            timeout=self.timeout,
            system=SYSTEM_PROMPT,
            user=f"Title: {title}\nKnown characters:{known}\n\n{story}",
            temperature=0.4,
        )

    def _validated(self, answer: dict, existing: list[dict], *, places: list[dict]) -> Draft:
        from mangagen.storyboards.serializers import StoryboardWriteSerializer

        if not isinstance(answer, dict):
            raise ValueError("the answer is not a JSON object")
        known = {c["name"]: c.get("description", "") for c in existing}
        answered = answer.get("characters") or []
        if not isinstance(answered, list):
            raise ValueError("the answer's characters are not a list")
        for c in answered:
            if isinstance(c, str):  # a model that lists names only
                c = {"name": c}
            if not isinstance(c, dict):
                raise ValueError("the answer's characters are not names")
            known.setdefault(str(c.get("name", "")).strip(), str(c.get("description", "")))
        named = {p["name"] for p in places}
        panels = answer["panels"]
        if isinstance(panels, list):  # a place the comic does not have is dropped, not fatal
            for panel in panels:
                if isinstance(panel, dict) and panel.get("place") not in named:
                    panel.pop("place", None)
                for line in panel.get("dialogue") or [] if isinstance(panel, dict) else []:
                    if isinstance(line, dict):  # a style the lettering lacks is speech
                        line.pop("place", None)  # where a balloon sits is the person's
                        if line.get("style") not in BalloonStyle.values:
                            line.pop("style", None)
        data = {
            "characters": [{"name": n, "description": d} for n, d in known.items() if n],
            "places": [
                {"name": p["name"], "description": p.get("description", "")} for p in places
            ],
            "panels": panels,
        }
        serializer = StoryboardWriteSerializer(data=data, partial=True)
        if not serializer.is_valid():
            raise ValueError(f"the answer broke the storyboard's rules: {serializer.errors}")
        if not serializer.validated_data["panels"]:
            raise ValueError("the answer had no panels")
        return Draft(
            characters=serializer.validated_data["characters"],
            panels=serializer.validated_data["panels"],
        )
