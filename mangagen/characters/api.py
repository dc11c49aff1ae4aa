"""The character sheet endpoints (docs/api.md, "Character sheets"). Another person's comic: 404."""

from django.urls import reverse
from drf_spectacular.utils import OpenApiTypes, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from ledger import errors as ledger_errors
from mangagen.api.throttles import WritesThrottle
from mangagen.storyboards.api import owned_storyboard
from mangagen.storyboards.models import Storyboard

from . import selectors, services
from .models import SheetSource, SheetState
from .uploads import Refused, checked_reference

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


def _no_character(exc: services.NoSuchCharacter) -> Response:
    return Response({"error": exc.code, "detail": str(exc)}, status=status.HTTP_404_NOT_FOUND)


class SheetView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "generate"
    parser_classes = [MultiPartParser]

    @extend_schema(
        request=None,
        responses={202: SheetBody, 402: OpenApiTypes.OBJECT},
        summary="Render the character's reference sheet (one credit, paid when shown)",
    )
    def post(self, request, pk: int, name: str):
        storyboard = owned_storyboard(request, pk)
        try:
            services.request_sheet(storyboard=storyboard, name=name)
        except services.NoSuchCharacter as exc:
            return _no_character(exc)
        except ledger_errors.InsufficientCredits as exc:
            return Response(
                {
                    "error": "insufficient_credits",
                    "detail": "You need a credit to render a character sheet. "
                    "Buy credits and try again.",
                    "available": exc.available,
                    "purchase_url": reverse("credits"),
                },
                status=status.HTTP_402_PAYMENT_REQUIRED,
            )
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
        try:
            image = checked_reference(request.FILES.get("image"))
        except Refused as exc:
            return Response(
                {"error": exc.problem.value, "detail": exc.detail},
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            services.upload_sheet(storyboard=storyboard, name=name, image=image)
        except services.NoSuchCharacter as exc:
            return _no_character(exc)
        return Response(_sheet_body(storyboard, name))

    @extend_schema(request=None, responses={204: None}, summary="Remove the character's sheet")
    def delete(self, request, pk: int, name: str):
        services.delete_sheet(storyboard=owned_storyboard(request, pk), name=name)
        return Response(status=status.HTTP_204_NO_CONTENT)
