"""Pages and exports of a comic (docs/api.md, "Kept panels, quote, pages, export"). Owner only.

Each takes `?lang=`: the comic lettered in one of its translations (404
`no_such_translation` for a language it has none in), else in the original.
"""

import io

from django.http import FileResponse, Http404
from django.urls import reverse
from django.utils.text import slugify
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.errors import plain_error_response
from mangagen.api.schema import refuses
from mangagen.api.throttles import ScopedRateThrottle, WritesThrottle
from mangagen.kernel import quotas
from mangagen.kernel.quotas import Limit
from mangagen.storyboards.models import ExportFormat, PageFormat, Storyboard
from mangagen.storyboards.selectors import owned_storyboard
from mangagen.translations.errors import NoSuchTranslation

from . import exports
from .builds import comic_of, image_png, page_names
from .errors import ExportTooLarge, NoSuchPage, NothingToExport, NotReshaped, UnknownFormat
from .layered import export_layered
from .reshaping import ReshapeChoice, choose, reshaped

LANG = OpenApiParameter(
    "lang", str, description="A translation's language (default: the original's)."
)
ROUGH = OpenApiParameter(
    "rough",
    int,
    enum=[0, 1],
    description="1: rough pages: each panel with no kept take composed from its rough.",
)


def wants_rough(query) -> bool:
    return query.get("rough") in ("1", "true")


class PagesView(APIView):
    @refuses(NoSuchTranslation)
    @extend_schema(
        summary="The kept panels composed into pages, with their lettering",
        parameters=[LANG, ROUGH],
        responses=inline_serializer(
            "Pages",
            {
                "language": serializers.CharField(),
                "title": serializers.CharField(),
                "direction": serializers.CharField(),
                "format": serializers.CharField(),
                "pages": inline_serializer(
                    "Page",
                    {
                        "number": serializers.IntegerField(),
                        "panels": serializers.ListField(child=serializers.IntegerField()),
                        "template": serializers.CharField(),
                        "image_url": serializers.CharField(),
                        "cells": serializers.DictField(
                            child=serializers.ListField(child=serializers.FloatField()),
                            help_text="Each panel's cell on the page image: [x0, y0, x1, y1] "
                            "as fractions of the page, by index.",
                        ),
                    },
                    many=True,
                ),
                "kept": serializers.ListField(child=serializers.IntegerField()),
                "roughs": serializers.ListField(
                    child=serializers.IntegerField(),
                    help_text="Panels composed from their rough (rough pages only).",
                ),
                "breaks": serializers.ListField(child=serializers.IntegerField()),
                "reshaped": serializers.ListField(
                    child=serializers.IntegerField(),
                    help_text="Panels drawn for another cell's shape than theirs now: fit "
                    "or redraw (POST …/panels/<n>/reshape/).",
                ),
            },
        ),
    )
    def get(self, request, pk: int):
        storyboard = owned_storyboard(request, pk)
        comic = comic_of(
            storyboard=storyboard,
            language=request.query_params.get("lang"),
            rough=wants_rough(request.query_params),
        )
        return Response(pages_body(comic) | {"reshaped": reshaped(storyboard=storyboard)})


def pages_body(comic) -> dict:
    """Nothing kept, no pages: a comic is readable once one panel is drawn. Rough pages
    are there from the first panel: each place shows its rough once it is ready."""
    names = page_names(comic) if comic.drawn else []
    if comic.format == PageFormat.WEBTOON:
        pages = (
            [
                {
                    "number": 1,
                    "panels": [i for page in comic.pages for i in page.panels],
                    "template": "strip",
                    "image_url": _url(comic, names[0]),
                    "cells": {},
                }
            ]
            if names
            else []
        )
    else:
        pages = [
            {
                "number": page.number,
                "panels": page.panels,
                "template": page.template,
                "image_url": _url(comic, name),
                "cells": {str(i): [round(v, 4) for v in rect] for i, rect in page.rects.items()},
            }
            for page, name in zip(comic.pages, names, strict=False)
        ]
    return {
        "language": comic.language,
        "title": comic.title,
        "direction": comic.direction,
        "format": comic.format,
        "pages": pages,
        "kept": comic.kept,
        "roughs": comic.from_roughs,
        "breaks": [page.panels[0] for page in comic.pages],
    }


def _url(comic, name: str) -> str:
    url = reverse("page-image", args=[comic.storyboard.pk, comic.key_of(name), name])
    query = [f"lang={comic.language}"] if comic.translated else []
    if comic.rough:
        query.append("rough=1")
    return f"{url}?{'&'.join(query)}" if query else url


class DownloadView(APIView):
    """An export: `?format=` names the file, throttled per person (THROTTLE_EXPORT)."""

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "export"

    def perform_content_negotiation(self, request, force=False):
        # `?format=` is this endpoint's own parameter (docs/api.md), not DRF's renderer override.
        return super().perform_content_negotiation(request, force=True)


class ExportView(DownloadView):
    @refuses(UnknownFormat, NoSuchTranslation, NothingToExport, Limit.DRAWING)
    @extend_schema(
        summary="Download the comic: print PDF, CBZ, or a webtoon PNG",
        parameters=[OpenApiParameter("format", str, enum=ExportFormat.values), LANG],
        responses={(200, "application/octet-stream"): bytes},
    )
    def get(self, request, pk: int):
        fmt = request.query_params.get("format", ExportFormat.PDF)
        if fmt not in ExportFormat.values:
            raise UnknownFormat(
                gettext("format must be one of %(formats)s.")
                % {"formats": ", ".join(ExportFormat.values)}
            )
        storyboard = owned_storyboard(request, pk)
        comic = comic_of(storyboard=storyboard, language=request.query_params.get("lang"))
        slug = slugify(storyboard.title) or f"comic-{storyboard.pk}"
        if comic.translated:
            slug = f"{slug}-{comic.language}"
        made = exports.export(comic=comic, fmt=fmt, slug=slug)
        return attachment(
            io.BytesIO(made.data), content_type=made.content_type, filename=made.filename
        )


class LayeredExportView(DownloadView):
    """A page as layers (`?page=`), or every page in a ZIP: PSD, or OpenRaster (`fmt`)."""

    fmt = "psd"

    @refuses(NoSuchPage, NoSuchTranslation, NothingToExport, ExportTooLarge, Limit.DRAWING)
    @extend_schema(
        summary="Download a page as layers (PSD with editable text, or OpenRaster), or every page",
        parameters=[
            OpenApiParameter(
                "page", int, description="A page's number (default: every page, in a ZIP)."
            ),
            LANG,
        ],
        responses={
            (200, "image/vnd.adobe.photoshop"): bytes,
            (200, "image/openraster"): bytes,
            (200, "application/zip"): bytes,
        },
    )
    def get(self, request, pk: int):
        storyboard = owned_storyboard(request, pk)
        comic = comic_of(storyboard=storyboard, language=request.query_params.get("lang"))
        slug = slugify(storyboard.title) or f"comic-{storyboard.pk}"
        if comic.translated:
            slug = f"{slug}-{comic.language}"
        made = export_layered(
            comic=comic, fmt=self.fmt, page=request.query_params.get("page"), slug=slug
        )
        return attachment(made.file, content_type=made.content_type, filename=made.filename)


def attachment(handle, *, content_type: str, filename: str) -> FileResponse:
    """A download of the open binary file `handle`, private to the person asking."""
    response = FileResponse(
        handle, content_type=content_type, as_attachment=True, filename=filename
    )
    response["Cache-Control"] = "private, no-cache"
    return response


def page_image(request, pk: int, key: str, name: str):
    """A page image, only to the comic's owner; a key the comic moved on from answers 404."""
    if not request.user.is_authenticated:
        raise Http404("No such page.")
    storyboard = Storyboard.objects.filter(pk=pk, owner=request.user).first()
    if storyboard is None:
        raise Http404("No such page.")
    try:
        comic = comic_of(
            storyboard=storyboard,
            language=request.GET.get("lang"),
            rough=wants_rough(request.GET),
        )
    except NoSuchTranslation as gone:
        raise Http404("No such page (the translation was deleted).") from gone
    try:
        png = comic.drawn and comic.key_of(name) == key and image_png(comic, name)
    except quotas.LimitReached as refused:
        return plain_error_response(refused)
    if not png:
        raise Http404("No such page (the comic may have changed: reload).")
    response = FileResponse(io.BytesIO(png), content_type="image/png")
    response["Cache-Control"] = "private, max-age=31536000, immutable"  # the key is the content
    response["X-Content-Type-Options"] = "nosniff"
    return response


class ReshapeBody(serializers.Serializer):
    choice = serializers.ChoiceField(choices=ReshapeChoice.choices)


class ReshapeView(APIView):
    """A panel drawn for another cell's shape: fit it (free) or draw it again (paid)."""

    throttle_classes = [WritesThrottle]
    throttle_scope = "storyboards"

    @refuses(NotReshaped)
    @extend_schema(
        request=ReshapeBody,
        responses=inline_serializer(
            "Reshaped",
            {
                "index": serializers.IntegerField(),
                "choice": serializers.CharField(),
                "aspect": serializers.CharField(),
            },
        ),
        summary="A panel whose cell changed shape: fit its picture (free) or redraw it",
    )
    def post(self, request, pk: int, index: int):
        storyboard = owned_storyboard(request, pk)
        body = ReshapeBody(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(
            choose(storyboard=storyboard, index=index, choice=body.validated_data["choice"])
        )
