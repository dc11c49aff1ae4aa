"""Names in a comic's lists (characters, places): what a save renamed, what it removed.

A pure function, shared by the storyboard's edits and the places' own writes
(places/services.py), which sit below the storyboard's services.
"""

from __future__ import annotations


def renamed(*, before: list[str], after: list[str]) -> dict[str, str]:
    """old name -> its new name, for names of `before` that `after` no longer has: a name
    replaced in its row by a name that is new is a rename, any other goes (to "")."""
    kept, known = set(after), set(before)
    rows = dict(zip(before, after, strict=False))
    return {
        old: (rows[old] if old in rows and rows[old] not in known else "")
        for old in before
        if old not in kept
    }
