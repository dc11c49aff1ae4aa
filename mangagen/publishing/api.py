"""The owner's side of reading links (docs/api.md, "Reading links"): publish, publish
again, stop sharing; for a comic and for a series. Another person's comic: 404."""

from drf_spectacular.utils import OpenApiTypes, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.bodies import json_object
from mangagen.api.schema import refuses
from mangagen.api.throttles import WritesThrottle
from mangagen.kernel.quotas import Limit
from mangagen.pages.errors import NothingToExport
from mangagen.series.api import owned_series
from mangagen.storyboards.api import owned_storyboard

from . import selectors, services
from .serializers import PublishSerializer


def _options(request) -> services.Options:
    serializer = PublishSerializer(data=json_object(request))
    serializer.is_valid(raise_exception=True)
    return services.Options(**serializer.validated_data)


def _published(link, created: bool) -> Response:
    code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
    return Response(selectors.link_json(link), status=code)


class PublishComicView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "export"

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="The comic's reading link, if shared")
    def get(self, request, pk: int):
        storyboard = owned_storyboard(request, pk, with_parts=False)
        return Response(
            {"link": selectors.link_json(selectors.link_of_comic(storyboard=storyboard))}
        )

    @refuses(NothingToExport, Limit.DRAWING)
    @extend_schema(
        request=PublishSerializer,
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT},
        summary="Publish the comic as it is now (again: the same link, the current version)",
    )
    def post(self, request, pk: int):
        options = _options(request)
        storyboard = owned_storyboard(request, pk)
        return _published(*services.publish_comic(storyboard=storyboard, options=options))

    @extend_schema(request=None, responses={204: None}, summary="Stop sharing the comic")
    def delete(self, request, pk: int):
        services.stop_sharing_comic(storyboard=owned_storyboard(request, pk, with_parts=False))
        return Response(status=status.HTTP_204_NO_CONTENT)


class PublishSeriesView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "export"

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="The series' reading link, if shared")
    def get(self, request, pk: int):
        series = owned_series(request, pk)
        return Response({"link": selectors.link_json(selectors.link_of_series(series=series))})

    @refuses(NothingToExport, Limit.DRAWING)
    @extend_schema(
        request=PublishSerializer,
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT},
        summary="Publish the series' drawn chapters, in order, as they are now",
    )
    def post(self, request, pk: int):
        options = _options(request)
        series = owned_series(request, pk)
        return _published(*services.publish_series(series=series, options=options))

    @extend_schema(request=None, responses={204: None}, summary="Stop sharing the series")
    def delete(self, request, pk: int):
        services.stop_sharing_series(series=owned_series(request, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)
