"""Why a character sheet request is refused: the codes in one enum (an upload's problems
are `UploadProblem`), and the errors that carry them."""

from __future__ import annotations

from enum import StrEnum

from mangagen.kernel.errors import ApplicationError

from .models import UploadProblem


class SheetRefusal(StrEnum):
    SHEET_ERROR = "sheet_error"
    NO_SUCH_CHARACTER = "no_such_character"
    NO_SUCH_OUTFIT = "no_such_outfit"


class SheetError(ApplicationError, code=SheetRefusal.SHEET_ERROR, status=409): ...


class NoSuchCharacter(SheetError, code=SheetRefusal.NO_SUCH_CHARACTER, status=404): ...


class NoSuchOutfit(SheetError, code=SheetRefusal.NO_SUCH_OUTFIT, status=404): ...


class Refused(ApplicationError, status=400, codes=UploadProblem):
    """An upload refused; its `error` code is the problem (docs/api.md)."""

    def __init__(self, problem: UploadProblem, detail: str, *, extra: dict | None = None):
        super().__init__(detail)
        self.problem, self.detail = problem, detail
        self.code = problem.value
        self._extra = extra or {}

    def extra(self) -> dict:
        """The budget a `sheet_uploads_full` names (PICTURE_BYTES_PER_PERSON) and its bytes."""
        return self._extra
