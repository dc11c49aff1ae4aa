"""`GET /api/credits/transfers/` as people see it: their history in their words.

One row per grant or revocation and one per hold, with what the hold paid for (the
comic, and what was drawn: mangagen/orchestration/credit_rows.py) and how it ended;
an operator's name and notes stay in admin (`public_reason`).

Routed in `mangagen/urls.py` ahead of `ledger.urls`, which serves the same path as the
ledger's journal, line by line, for no one (the ledger knows no comic to describe).
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView

from ledger import selectors as ledger_selectors
from ledger.api import TransfersView
from ledger.models import Transfer
from mangagen.orchestration import credit_rows


class HistoryRowSerializer(serializers.Serializer):
    """A row of the history (docs/api.md, "Credits and payments")."""

    id = serializers.IntegerField(source="transfer.pk")
    kind = serializers.ChoiceField(source="transfer.kind", choices=Transfer.Kind.choices)
    amount = serializers.IntegerField(source="transfer.amount")
    available_delta = serializers.IntegerField()
    held_delta = serializers.IntegerField()
    description = serializers.CharField()
    outcome = serializers.CharField(
        help_text="How a hold ended: pending (held now), captured (paid), released or "
        'expired (given back); "" for a grant or revocation.'
    )
    outcome_words = serializers.CharField()
    hold = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField(source="transfer.created_at")
    resolved_at = serializers.DateTimeField(allow_null=True)

    def get_hold(self, row) -> int | None:
        return row.transfer.hold.pk if row.transfer.kind == Transfer.Kind.PENDING else None


class PublicTransfersView(TransfersView):
    serializer_class = HistoryRowSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema, drawn with no request
            return Transfer.objects.none()
        return ledger_selectors.history_for(account=self.account)

    @extend_schema(summary="Your credit history, a row per grant and per hold, in your words")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_serializer_context(self):
        # The rows are described before they are serialized: no account in the context
        # (the ledger's journal lines need it; the schema is drawn with none).
        return ListAPIView.get_serializer_context(self)

    def get_serializer(self, *args, **kwargs):
        # A page of journal lines becomes a page of rows, described together.
        if args and not getattr(self, "swagger_fake_view", False):
            args = (credit_rows.rows(account=self.account, transfers=args[0]), *args[1:])
        return super().get_serializer(*args, **kwargs)
