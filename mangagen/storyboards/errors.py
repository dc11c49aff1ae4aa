"""Why a storyboard request is refused: the codes in one enum, and the errors that carry
them. Additions to a comic's lists (characters, places) from outside the storyboard
editor (a series' new chapter, the person's library) are refused here too."""

from enum import StrEnum

from mangagen.kernel.errors import ApplicationError


class StoryboardRefusal(StrEnum):
    EMPTY_STORY = "empty_story"
    NAME_TAKEN = "name_taken"
    LIST_FULL = "list_full"


class EmptyStory(ApplicationError, code=StoryboardRefusal.EMPTY_STORY, status=400):
    """A draft asked for with no story written: panels are drafted from it."""


class NameTaken(ApplicationError, code=StoryboardRefusal.NAME_TAKEN, status=409):
    """The comic already has a character (or place) of that name, ignoring case."""


class ListFull(ApplicationError, code=StoryboardRefusal.LIST_FULL, status=409):
    """The comic has as many characters (or places) as a comic may have."""
