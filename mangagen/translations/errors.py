"""Why a translation request is refused: each code once (docs/api.md, "Errors")."""

from __future__ import annotations

from enum import StrEnum

from mangagen.kernel.errors import ApplicationError


class Refusal(StrEnum):
    NO_SUCH_TRANSLATION = "no_such_translation"
    NO_TRANSLATOR = "no_translator"
    TRANSLATOR_FAILED = "translator_failed"
    INVALID = "invalid"


class NoSuchTranslation(ApplicationError, code=Refusal.NO_SUCH_TRANSLATION, status=404):
    """The comic has no translation in that language (404)."""


class NoTranslator(ApplicationError, code=Refusal.NO_TRANSLATOR, status=409):
    """No chat model is configured to draft translations (`TRANSLATOR`, 409)."""


class TranslatorFailed(ApplicationError, code=Refusal.TRANSLATOR_FAILED, status=502):
    """The chat model could not be reached or its answer could not be used (502)."""


class TranslationRefused(ApplicationError, code=Refusal.INVALID, status=400):
    """A translation that does not fit the comic as it is now (400, `invalid`)."""
