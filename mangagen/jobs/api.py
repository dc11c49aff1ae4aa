"""Generate, jobs, decisions and the event log. Another person's job answers 404."""

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext, gettext_lazy
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ledger import errors as ledger_errors
from mangagen.api.schema import refuses
from mangagen.api.throttles import ScopedRateThrottle
from mangagen.characters.models import UploadProblem
from mangagen.kernel.errors import InvalidInput
from mangagen.kernel.quotas import Limit
from mangagen.kernel.request_bodies import BodyKind
from mangagen.storyboards.selectors import owned_storyboard

from . import services, touchups
from .errors import (
    IllegalTransition,
    JobError,
    NothingToTouchUp,
    StoryboardIncomplete,
    TouchUpBusy,
    TouchUpUnsupported,
)
from .events import events_after
from .models import GenerateOutcome, Job
from .selectors import delivered_panels
from .serializers import JobSerializer


def owned_job(request, pk: int, *, storyboard_pk: int | None = None) -> Job:
    """The signed-in person's job (in that storyboard, when given), or 404: another
    person's job does not exist for them. The API and the studio's pages both ask here."""
    jobs = Job.objects.select_related("storyboard").prefetch_related("panels")
    if storyboard_pk is not None:
        jobs = jobs.filter(storyboard_id=storyboard_pk)
    return get_object_or_404(jobs, pk=pk, owner=request.user)


def job_body(job: Job) -> dict:
    job = Job.objects.select_related("storyboard").prefetch_related("panels").get(pk=job.pk)
    return JobSerializer(job).data


GENERATED: dict[str, serializers.Field] = {
    "job": serializers.IntegerField(),
    "attached": serializers.BooleanField(),
    "delivered": inline_serializer(
        "DeliveredPanel",
        {
            "index": serializers.IntegerField(),
            "image_url": serializers.CharField(),
            "check": serializers.JSONField(allow_null=True),
        },
        many=True,
    ),
}

# What a 402 from Generate, approve or redo says (mangagen/api/errors.py adds the rest).
NEEDS_A_CREDIT = gettext_lazy("You need a credit to render a panel. Buy credits and try again.")


class GenerateView(APIView):
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "generate"
    insufficient_credits_detail = NEEDS_A_CREDIT

    @refuses(
        StoryboardIncomplete,
        ledger_errors.InsufficientCredits,
        ledger_errors.AccountFlagged,
        Limit.LIVE_JOBS,
        JobError,
    )
    @extend_schema(
        request=None,
        summary="Generate: attach to a live speculation, or start a job",
        responses={
            200: inline_serializer("Attached", GENERATED),
            201: inline_serializer("Started", GENERATED),
        },
    )
    def post(self, request, pk: int):
        storyboard = owned_storyboard(request, pk, with_parts=False)
        job, how = services.generate(user=request.user, storyboard=storyboard)
        code = status.HTTP_201_CREATED if how == GenerateOutcome.CREATED else status.HTTP_200_OK
        body = {
            "job": job.pk,
            "attached": how == GenerateOutcome.ATTACHED,
            "delivered": delivered_panels(job),
        }
        return Response(body, status=code)


class JobView(APIView):
    @extend_schema(responses=JobSerializer, summary="One job")
    def get(self, request, pk: int):
        return Response(job_body(owned_job(request, pk)))


class CancelView(APIView):
    """Also answers `navigator.sendBeacon` (FormData with `csrfmiddlewaretoken`)."""

    @extend_schema(request=None, responses=JobSerializer, summary="Cancel a job; holds released")
    def post(self, request, pk: int):
        job = owned_job(request, pk)
        # Leaving Review after Generate (in this tab or another) keeps the job: the
        # condition is checked on the locked row, not on this read.
        job = services.cancel_job(
            job=job,
            reason="Cancelled by its owner.",
            only_if_unconfirmed=request.query_params.get("if_unconfirmed", "").lower()
            in {"1", "true", "yes", "on"},
        )
        return Response(job_body(job))


class DecisionView(APIView):
    """Approve (200) or redo (202) the panel awaiting a decision: `ApproveView`, `RedoView`."""

    decision = ""
    insufficient_credits_detail = NEEDS_A_CREDIT

    @refuses(IllegalTransition, ledger_errors.InsufficientCredits, ledger_errors.AccountFlagged)
    def post(self, request, pk: int, index: int):
        job = owned_job(request, pk)
        get_object_or_404(job.panels, index=index)
        action = services.approve_panel if self.decision == "approve" else services.redo_panel
        job = action(job=job, index=index)
        code = status.HTTP_202_ACCEPTED if self.decision == "redo" else status.HTTP_200_OK
        return Response(job_body(job), status=code)


@extend_schema_view(
    post=extend_schema(request=None, responses=JobSerializer, summary="Approve the panel")
)
class ApproveView(DecisionView):
    decision = "approve"


@extend_schema_view(
    post=extend_schema(
        request=None,
        responses={202: JobSerializer},
        summary="Render the panel again, under a new hold",
    )
)
class RedoView(DecisionView):
    decision = "redo"


class EventsView(APIView):
    @refuses(InvalidInput)
    @extend_schema(
        parameters=[OpenApiParameter("after", int, description="Only events with seq > after.")],
        responses=inline_serializer(
            "Events",
            {
                "events": inline_serializer(
                    "Event",
                    {
                        "seq": serializers.IntegerField(),
                        "type": serializers.CharField(),
                        "at": serializers.DateTimeField(),
                        "data": serializers.DictField(),
                    },
                    many=True,
                )
            },
        ),
        summary="The job's event log (what the websocket replays)",
    )
    def get(self, request, pk: int):
        job = owned_job(request, pk)
        try:
            after = max(0, int(request.query_params.get("after", 0)))
        except ValueError:
            raise InvalidInput(gettext("after must be a whole number.")) from None
        return Response({"events": events_after(job=job, after=after)})


# What a 402 from a touch-up says.
NEEDS_A_CREDIT_TO_TOUCH_UP = gettext_lazy(
    "You need a credit to redraw part of a panel. Buy credits and try again."
)
MAX_MASK_BYTES = 8 * 1024 * 1024


class TouchUpView(APIView):
    """A touch-up: the region (`box` in JSON, or a multipart `mask`) of the panel's current
    take drawn again under one new hold (mangagen/jobs/touchups.py)."""

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "generate"
    insufficient_credits_detail = NEEDS_A_CREDIT_TO_TOUCH_UP
    request_body = BodyKind.UPLOAD  # a painted mask: REQUEST_UPLOAD_MAX_BYTES

    @refuses(
        NothingToTouchUp,
        TouchUpUnsupported,
        TouchUpBusy,
        InvalidInput,
        ledger_errors.InsufficientCredits,
        ledger_errors.AccountFlagged,
        UploadProblem.UPLOADS_FULL,
        Limit.DRAWING,
    )
    @extend_schema(
        request={
            "application/json": inline_serializer(
                "TouchUpBox",
                {
                    "box": serializers.ListField(
                        child=serializers.FloatField(),
                        min_length=4,
                        max_length=4,
                        help_text="[x, y, w, h]: fractions 0-1 of the picture, from its top left.",
                    ),
                    "prompt": serializers.CharField(required=False),
                },
            ),
            "multipart/form-data": inline_serializer(
                "TouchUpMask",
                {
                    "mask": serializers.FileField(help_text="A PNG, white = redraw, any size."),
                    "prompt": serializers.CharField(required=False),
                },
            ),
        },
        responses={
            202: inline_serializer(
                "TouchUpStarted",
                {
                    "job": serializers.IntegerField(),
                    "panel": serializers.IntegerField(),
                    "attempt": serializers.IntegerField(),
                },
            )
        },
        summary="Draw one region of a panel again (one credit, captured when shown)",
    )
    def post(self, request, pk: int, index: int):
        storyboard = owned_storyboard(request, pk, with_parts=False)
        get_object_or_404(storyboard.panels, index=index)
        prompt = request.data.get("prompt") or ""
        if not isinstance(prompt, str):
            raise InvalidInput(gettext("prompt must be text."))
        upload = request.FILES.get("mask")
        box = None if upload is not None else request.data.get("box")
        if upload is None and box is None:
            raise InvalidInput(gettext("Mark the part to draw again: a box or a mask."))
        if upload is not None and upload.size > MAX_MASK_BYTES:
            raise InvalidInput(gettext("The mask is too large."))
        if box is not None and not isinstance(box, list):
            raise InvalidInput(gettext("A box is four numbers: [x, y, width, height]."))
        requested = touchups.touch_up(
            user=request.user,
            storyboard=storyboard,
            index=index,
            box=box,
            mask=upload.read() if upload is not None else None,
            prompt=prompt,
        )
        body = {"job": requested.job.pk, "panel": index, "attempt": requested.attempt}
        return Response(body, status=status.HTTP_202_ACCEPTED)
