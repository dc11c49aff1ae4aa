"""The character sheet endpoints (docs/api.md, "Character sheets"). Another person's comic: 404."""

from drf_spectacular.utils import OpenApiTypes, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.throttles import WritesThrottle
from mangagen.jobs.selectors import sheets_in_live_jobs
from mangagen.storyboards.api import owned_storyboard
from mangagen.storyboards.models import Storyboard

from . import selectors, services
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


def _sheet_body(storyboard: Storyboard, name: str) -> dict:
    storyboard = Storyboard.objects.get(pk=storyboard.pk)
    return {"sheet": selectors.sheets_json(storyboard=storyboard).get(name)}


class SheetView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "generate"
    insufficient_credits_detail = (
        "You need a credit to render a character sheet. Buy credits and try again."
    )

    @extend_schema(
        request=None,
        responses={202: SheetBody, 402: OpenApiTypes.OBJECT},
        summary="Render the character's reference sheet (one credit, paid when shown)",
    )
    def post(self, request, pk: int, name: str):
        storyboard = owned_storyboard(request, pk)
        services.request_sheet(storyboard=storyboard, name=name)
        return Response(_sheet_body(storyboard, name), status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {"image": {"type": "string", "format": "binary"}},
            }
        },
        responses={200: SheetBody, 400: OpenApiTypes.OBJECT},
        summary="Use your own picture as the character's sheet (PNG, JPEG or WebP)",
    )
    def put(self, request, pk: int, name: str):
        storyboard = owned_storyboard(request, pk)
        image = checked_reference(request.FILES.get("image"))
        services.upload_sheet(
            storyboard=storyboard,
            name=name,
            image=image,
            in_use=sheets_in_live_jobs(storyboard=storyboard, name=name),
        )
        return Response(_sheet_body(storyboard, name))

    @extend_schema(request=None, responses={204: None}, summary="Remove the character's sheet")
    def delete(self, request, pk: int, name: str):
        services.delete_sheet(storyboard=owned_storyboard(request, pk), name=name)
        return Response(status=status.HTTP_204_NO_CONTENT)
