"""Why a translation request is refused: each code once (docs/api.md, "Errors")."""

from __future__ import annotations

from enum import StrEnum

from mangagen.kernel.errors import ApplicationError


class Refusal(StrEnum):
    NO_SUCH_TRANSLATION = "no_such_translation"
    NO_TRANSLATOR = "no_translator"
    TRANSLATOR_FAILED = "translator_failed"
    INVALID = "invalid"


class NoSuchTranslation(ApplicationError):
    """The comic has no translation in that language (404)."""

    code = Refusal.NO_SUCH_TRANSLATION
    status = 404


class NoTranslator(ApplicationError):
    """No chat model is configured to draft translations (`TRANSLATOR`, 409)."""

    code = Refusal.NO_TRANSLATOR
    status = 409


class TranslatorFailed(ApplicationError):
    """The chat model could not be reached or its answer could not be used (502)."""

    code = Refusal.TRANSLATOR_FAILED
    status = 502


class TranslationRefused(ApplicationError):
    """A translation that does not fit the comic as it is now (400, `invalid`)."""

    code = Refusal.INVALID
    status = 400
