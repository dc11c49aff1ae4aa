"""The public reader of a reading link, its page images and its download: to anyone,
signed in or not, throttled per address (THROTTLE_READ). They read the link's snapshot
only; a token that opens no link answers 404, as a link whose sharing stopped does."""

from __future__ import annotations

from django.http import Http404, HttpResponse, HttpResponseNotModified
from django.shortcuts import render
from django.utils.text import slugify
from django.views.defaults import page_not_found
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from mangagen.api.throttles import AddressThrottle
from mangagen.kernel import storage

from . import selectors

# Seconds a reader's browser (or a cache between) may keep a page without asking again:
# short, so that stopping sharing (or publishing again) reaches everyone soon; asking
# again costs a 304.
PAGE_MAX_AGE = 300


class PublicView(APIView):
    permission_classes = [AllowAny]  # the owner's session grants nothing more here
    throttle_classes = [AddressThrottle]
    throttle_scope = "read"

    def perform_content_negotiation(self, request, force=False):
        # An HTML page and images: a link preview's `Accept: text/html` is no API client's.
        return super().perform_content_negotiation(request, force=True)

    def link(self, token: str):
        link = selectors.link_for_token(token)
        if link is None:
            raise Http404("No such link.")
        return link


class ReadView(PublicView):
    def handle_exception(self, exc):
        if isinstance(exc, Http404):  # a person's browser: a page, not the API's JSON
            return page_not_found(self.request, exc)
        return super().handle_exception(exc)

    @extend_schema(exclude=True)  # a page or a file, not the JSON API
    def get(self, request, token: str):
        link = self.link(token)
        comic = selectors.reader(link, language=request.GET.get("lang"))
        response = render(
            request,
            "publishing/read.html",
            {
                "comic": comic,
                "indexable": link.indexable,
                "og_image": request.build_absolute_uri(comic["first_page"]),
                "og_url": request.build_absolute_uri(selectors.read_url(link)),
            },
        )
        if not link.indexable:
            response["X-Robots-Tag"] = "noindex"
        response["Cache-Control"] = "no-cache"
        response["Referrer-Policy"] = "no-referrer"  # the token stays off other sites' logs
        return response


class FileView(PublicView):
    # No session is read: a file is the same for everyone, and a shared cache keeps one
    # copy (no `Vary: Cookie`).
    authentication_classes: list = []


class PageView(FileView):
    @extend_schema(exclude=True)  # a page or a file, not the JSON API
    def get(self, request, token: str, number: int):
        found = selectors.page_file(
            self.link(token), number=number, language=request.GET.get("lang")
        )
        if found is None:
            raise Http404("No such page.")
        return _file(request, found.name, found.etag, "image/png")


class DownloadView(FileView):
    @extend_schema(exclude=True)  # a page or a file, not the JSON API
    def get(self, request, token: str):
        link = self.link(token)
        made = selectors.download_file(link)
        if made is None:
            raise Http404("No download.")
        response = _file(request, made["name"], made["etag"], made["content_type"])
        title = (
            link.manifest["title"]
            or link.manifest["chapters"][0]["titles"][link.manifest["original"]]
        )
        name = f"{slugify(title) or 'comic'}.{made['suffix']}"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


def _file(request, name: str, etag: str, content_type: str) -> HttpResponse:
    """A snapshot's file, public and cacheable, a 304 for the ETag it has."""
    headers = {
        "ETag": etag,
        "Cache-Control": f"public, max-age={PAGE_MAX_AGE}",
        "X-Content-Type-Options": "nosniff",
    }
    if etag in _etags(request.headers.get("If-None-Match", "")):
        response = HttpResponseNotModified()
    else:
        data = storage.read(name)
        if data is None:  # the link ended (or moved on) between the lookup and the read
            raise Http404("No such page.")
        response = HttpResponse(data, content_type=content_type)
    for header, value in headers.items():
        response[header] = value
    return response


def _etags(header: str) -> set[str]:
    """The entity tags of an If-None-Match header (weak comparison, as it asks)."""
    return {part.strip().removeprefix("W/") for part in header.split(",") if part.strip()}
