"""Refusals of additions to a comic's lists (characters, places) from outside the
storyboard editor: a series' new chapter, the person's library."""

from mangagen.errors import ApplicationError


class NameTaken(ApplicationError):
    """The comic already has a character (or place) of that name, ignoring case."""

    code = "name_taken"
    status = 409


class ListFull(ApplicationError):
    """The comic has as many characters (or places) as a comic may have."""

    code = "list_full"
    status = 409
