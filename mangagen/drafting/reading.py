"""Who is who in a story, read as a person reads it: people and places, narrators,
and whom a pronoun means.

Clear rules, not a language model (English NLP models on PyPI are third-party
re-uploads of others' weights):

- **Names** are capitalised words that behave like names: capitalised in the
  middle of a sentence, met twice, or opening a sentence before a verb only a
  person does ("Kenji caught", not "Night fell").
- **Places.** A capitalised name after a place preposition (in, at, above,
  under, of, to, from, toward, …, an article allowed between: "to the Blue
  Heron"), or next to a place word ("Central Station", "Mount Koya"), is a
  place until it speaks or acts somewhere ("Aiko laughed", "said Aiko").
- **Narrators.** A paragraph that only names someone ("MIKA", "— Hana —",
  "Part two: Goro") names the narrator of the first-person section after it;
  "My name is Noa" / "I'm Yusuke" does too. "I", "me", "my" are the narrator.
- **Genders**, from the story itself: "her sister Rika", "a man named Goro",
  "Her name is Yuki", "Mr", and a sentence about one person followed by
  "He …" / "She …" (or ", her arms folded").
- **Pronouns** mean the most recently mentioned person they can mean: of
  their gender or of none known, never the narrator for he or she. "Aiko
  laughs and takes his hand" puts the last man mentioned in the panel.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

QUOTE = re.compile(r"[“\"«「]([^”\"»」]+)[”\"»」]")
WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’-](?=[^\W\d_]))*")
SENTENCE_END = re.compile(r"[.!?…]+[”\"»」]?\s+")


def _forms(*verbs: str) -> set[str]:
    """Each verb with its -s and -ed forms (irregular pasts are listed beside them)."""
    forms = set()
    for verb in verbs:
        forms.add(verb)
        if verb.endswith("y") and verb[-2] not in "aeiou":
            forms |= {verb[:-1] + "ies", verb[:-1] + "ied"}
        elif verb.endswith(("s", "sh", "ch", "x", "z")):
            forms |= {verb + "es", verb + "ed"}
        elif verb.endswith("e"):
            forms |= {verb + "s", verb + "d"}
        else:
            forms |= {verb + "s", verb + "ed"}
    return forms


REPLIES = _forms("reply", "answer", "respond", "retort")
# A thought is tagged like speech ("…) he thinks"): its thinker is found the same way.
THINKING = _forms("think", "wonder") | {"thought"}
SHOUTING = _forms("shout", "yell", "cry", "scream", "roar", "bellow", "exclaim", "holler")
WHISPERING = _forms("whisper", "murmur", "mutter", "mumble", "breathe")
SPEECH = (
    _forms(
        "say", "ask", "shout", "whisper", "cry", "yell", "call", "mutter", "murmur", "add",
        "laugh", "sigh", "growl", "scream", "hiss", "breathe", "insist", "warn", "promise",
        "explain", "continue", "repeat", "gasp", "groan", "exclaim", "demand", "tell",
        "offer", "agree", "whimper", "tease", "joke", "mumble", "stammer", "roar", "bark",
        "plead", "announce", "call", "mouth", "chuckle", "giggle", "sob", "snarl",
    )
    | REPLIES
    | {"said", "told", "snapped", "snaps", "begged", "begs", "admitted", "admits", "sobbed"}
    | THINKING
)  # fmt: skip
# Verbs only a person does: a name before one is a person, even opening a sentence.
ACTS = (
    SPEECH
    | _forms(
        "look", "smile", "turn", "walk", "watch", "open", "pull", "push", "reach", "jump",
        "stare", "frown", "wait", "bow", "climb", "raise", "aim", "press", "check", "hand",
        "glance", "squeeze", "follow", "carry", "knock", "study", "toss", "lock", "count",
        "wave", "join", "kiss", "punch", "kick", "dodge", "dash", "chase", "attack", "wipe",
        "touch", "point", "lean", "blink", "cough", "pause", "hesitate", "dance", "yawn",
        "lift", "clutch", "wrap", "fold", "pour", "type", "deliver", "rush", "hurry",
        "march", "crouch", "kneel", "peer", "shove", "yank", "wink", "scowl", "blush",
        "gulp", "swallow", "tremble", "shiver", "nudge", "glare", "sniff", "decide",
        "sprint", "hide", "pick", "sip", "grab", "nod", "step", "grin", "shrug", "jog",
        "drop", "hug", "slip", "tug", "stop", "wake",
    )
    | {
        "ran", "runs", "run", "took", "takes", "grabbed", "nodded", "stepped", "held",
        "holds", "knew", "knows", "saw", "sees", "heard", "hears", "hid", "froze",
        "freezes", "grinned", "shrugged", "drove", "drives", "rode", "rides", "led",
        "leads", "drew", "draws", "slipped", "jogged", "lit", "lights", "reads", "shook",
        "shakes", "gave", "gives", "give", "wore", "wears", "met", "meets", "meet", "burst",
        "bursts", "dropped", "slid", "slides", "woke", "knelt", "hummed", "hums",
        "hugged", "caught", "catches", "thought", "thinks", "fought", "fights", "threw",
        "throws", "swung", "struck", "strikes", "wept", "weeps", "ate", "eats", "drank",
        "drinks", "sang", "sings", "bought", "buys", "brought", "brings", "wrote", "writes",
        "spun", "stood", "stands", "sat", "sits", "tugged", "stopped", "sipped", "felt",
    }
)  # fmt: skip
PLACE_PREPOSITIONS = {
    "in", "at", "above", "under", "of", "to", "into", "onto", "on", "from", "toward",
    "towards", "across", "through", "over", "below", "beyond", "near", "inside",
    "outside", "around", "since", "past", "along", "via", "upon", "throughout",
}  # fmt: skip
PLACE_WORDS = {
    "street", "st", "road", "avenue", "ave", "lane", "alley", "bridge", "station",
    "platform", "park", "tower", "city", "town", "village", "harbor", "harbour", "port",
    "pier", "dock", "docks", "river", "lake", "mountain", "mount", "mt", "hill", "hills",
    "forest", "woods", "bay", "island", "isle", "castle", "palace", "temple", "shrine",
    "school", "academy", "high", "university", "college", "hospital", "market", "square",
    "plaza", "district", "ward", "quarter", "gate", "hall", "inn", "tavern", "cafe",
    "café", "bar", "hotel", "mall", "museum", "library", "church", "cathedral", "valley",
    "desert", "sea", "ocean", "beach", "coast", "cape", "falls", "canyon", "ridge",
    "peak", "point", "province", "kingdom", "empire", "republic", "prefecture", "county",
    "boulevard", "airport", "building", "arcade", "restaurant", "club", "garden",
    "gardens", "stadium", "lighthouse", "highway", "crossing", "heights", "springs",
}  # fmt: skip
ARTICLES = {"the", "a", "an"}
MALE = {"he", "him", "his", "himself"}
FEMALE = {"she", "her", "hers", "herself"}
FIRST = {"i", "me", "my", "mine", "myself"}
FIRST_PLURAL = {"we", "us", "our", "ours", "ourselves"}
PLURAL = {"they", "them", "their", "theirs", "themselves"}
REFLEXIVE = {"himself", "herself", "myself", "ourselves", "themselves"}
# Words that say who someone is to someone: "her brother Taro" names him, it does not
# put her in the panel.
KIN = {
    "brother": "m", "father": "m", "dad": "m", "uncle": "m", "son": "m", "husband": "m",
    "boyfriend": "m", "grandpa": "m", "grandfather": "m", "nephew": "m", "cousin": "",
    "sister": "f", "mother": "f", "mom": "f", "mum": "f", "aunt": "f", "daughter": "f",
    "wife": "f", "girlfriend": "f", "grandma": "f", "grandmother": "f", "niece": "f",
    "friend": "", "partner": "", "boss": "", "teacher": "", "master": "m",
}  # fmt: skip
TITLES = {
    "mr": "m", "sir": "m", "lord": "m", "king": "m", "prince": "m", "monk": "m",
    "mrs": "f", "ms": "f", "miss": "f", "madam": "f", "lady": "f", "queen": "f",
    "princess": "f", "nun": "f",
}  # fmt: skip
PEOPLE_NOUNS = {
    "man": "m", "boy": "m", "gentleman": "m", "guy": "m", "woman": "f", "girl": "f",
    "lady": "f", "kid": "", "child": "", "person": "", "stranger": "",
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
    "together", "inside", "outside", "today", "tonight", "tomorrow", "yesterday", "part",
    "behind", "below", "above", "far", "near", "nobody", "everybody", "somebody", "sir",
}  # fmt: skip
HEADER_NOISE = {
    "part", "chapter", "book", "act", "section", "interlude", "prologue", "epilogue",
    "pov", "narrator", "the", "by", "one", "two", "three", "four", "five", "six", "seven",
    "eight", "nine", "ten", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x",
}  # fmt: skip
NARRATOR_INTRO = re.compile(r"\b(?i:my name is|i am|i'm|i’m|call me)\s+([A-Z][\w'’-]*)")
NAMED = re.compile(r"\b(\w+)\s+(?:named|called)\s+([A-Z][\w'’-]*)")
NAME_IS = re.compile(r"\b(his|her)\s+name\s+is\s+([A-Z][\w'’-]*)", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """Splits at sentence ends that are not inside a quotation."""
    text = " ".join(text.split())
    found, start, inside = [], 0, False
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
                found.append(text[start : match.end()].strip())
                start = i = match.end()
                continue
        i += 1
    if text[start:].strip():
        found.append(text[start:].strip())
    return found


def paragraphs(story: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n|\r\n\s*\r\n", story) if p.strip()]


def outside_quotes(text: str) -> str:
    """`text` with every quotation blanked out, so positions stay where they were."""
    return QUOTE.sub(lambda m: " " * len(m.group()), text)


def _base(word: str) -> str:
    """A word lower-cased, a contraction cut to its first part ("I'm" → "i")."""
    return re.split(r"['’]", word.lower())[0]


# --- names and places -------------------------------------------------------------------------


def name_candidates(text: str) -> Counter[str]:
    """Capitalised words that behave like names, with how often they occur.

    A word counts when it is capitalised in the middle of a sentence, occurs
    twice, or opens a sentence before a verb only a person does.
    """
    counts: Counter[str] = Counter()
    likely: set[str] = set()
    spoken = [s for quote in QUOTE.findall(text) for s in sentences(quote)]
    for sentence in sentences(QUOTE.sub(" . ", text)) + spoken:
        words = [m.group() for m in WORD.finditer(sentence)]
        for position, word in enumerate(words):
            if len(word) < 2 or not word[0].isupper() or word.lower() in NOT_NAMES:
                continue
            if word.isupper() and len(word) > 3:
                continue  # SHOUTING, not a name
            if word.lower() in PLACE_WORDS:
                continue
            counts[word] += 1
            following = words[position + 1].lower() if position + 1 < len(words) else ""
            if position > 0 or following in ACTS:
                likely.add(word)
    return Counter({w: n for w, n in counts.items() if w in likely or n >= 2})


@dataclass
class _Marks:
    place: Counter[str] = field(default_factory=Counter)
    person: Counter[str] = field(default_factory=Counter)


def _runs(text: str) -> list[list[re.Match]]:
    """Runs of capitalised words next to each other ("Central Station", "Blue Heron")."""
    runs: list[list[re.Match]] = []
    for match in WORD.finditer(text):
        if not match.group()[0].isupper():
            continue
        previous = runs[-1][-1] if runs else None
        if previous is not None and text[previous.end() : match.start()] == " ":
            runs[-1].append(match)
        else:
            runs.append([match])
    return runs


def _marks(text: str, names: set[str]) -> _Marks:
    """Where each name is used as a place, and where as a person (speaking, acting)."""
    marks = _Marks()
    words = list(WORD.finditer(text))
    index = {m.start(): i for i, m in enumerate(words)}
    for run in _runs(text):
        members = [m.group() for m in run if m.group().lower() not in NOT_NAMES]
        if not members:
            continue
        first = index[run[0].start()]
        last = index[run[-1].start()]
        before = _leading(text, words, first)
        after = words[last + 1].group().lower() if last + 1 < len(words) else ""
        gap = text[run[-1].end() : words[last + 1].start()] if after else ""
        after_after = words[last + 2].group().lower() if last + 2 < len(words) else ""
        # After a preposition a name is in that phrase ("a banner of Hakone snapped"):
        # the verb that follows is not its doing.
        in_phrase = before in PLACE_PREPOSITIONS
        placed = in_phrase or any(w.lower() in PLACE_WORDS for w in members)
        acts = not in_phrase and (
            (gap.strip() == "" and after in ACTS) or (after.endswith("ly") and after_after in ACTS)
        )
        spoken_of = before in SPEECH  # "said Kenji"
        for name in members:
            if name not in names:
                continue
            if acts or spoken_of:
                marks.person[name] += 1
            elif placed:
                marks.place[name] += 1
    for match in NAMED.finditer(text):  # "a man named Goro"
        if match.group(1).lower() in PEOPLE_NOUNS:
            marks.person[match.group(2)] += 1
    return marks


def _leading(text: str, words: list[re.Match], first: int) -> str:
    """The word just before words[first] in the same clause (an article skipped), lower
    case; "" when punctuation or the start of the text comes first."""
    position = first - 1
    if position >= 0 and words[position].group().lower() in ARTICLES:
        if text[words[position].end() : words[position + 1].start()].strip():
            return ""
        position -= 1
    if position < 0 or text[words[position].end() : words[position + 1].start()].strip():
        return ""
    return words[position].group().lower()


# --- narrators --------------------------------------------------------------------------------


def header_name(paragraph: str) -> str | bool | None:
    """False when the paragraph is a passage; for a line that only heads what follows
    ("MIKA", "— Hana —", "Part two: Goro", "Chapter 3"), the name it carries or None."""
    line = paragraph.strip()
    words = WORD.findall(line)
    if "\n" in line or QUOTE.search(line) or re.search(r"[.!?…]", line) or not words:
        return False
    if len(words) > 6:
        return False
    named = [w for w in words if w.lower() not in HEADER_NOISE and w[0].isupper()]
    return named[-1] if named else None


def _first_person(text: str) -> bool:
    return any(_base(w) in FIRST | FIRST_PLURAL for w in WORD.findall(outside_quotes(text)))


@dataclass
class Passage:
    """A paragraph to draw, with the narrator telling it ("" for a third-person one)."""

    text: str
    narrator: str = ""


def passages(story: str, spelled: dict[str, str]) -> tuple[list[Passage], set[str]]:
    """The story's paragraphs that are passages (not headings), each with its narrator,
    and every narrator's name. `spelled` maps casefolded names to how the story spells
    them, so a heading "MIKA" names Mika."""
    found: list[Passage] = []
    narrators: set[str] = set()
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    for paragraph in paragraphs(story):
        heading = header_name(paragraph)
        if heading is False:
            sections[-1][1].append(paragraph)
        else:
            sections.append((heading, []))
    for heading, texts in sections:
        narrator = ""
        if heading and any(_first_person(t) for t in texts):
            narrator = spelled.get(heading.casefold(), heading.title())
        for text in texts:
            intro = NARRATOR_INTRO.search(outside_quotes(text))
            if intro:
                narrator = spelled.get(intro.group(1).casefold(), intro.group(1))
            if narrator:
                narrators.add(narrator)
            found.append(Passage(text, narrator))
    return found, narrators


# --- genders ----------------------------------------------------------------------------------


def genders(texts: list[Passage], people: set[str]) -> dict[str, str]:
    """name → "m" or "f", from what the story itself says; absent when it says nothing
    (or as much each way)."""
    votes: dict[str, Counter[str]] = {}

    def vote(name: str, gender: str, weight: float = 1.0) -> None:
        if name in people and gender:
            votes.setdefault(name, Counter())[gender] += weight

    for passage in texts:
        text = outside_quotes(passage.text)
        words = [m.group() for m in WORD.finditer(text)]
        for i, word in enumerate(words[1:], start=1):  # "her sister Rika", "Mr Tanaka"
            before = words[i - 1].lower()
            gender = KIN.get(before) or TITLES.get(before)
            if gender:
                vote(word, gender)
        for match in NAMED.finditer(text):  # "a man named Goro"
            vote(match.group(2), PEOPLE_NOUNS.get(match.group(1).lower(), ""))
        for match in NAME_IS.finditer(text):  # "Her name is Yuki"
            vote(match.group(2), "m" if match.group(1).lower() == "his" else "f")
    previous: tuple[set[str], set[str]] = (set(), set())  # the last sentence's people, pronouns
    for passage in texts:
        for sentence in sentences(passage.text):
            bare = outside_quotes(sentence)
            tokens = [m.group() for m in WORD.finditer(bare)]
            named = {t for t in tokens if t in people and t != passage.narrator}
            pronouns = {_base(t) for t in tokens if _base(t) in MALE | FEMALE}
            first = _base(tokens[0]) if tokens else ""
            if first in ("he", "she") and not named and len(previous[0]) == 1:
                # "Kenji caught her hand. She smiled.": she may be the other one.
                same = previous[1] & (MALE if first == "he" else FEMALE)
                vote(next(iter(previous[0])), _gender(first), 0.5 if same else 1.0)
            _within(bare, named, vote)
            previous = (named, pronouns)
    return {
        name: ("m" if count["m"] > count["f"] else "f")
        for name, count in votes.items()
        if count["m"] != count["f"]
    }


def _gender(pronoun: str) -> str:
    return "m" if pronoun.lower() in MALE else "f"


def _within(bare: str, named: set[str], vote) -> None:
    """Within a sentence about one person: ", her arms folded", ", and he ran"."""
    for match in re.finditer(r",\s+(?:and\s+)?(he|she|his|her)\b", bare, re.IGNORECASE):
        gender = _gender(match.group(1))
        earlier = [m.group() for m in WORD.finditer(bare[: match.start()])]
        who = {t for t in earlier if t in named}
        same = [t for t in earlier if _base(t) in (MALE if gender == "m" else FEMALE)]
        if len(who) == 1 and not same:
            vote(next(iter(who)), gender, 0.5)


# --- the cast of a story ----------------------------------------------------------------------


@dataclass
class Cast:
    """A story read once: its passages with their narrators, its people (most often
    named first), the names used only as places, and the genders it gives."""

    passages: list[Passage]
    people: list[str]
    places: set[str]
    gender: dict[str, str]


def read_cast(story: str, known: list[str] | None = None) -> Cast:
    """Reads the story's people, places, narrators and genders. `known` are names
    already characters: people whatever the story does with them."""
    known = known or []
    candidates = name_candidates(story)
    spelled = {name.casefold(): name for name in [*candidates, *known]}
    texts, narrators = passages(story, spelled)
    introduced = {m.group(2) for m in NAMED.finditer(story) if m.group(1).lower() in PEOPLE_NOUNS}
    names = set(candidates) | narrators | introduced
    marks = _marks(story, names)
    places = {n for n in names if marks.place[n] and not marks.person[n]} - set(known)
    order = Counter(candidates)
    for name in narrators | introduced:
        order[name] += 1
    people = [n for n, _ in order.most_common() if n not in places]
    everyone = set(people) | set(known)
    return Cast(texts, people, places, genders(texts, everyone))


class Reader:
    """Reads beat after beat, remembering who was mentioned last, so that a pronoun,
    a quotation's speaker and a "we" mean who a person reading would take them to."""

    def __init__(self, cast: Cast, names: list[str]):
        self.gender = cast.gender
        self.names = set(names)
        self.recent: list[str] = []  # the last mentioned last
        self.last_beat: list[str] = []

    def mention(self, name: str) -> None:
        if name in self.recent:
            self.recent.remove(name)
        self.recent.append(name)

    def resolve(self, gender: str, *, narrator: str, besides: str = "") -> str:
        """The person a he or she means: the most recently mentioned who can be one (of
        that gender or none known), never the narrator, and `besides` only when there
        is no one else (a reply comes from someone other than who spoke last)."""
        fits = [
            n
            for n in reversed(self.recent)
            if n != narrator and self.gender.get(n, gender) == gender
        ]
        others = [n for n in fits if n != besides]
        return (others or fits or [""])[0]

    def beat(self, chunk: str, narrator: str) -> tuple[list[str], list[str]]:
        """Who is in this beat (named, meant by a pronoun, speaking) and who says each of
        its quotations, in order ("" for no one the story names)."""
        bare = outside_quotes(chunk)
        events = [(m.start(), "word", m) for m in WORD.finditer(bare)]
        events += [(m.start(), "quote", m) for m in QUOTE.finditer(chunk)]
        present: list[str] = []
        said: list[str] = []

        def add(name: str) -> None:
            if name and name not in present:
                present.append(name)
            if name:
                self.mention(name)

        last_quote = None
        for _, kind, match in sorted(events, key=lambda e: e[0]):
            if kind == "quote":
                speaker = self._speaker(chunk, bare, match, last_quote, said, narrator)
                said.append(speaker)
                add(speaker)
                last_quote = match
                continue
            word = match.group()
            if word in self.names:
                add(word)
                continue
            group = _base(word) in PLURAL | FIRST_PLURAL
            for name in self._meant(word, match, bare, narrator):
                if group:  # in the panel, not the last one named: "joined them. …," he said
                    if name and name not in present:
                        present.append(name)
                else:
                    add(name)
        self.last_beat = present
        return present, said

    def _meant(self, word: str, match, bare: str, narrator: str) -> list[str]:
        """The people a pronoun in the narrative means (none for a word that is not one)."""
        base = _base(word)
        following = bare[match.end() :].split(maxsplit=1)
        nxt = following[0].strip(",.;:!?").lower() if following else ""
        if base in FIRST:
            return [narrator]
        if base in FIRST_PLURAL:
            return [narrator, *self.last_beat] if narrator else []
        if base in PLURAL:
            return list(self.last_beat) if len(self.last_beat) > 1 else []
        if base not in MALE | FEMALE or base in REFLEXIVE or nxt in KIN:
            return []  # "her brother Taro": he is named, she need not be there
        return [self.resolve(_gender(base), narrator=narrator)]

    def _speaker(self, chunk, bare, quote, last_quote, said, narrator) -> str:
        """Who says `quote`: the person its tag names ("…," she whispers; Kenji says,
        "…"); else the one who spoke the quotation just before, when nothing came between;
        else the person the narrative last named in this beat; else no one."""
        end = len(chunk)
        after_quote = QUOTE.search(chunk, quote.end())
        if after_quote:
            end = after_quote.start()
        after = bare[quote.end() : end]
        tag = TAG_AFTER.match(after)
        previous = said[-1] if said else ""
        if tag:
            verb = tag.group("verb") or tag.group("verb2")
            return self._who(tag.group("who") or tag.group("who2"), verb, narrator, previous)
        start = last_quote.end() if last_quote else 0
        before = bare[start : quote.start()]
        clause = re.split(r"[.!?…]\s", before)[-1]
        lead = TAG_BEFORE.search(clause)
        subject = lead and next(
            (
                m.group()
                for m in WORD.finditer(clause[: lead.start()])
                if m.group() in self.names or _base(m.group()) in MALE | FEMALE | FIRST
            ),
            None,
        )
        if subject:
            return self._who(subject, lead.group("verb"), narrator, previous)
        if last_quote is not None and not before.strip(" ,.;:—-"):
            return previous
        if last_quote is not None and TAG_AFTER.fullmatch(before.rstrip()):
            return previous  # "…," Daichi whispered. "…"
        named = [m.group() for m in WORD.finditer(before) if m.group() in self.names]
        return named[-1] if named else ""

    def _who(self, word: str, verb: str, narrator: str, previous: str) -> str:
        """The person a tag's name or pronoun means."""
        if word in self.names:
            return word
        base = _base(word)
        if base in FIRST:
            return narrator
        if base in MALE | FEMALE:
            besides = previous if verb.lower() in REPLIES else ""
            return self.resolve(_gender(base), narrator=narrator, besides=besides)
        return ""


_SPEECH = "|".join(sorted(SPEECH, key=len, reverse=True))
_WHO = r"[A-Z][\w'’-]*|he|she|i|He|She|I"
# After a quotation: `, she whispers`, `, said Kenji`, `, Kenji said quietly`.
TAG_AFTER = re.compile(
    rf"\s*[,;:—-]?\s*(?:(?P<verb>{_SPEECH})\s+(?P<who>{_WHO})\b"
    rf"|(?P<who2>{_WHO})\s+(?:\w+ly\s+)?(?P<verb2>{_SPEECH})\b)[^.!?…]*[.!?…]?",
)
# Before one, in its own sentence: `He says, `, `Yuki … whispers into her phone, `; the
# speaker is the first name or pronoun before the verb.
TAG_BEFORE = re.compile(rf"\b(?P<verb>{_SPEECH})\b[^.!?…]*[,:]\s*$")


def tag_verb(chunk: str, quote: re.Match) -> str:
    """The speech verb of the tag touching `quote` in `chunk` ("…," she *whispers*;
    Kenji *shouts*, "…"), lower case, or "" when none does."""
    after_quote = QUOTE.search(chunk, quote.end())
    after = chunk[quote.end() : after_quote.start() if after_quote else len(chunk)]
    tag = TAG_AFTER.match(after)
    if tag:
        return (tag.group("verb") or tag.group("verb2")).lower()
    before = chunk[: quote.start()]
    earlier = list(QUOTE.finditer(before))
    clause = re.split(r"[.!?…]\s", before[earlier[-1].end() if earlier else 0 :])[-1]
    lead = TAG_BEFORE.search(clause)
    return lead.group("verb").lower() if lead else ""
