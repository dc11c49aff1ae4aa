"""POST /api/storyboards/<id>/speculate/: the Review screen's intent signal."""

from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.bodies import json_object
from mangagen.api.schema import refuses
from mangagen.api.throttles import ScopedRateThrottle
from mangagen.storyboards.selectors import owned_storyboard

from . import services
from .errors import NoToken
from .models import DeclineReason, Outcome, Speculation

SpeculateAnswer = inline_serializer(
    "SpeculateAnswer",
    {
        "job": serializers.IntegerField(allow_null=True),
        "hint": serializers.BooleanField(),
        "reason": serializers.CharField(required=False),
    },
)


def token_of(request) -> str:
    """The Review page's own name for this visit's speculation (letters, digits, dashes)."""
    token = str(json_object(request).get("token") or "")[:64]
    return token if all(c.isalnum() or c == "-" for c in token) else ""


def ended_reason(speculation: Speculation) -> str:
    """The `reason` of a 200 answer: why no speculation is live for this ask."""
    if speculation.reason:
        return speculation.reason
    if speculation.left_at is not None:
        return DeclineReason.LEFT
    if speculation.outcome == Outcome.HIT:
        return DeclineReason.JOB_IN_PROGRESS
    return DeclineReason.ENDED


class SpeculateView(APIView):
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "speculate"

    @extend_schema(
        request=inline_serializer("Speculate", {"token": serializers.CharField(required=False)}),
        responses={202: SpeculateAnswer, 200: SpeculateAnswer},
        summary="Start panel one early (silently declined when not eligible)",
    )
    def post(self, request, pk: int):
        speculation = services.speculate(
            user=request.user,
            storyboard=owned_storyboard(request, pk, with_parts=False),
            token=token_of(request),
        )
        if speculation.outcome != Outcome.LIVE or speculation.job is None:
            # Declined, or a repeat naming a speculation that has ended since (left,
            # expired, replaced, attached): no hint, since nothing is being prepared.
            return Response({"job": None, "hint": False, "reason": ended_reason(speculation)})
        return Response(
            {
                "job": speculation.job_id,
                "hint": True,
                "confirm_by": speculation.job.confirm_by,
                "predicted_seconds": speculation.predicted_seconds,
            },
            status=status.HTTP_202_ACCEPTED,
        )


class LeaveView(APIView):
    """The Review page's beacon on leaving (`navigator.sendBeacon`, FormData with
    `csrfmiddlewaretoken` and `token`): ends what the token names, even a speculation
    whose request is still in flight. Throttled (`leave`): each one may write a row."""

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "leave"

    @refuses(NoToken)
    @extend_schema(
        request=inline_serializer("Leave", {"token": serializers.CharField()}),
        responses={200: SpeculateAnswer},
        summary="Left Review: cancel the speculation this token names",
    )
    def post(self, request, pk: int):
        storyboard = owned_storyboard(request, pk, with_parts=False)
        token = token_of(request)
        if not token:
            raise NoToken(gettext("A token is needed."))
        speculation = services.leave(user=request.user, storyboard=storyboard, token=token)
        return Response({"job": speculation.job_id, "hint": False, "reason": speculation.reason})
