"""The offline drafter: paragraphs and sentences become panels.

Who is who is read by reading.py: people (not places), narrators, genders,
and whom each pronoun and quotation means. Each paragraph (or pair of
sentences of a long one) becomes a panel holding the people of its beat;
quoted speech becomes dialogue spoken by the person its tag or its beat
names; the shot follows from what the panel holds (an opening, action, one
speaker, a group). A line that only names a narrator ("MIKA") draws nothing.
The comic's cast comes first (a chapter's "Kenji" is the cast's "Kenji Sato"),
and a name of one of its places is never taken for a new character.
"""

from __future__ import annotations

import re

from mangagen.storyboards import limits

from .draft import Draft, StoryContext
from .reading import (
    QUOTE,
    SHOUTING,
    SPEECH,
    THINKING,
    WHISPERING,
    WORD,
    Reader,
    read_cast,
    tag_verb,
)
from .reading import sentences as _sentences

SPEECH_VERBS = "|".join(sorted(SPEECH, key=len, reverse=True))
PRONOUNS = ("he", "she", "they", "i", "we", "you")
SCENE_OPENER = re.compile(
    r"^(meanwhile|later|that (night|morning|evening|day)|the next|once upon|years|hours|"
    r"minutes|moments|in the|at the|on the|by the|under the|far away|elsewhere)\b",
    re.IGNORECASE,
)
ACTION_WORDS = {
    "ran", "run", "runs", "running", "jumped", "jumps", "leapt", "leaps", "fought", "fights",
    "punched", "kicked", "exploded", "explodes", "crashed", "crashes", "charged", "dashed",
    "sprinted", "struck", "strikes", "slammed", "fell", "falls", "flew", "chased", "attacked",
    "attacks", "swung", "dodged", "raced", "burst", "shattered", "threw", "grabbed",
}  # fmt: skip


# A thought found in the story is set in quotation marks opened by this (invisible) mark,
# so the reader finds its thinker as it finds a speaker, and the panel knows it is one.
THOUGHT_MARK = "\u2060"
# A thought in parentheses or between italics markers: (…), *…*, _…_.
THOUGHT_SPAN = re.compile(
    r"\((?P<paren>[^()\n]{2,400})\)|\*(?P<star>[^*\n]{2,400})\*|(?<!\w)_(?P<under>[^_\n]{2,400})_(?!\w)"
)
_THINK = "|".join(sorted(THINKING, key=len, reverse=True))
_THINKER = r"[A-Z][\w'’-]*|he|she|they|i|we|He|She|They|I|We"
THINK_AFTER = re.compile(
    rf"\s*[,;:—-]?\s*(?:(?:{_THINKER})\s+(?:\w+ly\s+)?(?:{_THINK})|(?:{_THINK})\s+(?:{_THINKER}))\b"
)
THINK_BEFORE = re.compile(rf"\b(?:{_THINK})\b[^.!?…()\"“”]*[,:]\s*$")
FIRST_PERSON = re.compile(r"\b(?:I|I'm|I’m|I'll|I’ll|I've|I’ve|me|my|myself)\b")


def mark_thoughts(story: str) -> str:
    """The story with each thought set as a marked quotation: a parenthesis or an
    italicised span that a thinking tag touches ("(…,) he thinks", "She wonders: *…*"), or
    an italicised span in the first person. Italics that are no thought lose their markers;
    a parenthesis that is none (narration's aside) stays as it is."""

    def mark(match: re.Match) -> str:
        inner = match.group("paren") or match.group("star") or match.group("under")
        tagged = THINK_AFTER.match(story, match.end()) or THINK_BEFORE.search(
            story[max(0, match.start() - 80) : match.start()]
        )
        italic = match.group("paren") is None
        if tagged or (italic and FIRST_PERSON.search(inner)):
            return f"“{THOUGHT_MARK}{inner.strip()}”"
        return inner if italic else match.group()

    return THOUGHT_SPAN.sub(mark, story)


def balloon_style(text: str, verb: str, *, thought: bool) -> str:
    """How a line's balloon is drawn, read from the story: a thought; then what its tag
    says (whispers, shouts); then its own punctuation (an exclamation is shouted)."""
    if thought or verb in THINKING:
        return "thought"
    if verb in WHISPERING:
        return "whisper"
    if verb in SHOUTING or "!" in text or "！" in text:
        return "shout"
    return "speech"


def find_names(text: str) -> list[str]:
    """The people a story names, most often named first: places left out (see reading.py)."""
    return read_cast(text).people


class RuleDrafter:
    name = "rules"

    def draft(
        self,
        *,
        title: str,
        story: str,
        characters: list[dict],
        context: StoryContext | None = None,
    ) -> Draft:
        """A storyboard from the story, the cast in `characters` first: a story's
        "Kenji" (or "Sato") is the cast's "Kenji Sato". A name that is (part of) one of
        `context`'s places is never taken for a new character; its last beats are for
        drafters that read them."""
        story = mark_thoughts(story)
        known = {c["name"]: c.get("description", "") for c in characters}
        aliases = _first_names(known)
        places = [p["name"] for p in context.places] if context else []
        cast = read_cast(story, [*known, *aliases])
        # Names differ ignoring case (as the API requires): "Kenji" in the
        # story is the character "kenji" already there.
        taken = {name.casefold() for name in known}
        for name in cast.people:
            if len(known) >= limits.MAX_CHARACTERS:
                break
            name = name[: limits.MAX_NAME]
            if name.casefold() not in taken and not _part_of(name, [*known, *places]):
                known[name] = ""
                taken.add(name.casefold())
        names = list(known) + list(aliases)
        reader = Reader(cast, names)
        panels = []
        for passage in cast.passages:
            sentences = _sentences(passage.text)
            size = 2 if len(sentences) > 3 else max(len(sentences), 1)
            for start in range(0, len(sentences), size):
                chunk = " ".join(sentences[start : start + size])
                panels.append(_as_known(_panel(chunk, reader, passage.narrator), aliases))
        panels = _fit(panels)
        if panels:
            first = panels[0]
            if not first["characters"] and first["shot"] == "wide":
                first["shot"] = "establishing"
        return Draft(
            characters=[{"name": n, "description": d} for n, d in known.items()],
            panels=panels,
        )


def _part_of(name: str, known: list[str]) -> bool:
    """Whether `name` is a word of one of the `known` names (the cast's, the places'):
    "Kenji" (or "Sato") in the story is the cast's "Kenji Sato", not a new character."""
    word = name.casefold()
    return any(word in known_name.casefold().split() for known_name in known)


def _first_names(known: dict[str, str]) -> dict[str, str]:
    """first word -> the cast's name, for cast names of more than one word (a story calls
    "Kenji Sato" "Kenji"), unless that word is a name of its own or the first of two."""
    firsts: dict[str, list[str]] = {}
    for name in known:
        words = name.split()
        if len(words) > 1 and words[0] not in known:
            firsts.setdefault(words[0], []).append(name)
    return {first: names[0] for first, names in firsts.items() if len(names) == 1}


def _as_known(panel: dict, aliases: dict[str, str]) -> dict:
    """The panel with first names said as the cast's full names."""
    present: list[str] = []
    for name in panel["characters"]:
        if aliases.get(name, name) not in present:
            present.append(aliases.get(name, name))
    panel["characters"] = present
    for line in panel["dialogue"]:
        line["speaker"] = aliases.get(line["speaker"], line["speaker"])
    return panel


def _panel(chunk: str, reader: Reader, narrator: str) -> dict:
    present, speakers = reader.beat(chunk, narrator)
    # Only characters: a narrator past the cap on characters is no one the panel can name.
    present = [name for name in present if name in reader.names]
    speakers = [name if name in reader.names else "" for name in speakers]
    dialogue = []
    for match, speaker in zip(QUOTE.finditer(chunk), speakers, strict=True):
        thought = match.group(1).startswith(THOUGHT_MARK)
        text = " ".join(match.group(1).replace(THOUGHT_MARK, "").split())
        text = text[:-1] + "." if text.endswith(",") else text
        if not text.strip(" ."):
            continue
        line = {"speaker": speaker, "text": _clip(text, limits.MAX_DIALOGUE_TEXT)}
        style = balloon_style(text, tag_verb(chunk, match), thought=thought)
        if style != "speech":  # a plain line is drafted as lines always were
            line["style"] = style
        dialogue.append(line)
    narrative = _without_speech(chunk, reader.names)
    narrative = " ".join(narrative.split())
    narrative = re.sub(r"\s+([,.!?;:])", r"\1", narrative).strip(" ,")
    narrative = re.sub(r"^[.,!?;:\s]+", "", narrative)
    caption = ""
    first_sentence = _sentences(narrative)[0] if narrative else ""
    if first_sentence and SCENE_OPENER.match(first_sentence):
        caption = _clip(first_sentence, limits.MAX_CAPTION)
    description = narrative if len(narrative) > 3 else ""
    if not description:
        speakers = [d["speaker"] for d in dialogue if d["speaker"]]
        description = (
            f"Close on {speakers[0]} as they speak." if speakers else "A voice in the scene."
        )
    return {
        "description": _clip(description, limits.MAX_PANEL_DESCRIPTION),
        "shot": _shot(narrative, present, dialogue),
        "characters": present,
        "dialogue": dialogue[: limits.MAX_DIALOGUE_LINES],
        "caption": caption,
    }


def _without_speech(chunk: str, names) -> str:
    """The beat's narrative: its quotations gone, and the tags that touch them ("…," she
    whispers; He says, "…"); "Rika laughed." with no quotation by it stays."""
    who = "|".join([*(re.escape(n) for n in sorted(names, key=len, reverse=True)), *PRONOUNS])
    tag = (
        rf"(?:\b(?:{who})\s+(?:{SPEECH_VERBS})|\b(?:{SPEECH_VERBS})\s+(?:{who}))\b"
        r"(?:\s+(?:me|him|her|them|us|you)\b)?(?:\s+\w+ly)?"
    )
    marked = QUOTE.sub("\x00", chunk)
    marked = re.sub(rf"\x00\s*[,;:—-]?\s*{tag}[,.!?]?", "\x00", marked, flags=re.IGNORECASE)
    marked = re.sub(rf"{tag}\s*[,:]\s*\x00", "\x00", marked, flags=re.IGNORECASE)
    return marked.replace("\x00", " ")


def _shot(narrative: str, present: list[str], dialogue: list[dict]) -> str:
    words = {w.lower() for w in WORD.findall(narrative)}
    if words & ACTION_WORDS:
        return "action"
    if not present:
        return "wide"
    if len(present) == 1 and dialogue:
        return "close-up"
    if len(present) == 1:
        return "medium"
    return "medium" if len(present) <= 3 else "wide"


def _fit(panels: list[dict]) -> list[dict]:
    """Merges neighbours until the draft fits the panel limit."""
    while len(panels) > limits.MAX_PANELS:
        merged = []
        for i in range(0, len(panels), 2):
            pair = panels[i : i + 2]
            merged.append(pair[0] if len(pair) == 1 else _merge(*pair))
        panels = merged
    return panels


def _merge(a: dict, b: dict) -> dict:
    return {
        "description": _clip(f"{a['description']} {b['description']}", 1000),
        "shot": a["shot"],
        "characters": a["characters"] + [c for c in b["characters"] if c not in a["characters"]],
        "dialogue": (a["dialogue"] + b["dialogue"])[: limits.MAX_DIALOGUE_LINES],
        "caption": a["caption"] or b["caption"],
    }


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
