"""POST /api/storyboards/<id>/speculate/: the Review screen's intent signal."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from mangagen.storyboards.api import owned_storyboard

from . import services

SpeculateAnswer = inline_serializer(
    "SpeculateAnswer",
    {
        "job": serializers.IntegerField(allow_null=True),
        "hint": serializers.BooleanField(),
        "reason": serializers.CharField(required=False),
    },
)


class SpeculateView(APIView):
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "speculate"

    @extend_schema(
        request=None,
        responses={202: SpeculateAnswer, 200: SpeculateAnswer},
        summary="Start panel one early (silently declined when not eligible)",
    )
    def post(self, request, pk: int):
        speculation = services.speculate(
            user=request.user, storyboard=owned_storyboard(request, pk)
        )
        if speculation.job_id is None:
            return Response({"job": None, "hint": False, "reason": speculation.reason})
        return Response(
            {"job": speculation.job_id, "hint": True, "confirm_by": speculation.job.confirm_by},
            status=status.HTTP_202_ACCEPTED,
        )
