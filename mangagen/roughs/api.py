"""The roughs endpoints (docs/api.md, "Rough pages"). Another person's comic: 404."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.schema import refuses
from mangagen.api.throttles import WritesThrottle
from mangagen.storyboards.api import owned_storyboard

from . import selectors, services
from .errors import NoCredits, RoughBudget
from .models import RoughState

RoughsBody = inline_serializer(
    "Roughs",
    {
        "roughs": inline_serializer(
            "Rough",
            {
                "index": serializers.IntegerField(),
                "art_hash": serializers.CharField(),
                "state": serializers.ChoiceField(choices=RoughState.values),
                "image_url": serializers.CharField(allow_null=True),
                "seconds": serializers.FloatField(allow_null=True),
            },
            many=True,
        ),
        "budget": inline_serializer(
            "RoughBudget",
            {"used": serializers.IntegerField(), "limit": serializers.IntegerField()},
        ),
    },
)


def _body(request, pk: int) -> dict:
    return selectors.roughs_body(storyboard=owned_storyboard(request, pk))


class RoughsView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "speculate"

    @extend_schema(responses=RoughsBody, summary="The roughs of the comic's panels")
    def get(self, request, pk: int):
        return Response(_body(request, pk))

    @refuses(NoCredits, RoughBudget)
    @extend_schema(
        request=None,
        responses={202: RoughsBody},
        summary="Draw a rough of every panel without one (free; for people with a credit)",
    )
    def post(self, request, pk: int):
        services.request_roughs(user=request.user, storyboard=owned_storyboard(request, pk))
        return Response(_body(request, pk), status=status.HTTP_202_ACCEPTED)


class PanelRoughView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "speculate"

    @refuses(NoCredits, RoughBudget)
    @extend_schema(
        request=None,
        responses={202: RoughsBody},
        summary="Draw one panel's rough again with another seed (free)",
    )
    def post(self, request, pk: int, index: int):
        storyboard = owned_storyboard(request, pk)
        services.redraw_rough(user=request.user, storyboard=storyboard, index=index)
        return Response(_body(request, pk), status=status.HTTP_202_ACCEPTED)
