"""Why a page or an export is refused: the codes in one enum, and the errors that carry
them. (A drawing budget spent is `quotas.Limit.DRAWING`; a language the comic has no
translation in, `translations.errors.NoSuchTranslation`.)"""

from __future__ import annotations

from enum import StrEnum

from mangagen.kernel.errors import ApplicationError, InvalidInput


class ExportRefusal(StrEnum):
    NOTHING_TO_EXPORT = "nothing_to_export"
    EXPORT_TOO_LARGE = "export_too_large"


class NothingToExport(ApplicationError, code=ExportRefusal.NOTHING_TO_EXPORT, status=409): ...


class UnknownFormat(InvalidInput):
    """`?format=` names no format this export makes (400 `invalid`)."""


class ExportTooLarge(ApplicationError, code=ExportRefusal.EXPORT_TOO_LARGE, status=409):
    """A layered export of every page would pass LAYERED_EXPORT_MAX_BYTES: the pages can
    be had one at a time."""


class NoSuchPage(InvalidInput):
    """`?page=` names no page of the comic (400 `invalid`)."""


class ReshapeRefusal(StrEnum):
    NOT_RESHAPED = "not_reshaped"


class NotReshaped(ApplicationError, code=ReshapeRefusal.NOT_RESHAPED, status=409):
    """A choice for a panel whose picture fits its cell (drawn for that shape, or fitted
    to it already): nothing to choose."""
