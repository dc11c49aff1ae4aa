"""GET /api/me/: who is signed in, and their credits."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from ledger import services as ledger


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
            },
        ),
    )
    def get(self, request):
        account = ledger.account_for(request.user)
        return Response(
            {
                "username": request.user.get_username(),
                "credits": {"available": account.available, "held": account.held},
            }
        )
