"""What a person would draft from a story, checked against the offline drafter.

A story is a dict: its text (`story`), its characters (exactly: a place is
never one), and per panel who speaks each line (`speakers`, in order, ""
when no character does), who must be in the panel (`must`) and who must not
(`never`; every capitalised word of the story that is not a character is
never in a panel either).
"""

from __future__ import annotations

from mangagen.drafting.rules import RuleDrafter


def problems(story: dict) -> list[str]:
    """Where the drafter's draft of `story` differs from a person's: its characters,
    the speaker of each line, the people of each panel."""
    draft = draft_of(story)
    found = []
    if characters(draft) != story["characters"]:
        found.append(f"characters {sorted(characters(draft))}")
    expected = [panel["speakers"] for panel in story["panels"]]
    if speakers(draft) != expected:
        found.append(f"speakers {speakers(draft)}, not {expected}")
    if len(draft.panels) == len(story["panels"]):
        found += wrong_people(story, draft)
    return found


def draft_of(story: dict):
    return RuleDrafter().draft(title="t", story=story["story"], characters=[])


def characters(draft) -> set[str]:
    return {c["name"] for c in draft.characters}


def speakers(draft) -> list[list[str]]:
    return [[line["speaker"] for line in panel["dialogue"]] for panel in draft.panels]


def wrong_people(story: dict, draft) -> list[str]:
    """Each panel that lacks someone of its beat or holds someone it should not."""
    problems = []
    expected = story["panels"]
    for number, (panel, want) in enumerate(zip(draft.panels, expected, strict=True), start=1):
        present = set(panel["characters"])
        missing = want["must"] - present
        wrong = present & (want.get("never", set()) | _not_people(story))
        if missing or wrong:
            problems.append(f"panel {number} lacks {sorted(missing)}, holds {sorted(wrong)}")
    return problems


def _not_people(story: dict) -> set[str]:
    words = {w.strip(".,!?\"’'") for w in story["story"].split()}
    return {w for w in words if w[:1].isupper()} - story["characters"]
