"""The API's request-body parsers: DRF's, with every body they cannot read answered as
400 `parse_error` in the one error shape, in fixed words.

DRF's own let some bodies out of that shape: past Django's bounds
(`DATA_UPLOAD_MAX_MEMORY_SIZE`, `DATA_UPLOAD_MAX_NUMBER_FIELDS`,
`DATA_UPLOAD_MAX_NUMBER_FILES`) or a multipart form Django finds suspicious, a
body raises a SuspiciousOperation, which Django answers with an HTML 400 page;
JSON nested deeper than the interpreter recurses raises RecursionError (a 500).
The others quote the parser's words ("Multipart form parse error - Invalid
boundary in multipart: None", the charset the client sent). Here each is a
ParseError whose `detail` says what was wrong in the interface's language (the
exception handler, `mangagen.api.errors`, turns the bounds' refusals, which DRF
meets before a parser runs, into one with `body_refusal`); the parser's words
go to the log.

A JSON body is also held to `MAX_JSON_DEPTH`: no API body nests more than a few
levels, and anything that walks a deeper one recursively (a serializer, a JSON
column) could exhaust the stack.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import (
    RequestDataTooBig,
    SuspiciousMultipartForm,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.utils.functional import Promise
from django.utils.translation import gettext, gettext_lazy
from rest_framework import parsers
from rest_framework.exceptions import ParseError

logger = logging.getLogger(__name__)

MAX_JSON_DEPTH = 32  # arrays and objects inside one another in a JSON body


class ReadableBodies(parsers.BaseParser):
    """What the three parsers share: the charset checked first, and a body they cannot
    read refused as a ParseError in fixed words."""

    unreadable: str | Promise = ""  # the words for a body this parser cannot read

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            declared_charset(parser_context or {})
            parsers.get_encoding(parser_context or {})
        except ParseError as exc:
            raise refused(exc, gettext("The body's charset is not one the API reads.")) from exc
        try:
            return self.read(stream, media_type, parser_context)
        except (ParseError, SuspiciousMultipartForm) as exc:
            raise refused(exc, str(self.unreadable)) from exc
        except RecursionError as exc:
            raise refused(exc, too_deep()) from None

    def read(self, stream: Any, media_type: Any, parser_context: Any) -> Any:
        return super().parse(stream, media_type, parser_context)


def declared_charset(parser_context: dict) -> None:
    """Raises ParseError when the body's Content-Type names a charset Python has no text
    codec for. (Django drops a charset it cannot look up and reads the body as UTF-8,
    so `charset=ebcdic` was read as if it said nothing.)"""
    request = parser_context.get("request")
    charset = (getattr(request, "content_params", None) or {}).get("charset")
    if charset is None:
        return
    try:
        "".encode(charset)  # a text codec: str.encode refuses bytes-to-bytes ones
    except (LookupError, UnicodeError) as exc:
        raise ParseError(f"Unsupported charset {charset[:40]!r}") from exc


def body_refusal(exc: Exception) -> ParseError | None:
    """The ParseError for one of Django's refusals of a body past its bounds (raised as
    DRF reads `request.body` or parses a form), or None for any other exception."""
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return refused(exc, gettext("The body is larger than %(n)s bytes.") % {"n": limit})
    if isinstance(exc, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return refused(exc, gettext("The body has more than %(n)s fields.") % {"n": limit})
    if isinstance(exc, TooManyFilesSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        return refused(exc, gettext("The body has more than %(n)s files.") % {"n": limit})
    return None


def refused(exc: Exception, detail: str) -> ParseError:
    """The ParseError a person reads; the parser's own words go to the log."""
    logger.info("A request body was refused (%s): %s", type(exc).__name__, str(exc)[:300])
    return ParseError(detail)


def too_deep() -> str:
    return gettext("The body is nested more than %(n)s levels deep.") % {"n": MAX_JSON_DEPTH}


def depth(value: Any) -> int:
    """How deep arrays and objects nest in a parsed JSON value (0 for a bare value);
    walked without recursion."""
    deepest, pending = 0, [(value, 0)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict | list):
            level += 1
            deepest = max(deepest, level)
            if level <= MAX_JSON_DEPTH:
                children = item.values() if isinstance(item, dict) else item
                pending.extend((child, level) for child in children)
    return deepest


class JSONParser(ReadableBodies, parsers.JSONParser):
    unreadable = gettext_lazy("The body is not valid JSON.")

    def read(self, stream: Any, media_type: Any, parser_context: Any) -> Any:
        data = super().read(stream, media_type, parser_context)
        if depth(data) > MAX_JSON_DEPTH:
            raise RecursionError(f"A JSON body nested more than {MAX_JSON_DEPTH} deep")
        return data


class FormParser(ReadableBodies, parsers.FormParser):
    unreadable = gettext_lazy("The body is not a valid form.")


class MultiPartParser(ReadableBodies, parsers.MultiPartParser):
    unreadable = gettext_lazy("The body is not a valid multipart form.")
