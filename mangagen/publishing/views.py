"""The public reader of a reading link, its page images and its download: to anyone,
signed in or not, throttled per address (THROTTLE_READ). They read the link's snapshot
only; a token that opens no link answers 404 (the reader: a page saying the comic is no
longer shared), as a link whose sharing stopped does.

Page images are answered by `serving.answer`: ahead of Django by the ASGI server
(`pages_asgi.py`), and here, for whatever reaches Django (its test client, a WSGI
server, a request it turns away or redirects first)."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.http import Http404, HttpResponse, HttpResponseNotModified
from django.shortcuts import render
from django.utils.text import slugify
from django.views.decorators.http import require_safe
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from mangagen.api.throttles import AddressThrottle
from mangagen.kernel import storage
from mangagen.kernel.client_address import client_address

from . import selectors, serving


class PublicView(APIView):
    permission_classes = [AllowAny]  # the owner's session grants nothing more here
    # THROTTLE_READ per client address (the trusted proxy's hop), in Redis for every process.
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

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code in (404, 429):
            response["Cache-Control"] = serving.NOT_KEPT  # a refusal, a link gone: never kept
        return response


class ReadView(PublicView):
    def handle_exception(self, exc):
        if isinstance(exc, Http404):  # a person's browser: a page, not the API's JSON
            return no_longer_shared(self.request)
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
        # Asked again each time it is shown: once sharing stops, the next look says so.
        response["Cache-Control"] = "no-cache"
        response["Referrer-Policy"] = "no-referrer"  # the token stays off other sites' logs
        return response


def no_longer_shared(request) -> HttpResponse:
    """The reader's page for a token that opens no link (stopped, ended with its comic,
    or never made): 404, in the interface's language, never kept by a cache."""
    response = render(request, "publishing/gone.html", status=404)
    response["Cache-Control"] = serving.NOT_KEPT
    response["X-Robots-Tag"] = "noindex"
    response["Referrer-Policy"] = "no-referrer"
    return response


@require_safe
def page(request, token: str, number: int) -> HttpResponse:
    """A page image, answered as the lean path answers it (serving.py)."""
    version = request.GET.get("v", "")
    answer = async_to_sync(serving.answer)(
        serving.PageRequest(
            token=token,
            number=number,
            language=request.GET.get("lang"),
            version=int(version) if version.isdigit() and len(version) < 10 else None,
            if_none_match=request.headers.get("If-None-Match", ""),
            address=client_address(request),
        )
    )
    response = HttpResponse(answer.body, status=answer.status)
    for name, value in answer.headers.items():
        response[name] = value
    return response


class FileView(PublicView):
    # No session is read: a file is the same for everyone, and a shared cache keeps one
    # copy (no `Vary: Cookie`).
    authentication_classes: list = []


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
    """A snapshot's file, public and cacheable as long as a page image, a 304 for the
    ETag it has."""
    headers = {
        "ETag": etag,
        "Cache-Control": serving.cache_control(),
        "X-Content-Type-Options": "nosniff",
    }
    if etag in serving.etags(request.headers.get("If-None-Match", "")):
        response = HttpResponseNotModified()
    else:
        data = storage.read(name)
        if data is None:  # the link ended (or moved on) between the lookup and the read
            raise Http404("No such file.")
        response = HttpResponse(data, content_type=content_type)
    for header, value in headers.items():
        response[header] = value
    return response
