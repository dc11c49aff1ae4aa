"""GET /api/me/: who is signed in, and their credits (with how recent they are)."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from ledger import selectors as ledger


class MeView(APIView):
    @extend_schema(
        summary="The signed-in person and their credits",
        responses=inline_serializer(
            "Me",
            {
                "username": serializers.CharField(),
                "credits": inline_serializer(
                    "MeCredits",
                    {"available": serializers.IntegerField(), "held": serializers.IntegerField()},
                ),
                "credits_as_of": serializers.IntegerField(
                    help_text="The length of the account's journal when `credits` was read: "
                    "of two readings, the greater is never the older."
                ),
            },
        ),
    )
    def get(self, request):
        figures = ledger.figures_of(user_id=request.user.pk)
        return Response(
            {
                "username": request.user.get_username(),
                "credits": {"available": figures.available, "held": figures.held},
                "credits_as_of": figures.as_of,
            }
        )
