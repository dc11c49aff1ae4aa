"""`GET /api/credits/transfers/` as people see it: the ledger's own history endpoint,
with each reason passed through `public_reason` (operators' names and notes stay in admin).

Routed in `mangagen/urls.py` ahead of `ledger.urls`, which serves the same path unfiltered.
"""

from rest_framework import serializers

from ledger.api import TransfersView
from ledger.serializers import TransferSerializer
from mangagen.kernel.credit_history import public_reason


class PublicTransferSerializer(TransferSerializer):
    reason = serializers.SerializerMethodField()

    def get_reason(self, obj) -> str:
        return public_reason(obj)


class PublicTransfersView(TransfersView):
    serializer_class = PublicTransferSerializer
