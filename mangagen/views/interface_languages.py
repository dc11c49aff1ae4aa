"""The interface's languages: the scripts' catalog, and the address base.html loads it from.

The language switcher itself is Django's `set_language` (urls.py, `i18n/`): it keeps the
choice in the language cookie, which LocaleMiddleware reads before Accept-Language.
"""

from __future__ import annotations

import hashlib
from functools import cache

import django
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import translation
from django.views.decorators.cache import cache_control
from django.views.i18n import JavaScriptCatalog

_catalog = JavaScriptCatalog.as_view()


@cache
def catalog_version() -> str:
    """A short hash of the compiled script catalogs (and Django's, whose strings they
    merge): a new catalog gets a new address, so the one cached under the old stays right."""
    digest = hashlib.sha256(django.get_version().encode())
    for folder in settings.LOCALE_PATHS:
        for mo in sorted(folder.glob("*/LC_MESSAGES/djangojs.mo")):
            digest.update(mo.read_bytes())
    return digest.hexdigest()[:12]


def catalog_context(request: HttpRequest) -> dict:
    """Template context (settings TEMPLATES): the catalog's version for base.html."""
    return {"js_catalog_version": catalog_version()}


@cache_control(public=True, max_age=365 * 24 * 3600, immutable=True)
def javascript_catalog(request: HttpRequest, lang: str) -> HttpResponse:
    """The djangojs catalog of `lang` (gettext, ngettext, interpolate, get_format for the
    scripts), whatever language the request would pick: the address alone says which, so
    any cache may keep it."""
    if lang not in dict(settings.LANGUAGES):
        raise Http404("No such language.")
    with translation.override(lang):
        response = _catalog(request)
    response["Content-Language"] = lang
    return response
