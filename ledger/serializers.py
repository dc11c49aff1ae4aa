"""JSON shapes of the ledger for the public API (docs/api.md, "Credits and payments")."""

from rest_framework import serializers

from . import selectors
from .models import Hold, Transfer


class HoldSerializer(serializers.ModelSerializer):
    class Meta:
        model = Hold
        fields = ["id", "amount", "state", "reference", "created_at", "expires_at"]


class CreditsSerializer(serializers.Serializer):
    available = serializers.IntegerField()
    held = serializers.IntegerField()
    holds = HoldSerializer(many=True)


class TransferSerializer(serializers.ModelSerializer):
    """One journal line as the account's owner sees it, with its effect on them."""

    available_delta = serializers.SerializerMethodField()
    held_delta = serializers.SerializerMethodField()
    hold = serializers.SerializerMethodField()

    class Meta:
        model = Transfer
        fields = [
            "id",
            "kind",
            "amount",
            "available_delta",
            "held_delta",
            "reason",
            "reference",
            "hold",
            "created_at",
        ]

    def _effect(self, obj) -> tuple[int, int]:
        return selectors.balance_effect(transfer=obj, account=self.context["account"])

    def get_available_delta(self, obj) -> int:
        return self._effect(obj)[0]

    def get_held_delta(self, obj) -> int:
        return self._effect(obj)[1]

    def get_hold(self, obj) -> int | None:
        if obj.kind == Transfer.Kind.PENDING:
            return obj.hold.pk
        if obj.pending_id:
            return obj.pending.hold.pk
        return None
