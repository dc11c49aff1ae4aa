"""The series endpoints (docs/api.md, "Series, cast and places"). Another person's series: 404."""

from django.shortcuts import get_object_or_404
from django.utils.text import slugify
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.schema import refuses
from mangagen.api.throttles import WritesThrottle
from mangagen.characters.models import UploadProblem
from mangagen.kernel.quotas import Limit
from mangagen.orchestration import comic_deletion as deletion
from mangagen.pages.api import LANG, DownloadView, attachment
from mangagen.pages.errors import NothingToExport, UnknownFormat
from mangagen.storyboards.api import fresh_storyboard
from mangagen.storyboards.serializers import StoryboardSerializer
from mangagen.translations.errors import NoSuchTranslation

from . import exports, selectors, services
from .models import Series
from .serializers import ChapterWriteSerializer, SeriesWriteSerializer


def owned_series(request, pk: int) -> Series:
    return get_object_or_404(Series.objects.filter(owner=request.user), pk=pk)


class SeriesListView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "storyboards"

    @extend_schema(
        responses={200: {"type": "array", "items": {"type": "object"}}},
        summary="Your series",
        operation_id="series_list",
    )
    def get(self, request):
        series = list(Series.objects.filter(owner=request.user))
        return Response(selectors.series_json_each(series=series))

    @refuses(Limit.SERIES)
    @extend_schema(
        request=SeriesWriteSerializer,
        responses={201: OpenApiTypes.OBJECT},
        summary="Start a series",
    )
    def post(self, request):
        serializer = SeriesWriteSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        series = services.create_series(owner=request.user, **serializer.validated_data)
        return Response(selectors.series_json(series), status=status.HTTP_201_CREATED)


class SeriesDetailView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "storyboards"

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="One series, its chapters in order")
    def get(self, request, pk: int):
        return Response(selectors.series_json(owned_series(request, pk)))

    @extend_schema(
        request=SeriesWriteSerializer,
        responses=OpenApiTypes.OBJECT,
        summary="Rename a series, or change the style later chapters start in",
    )
    def patch(self, request, pk: int):
        series = owned_series(request, pk)
        serializer = SeriesWriteSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        services.update_series(series=series, **serializer.validated_data)
        return Response(selectors.series_json(series))

    @extend_schema(
        request=None, responses={204: None}, summary="Delete a series (its chapters stay)"
    )
    def delete(self, request, pk: int):
        deletion.delete_series(series=owned_series(request, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ChaptersView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "storyboards"

    @refuses(Limit.STORYBOARDS, UploadProblem.UPLOADS_FULL)
    @extend_schema(
        request=ChapterWriteSerializer,
        responses={201: StoryboardSerializer},
        summary="Start the next chapter, with the series' style, cast and places",
    )
    def post(self, request, pk: int):
        series = owned_series(request, pk)
        serializer = ChapterWriteSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        chapter = services.start_chapter(series=series, **serializer.validated_data)
        return Response(fresh_storyboard(chapter), status=status.HTTP_201_CREATED)


class SeriesExportView(DownloadView):
    @refuses(UnknownFormat, NoSuchTranslation, NothingToExport, Limit.DRAWING)
    @extend_schema(
        summary="Download the whole series: one PDF, or a zip of one CBZ per chapter",
        parameters=[OpenApiParameter("format", str, enum=list(exports.FORMATS)), LANG],
        responses={(200, "application/octet-stream"): bytes},
    )
    def get(self, request, pk: int):
        fmt = request.query_params.get("format", "pdf")
        if fmt not in exports.FORMATS:
            raise UnknownFormat(
                gettext("format must be one of %(formats)s.")
                % {"formats": ", ".join(exports.FORMATS)}
            )
        series = owned_series(request, pk)
        made = exports.export_series(
            series=series, fmt=fmt, language=request.query_params.get("lang") or None
        )
        slug = slugify(series.title) or f"series-{series.pk}"
        if made.translated:
            slug = f"{slug}-{made.translated}"
        return attachment(
            made.file, content_type=made.content_type, filename=f"{slug}.{made.suffix}"
        )
