"""Why a place request is refused: the codes in one enum, and the errors that carry them.
(A place's own picture is checked as a sheet upload is: `characters.errors.Refused`.)"""

from __future__ import annotations

from enum import StrEnum

from mangagen.kernel.errors import ApplicationError


class PlaceRefusal(StrEnum):
    NO_SUCH_PLACE = "no_such_place"


class NoSuchPlace(ApplicationError, code=PlaceRefusal.NO_SUCH_PLACE, status=404): ...
