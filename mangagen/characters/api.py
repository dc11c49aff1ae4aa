"""The character sheet endpoints (docs/api.md, "Character sheets"). Another person's comic: 404."""

from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ledger import errors as ledger_errors
from mangagen.api.schema import refuses
from mangagen.api.throttles import WritesThrottle
from mangagen.jobs.selectors import sheets_in_live_jobs
from mangagen.kernel.request_bodies import BodyKind
from mangagen.storyboards.models import Storyboard
from mangagen.storyboards.selectors import owned_storyboard

from . import selectors, services
from .errors import NoSuchCharacter, NoSuchOutfit, Refused
from .models import SheetSource, SheetState
from .uploads import checked_reference

SheetBody = inline_serializer(
    "SheetBody",
    {
        "sheet": inline_serializer(
            "Sheet",
            {
                "state": serializers.ChoiceField(choices=SheetState.values),
                "image_url": serializers.CharField(allow_null=True),
                "hash": serializers.CharField(allow_null=True),
                "source": serializers.ChoiceField(choices=SheetSource.values),
                "in_use": serializers.BooleanField(),
                "error": serializers.CharField(),
            },
        )
    },
)


OUTFIT = OpenApiParameter(
    "outfit", str, description="An outfit's name: that outfit's sheet (none: the usual look)."
)


def _sheet_body(storyboard: Storyboard, name: str, outfit: str) -> dict:
    storyboard = Storyboard.objects.get(pk=storyboard.pk)
    return {"sheet": selectors.sheets_json(storyboard=storyboard).get((name, outfit))}


def _outfit(request) -> str:
    return request.query_params.get("outfit", "")


class SheetView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "generate"
    request_body = BodyKind.UPLOAD  # an uploaded sheet: REQUEST_UPLOAD_MAX_BYTES
    insufficient_credits_detail = gettext_lazy(
        "You need a credit to render a character sheet. Buy credits and try again."
    )

    @refuses(
        NoSuchCharacter,
        NoSuchOutfit,
        ledger_errors.InsufficientCredits,
        ledger_errors.AccountFlagged,
    )
    @extend_schema(
        request=None,
        parameters=[OUTFIT],
        responses={202: SheetBody},
        summary="Render the character's reference sheet (one credit, paid when shown)",
    )
    def post(self, request, pk: int, name: str):
        storyboard = owned_storyboard(request, pk)
        outfit = _outfit(request)
        services.request_sheet(storyboard=storyboard, name=name, outfit=outfit)
        return Response(_sheet_body(storyboard, name, outfit), status=status.HTTP_202_ACCEPTED)

    @refuses(Refused, NoSuchCharacter, NoSuchOutfit)
    @extend_schema(
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {"image": {"type": "string", "format": "binary"}},
            }
        },
        parameters=[OUTFIT],
        responses={200: SheetBody},
        summary="Use your own picture as the character's sheet (PNG, JPEG or WebP)",
    )
    def put(self, request, pk: int, name: str):
        storyboard = owned_storyboard(request, pk)
        image = checked_reference(request.FILES.get("image"))
        outfit = _outfit(request)
        services.upload_sheet(
            storyboard=storyboard,
            name=name,
            image=image,
            outfit=outfit,
            in_use=sheets_in_live_jobs(storyboard=storyboard, name=name),
        )
        return Response(_sheet_body(storyboard, name, outfit))

    @refuses(NoSuchCharacter, NoSuchOutfit)
    @extend_schema(
        request=None,
        parameters=[OUTFIT],
        responses={204: None},
        summary="Remove the character's sheet",
    )
    def delete(self, request, pk: int, name: str):
        storyboard = owned_storyboard(request, pk)
        services.delete_sheet(storyboard=storyboard, name=name, outfit=_outfit(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
