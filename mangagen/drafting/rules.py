"""The offline drafter: paragraphs and sentences become panels.

Quoted speech becomes dialogue, spoken by the nearest named character;
capitalised words that behave like names become characters; the shot follows
from what the panel holds (an opening, action, one speaker, a group).
"""

from __future__ import annotations

import math
import re
from collections import Counter

from mangagen.storyboards import limits

from .draft import Draft, StoryContext

QUOTE = re.compile(r"[“\"«「]([^”\"»」]+)[”\"»」]")
WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’-](?=[^\W\d_]))*")
SENTENCE_END = re.compile(r"[.!?…]+[”\"»」]?\s+")
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
NOT_NAMES = {
    "a", "an", "the", "and", "but", "or", "so", "then", "when", "while", "after", "before",
    "as", "at", "in", "on", "of", "to", "for", "from", "with", "by", "if", "it", "its", "i",
    "he", "she", "they", "we", "you", "his", "her", "their", "our", "your", "my", "me", "him",
    "them", "us", "this", "that", "these", "those", "there", "here", "what", "who", "why",
    "how", "where", "yes", "no", "not", "oh", "ah", "hey", "okay", "ok", "well", "meanwhile",
    "later", "suddenly", "finally", "still", "just", "once", "now", "soon", "even", "all",
    "every", "each", "one", "two", "three", "someone", "something", "nothing", "everyone",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "mr", "mrs", "ms", "dr", "chapter", "end", "is", "was",
    "are", "do", "did", "does", "don't", "can't", "i'm", "it's", "let's", "come", "go", "look",
    "wait", "run", "stop", "please", "thank", "thanks", "sorry", "good", "great", "maybe",
    "director", "captain", "doctor", "professor", "detective", "officer", "sergeant", "lord",
    "lady", "king", "queen", "prince", "princess", "master", "sensei", "uncle", "aunt",
    "grandma", "grandpa", "mom", "dad", "mother", "father", "sister", "brother", "miss",
}  # fmt: skip
SPEECH_VERBS = (
    "said|says|asked|asks|shouted|shouts|whispered|whispers|replied|replies|cried|cries|"
    "yelled|yells|answered|answers|called|calls|muttered|mutters|murmured|murmurs|added|"
    "laughed|sighed|snapped|growled|screamed"
)
NAME_VERBS = set(SPEECH_VERBS.split("|")) | {
    "ran", "caught", "looked", "took", "grabbed", "smiled", "nodded", "turned", "stood", "sat",
    "walked", "watched", "held", "opened", "stepped", "pulled", "pushed", "reached", "jumped",
    "fell", "stared", "frowned", "was", "had", "could", "would", "will", "is", "has", "knew",
    "felt", "saw", "heard", "came", "went", "left", "waited", "hid", "gasped", "froze",
}  # fmt: skip
ATTRIBUTION = re.compile(
    rf"(?:\b(?:he|she|they|i|we|you)\s+(?:{SPEECH_VERBS})\b(?:\s+\w+ly)?"
    rf"|\b(?:{SPEECH_VERBS})\s+(?:he|she|they|i|we)\b)[,.!?]?",
    re.IGNORECASE,
)


def find_names(text: str) -> list[str]:
    """Capitalised words that behave like names, most frequent first.

    A word counts when it is capitalised in the middle of a sentence, occurs
    twice, or opens a sentence followed by a verb people do ("Kenji caught").
    """
    counts: Counter[str] = Counter()
    likely: set[str] = set()
    for sentence in _sentences(QUOTE.sub(" . ", text)) + QUOTE.findall(text):
        words = [m.group() for m in WORD.finditer(sentence)]
        for position, word in enumerate(words):
            if len(word) < 2 or not word[0].isupper() or word.lower() in NOT_NAMES:
                continue
            if word.isupper() and len(word) > 3:
                continue  # SHOUTING, not a name
            counts[word] += 1
            following = words[position + 1].lower() if position + 1 < len(words) else ""
            if position > 0 or following in NAME_VERBS:
                likely.add(word)
    return [w for w, n in counts.most_common() if w in likely or n >= 2]


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
        """`context` (a series' places and last beats) is for drafters that read it; the
        rules know the cast from `characters`."""
        known = {c["name"]: c.get("description", "") for c in characters}
        # Names differ ignoring case (as the API requires): "Kenji" in the
        # story is the character "kenji" already there.
        taken = {name.casefold() for name in known}
        for name in find_names(story):
            if len(known) >= limits.MAX_CHARACTERS:
                break
            name = name[: limits.MAX_NAME]
            if name.casefold() not in taken and not _part_of_known(name, known):
                known[name] = ""
                taken.add(name.casefold())
        aliases = _first_names(known)
        names = list(known) + list(aliases)
        panels = []
        for paragraph in _paragraphs(story):
            sentences = _sentences(paragraph)
            size = 2 if len(sentences) > 3 else max(len(sentences), 1)
            for start in range(0, len(sentences), size):
                panel = _panel(" ".join(sentences[start : start + size]), names)
                panels.append(_as_known(panel, aliases))
        panels = _fit(panels)
        if panels:
            first = panels[0]
            if not first["characters"] and first["shot"] == "wide":
                first["shot"] = "establishing"
        return Draft(
            characters=[{"name": n, "description": d} for n, d in known.items()],
            panels=panels,
        )


def _part_of_known(name: str, known: dict[str, str]) -> bool:
    """Known cast names come first: "Kenji" (or "Sato") in the story is the cast's
    "Kenji Sato", not a new character."""
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


def _paragraphs(story: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n|\r\n\s*\r\n", story) if p.strip()]


def _sentences(text: str) -> list[str]:
    """Splits at sentence ends that are not inside a quotation."""
    text = " ".join(text.split())
    sentences, start, inside = [], 0, False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "“«「":
            inside = True
        elif ch in "”»」":
            inside = False
        elif ch == '"':
            inside = not inside
        if not inside:
            match = SENTENCE_END.match(text, i)
            if match and ch in ".!?…":
                sentences.append(text[start : match.end()].strip())
                start = i = match.end()
                continue
        i += 1
    if text[start:].strip():
        sentences.append(text[start:].strip())
    return sentences


def _panel(chunk: str, names: list[str]) -> dict:
    present = _names_in(chunk, names)
    dialogue = []
    for match in QUOTE.finditer(chunk):
        text = " ".join(match.group(1).split())
        text = text[:-1] + "." if text.endswith(",") else text
        if not text.strip(" ."):
            continue
        speaker = _speaker(chunk, match.start(), match.end(), names)
        dialogue.append({"speaker": speaker, "text": _clip(text, limits.MAX_DIALOGUE_TEXT)})
        if speaker and speaker not in present:
            present.append(speaker)
    narrative = ATTRIBUTION.sub(" ", QUOTE.sub(" ", chunk))
    for name in names:
        narrative = re.sub(
            rf"(?:\b{re.escape(name)}\s+(?:{SPEECH_VERBS})|\b(?:{SPEECH_VERBS})\s+"
            rf"{re.escape(name)})\b(?:\s+\w+ly)?[,.!?]?(?=\s|$)",
            " ",
            narrative,
        )
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


def _names_in(text: str, names: list[str]) -> list[str]:
    found = []
    for match in WORD.finditer(QUOTE.sub(" ", text)):
        word = match.group().strip("’'-")
        for name in names:
            if word in (name, f"{name}’s", f"{name}'s") and name not in found:
                found.append(name)
    return found


def _speaker(text: str, start: int, end: int, names: list[str]) -> str:
    """Who says the quotation at text[start:end].

    A name in the quotation's own sentence (outside quotes) wins, nearest
    first; otherwise ("…," he said) the last name mentioned before it.
    """
    outside = QUOTE.sub(lambda m: " " * len(m.group()), text)
    sentence_start = max(outside.rfind(p, 0, start) for p in (". ", "! ", "? ")) + 1
    ends = [i for i in (outside.find(p, end) for p in (". ", "! ", "? ")) if i != -1]
    sentence_end = min(ends) if ends else len(text)
    best, distance, last_before, last_at = "", math.inf, "", -1
    for name in names:
        for match in re.finditer(rf"\b{re.escape(name)}\b", outside):
            if sentence_start <= match.start() <= sentence_end:
                d = start - match.end() if match.end() <= start else match.start() - end
                if d < distance:
                    best, distance = name, d
            elif match.end() <= start and match.start() > last_at:
                last_before, last_at = name, match.start()
    return best or last_before


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
