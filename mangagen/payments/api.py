"""Credit packs, Checkout, and the Stripe webhook."""

import logging

from django.http import JsonResponse
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.bodies import json_object
from mangagen.api.errors import plain_error_response
from mangagen.api.schema import refuses
from mangagen.api.throttles import ScopedRateThrottle

from . import services
from .errors import (
    BadSignature,
    PaymentProviderError,
    PaymentsUnavailable,
    ProcessingFailed,
    UnknownPack,
)
from .packs import pack, packs

logger = logging.getLogger(__name__)


class PackSerializer(serializers.Serializer):
    code = serializers.CharField()
    credits = serializers.IntegerField()
    price = serializers.IntegerField(help_text="In minor units (cents).")
    currency = serializers.CharField()
    price_display = serializers.CharField()


class PacksView(APIView):
    @extend_schema(responses=PackSerializer(many=True), summary="The credit packs on sale")
    def get(self, request):
        return Response(PackSerializer(packs(), many=True).data)


class CheckoutView(APIView):
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "checkout"

    @refuses(UnknownPack, PaymentsUnavailable, PaymentProviderError)
    @extend_schema(
        request=inline_serializer("CheckoutRequest", {"pack": serializers.CharField()}),
        responses=inline_serializer("Checkout", {"checkout_url": serializers.URLField()}),
        summary="Start a Stripe Checkout for a pack",
    )
    def post(self, request):
        chosen = pack(str(json_object(request).get("pack", "")))
        if chosen is None:
            raise UnknownPack(
                gettext("pack: choose one of %(packs)s.")
                % {"packs": ", ".join(p.code for p in packs())}
            )
        url = services.create_checkout(
            user=request.user,
            chosen=chosen,
            return_url=request.build_absolute_uri(reverse("credits")),
        )
        return Response({"checkout_url": url})


@csrf_exempt
@require_POST
def stripe_webhook(request):
    """Verified on the raw body; 400 when not. 200 once stored and applied (or a duplicate)."""
    try:
        signature = request.headers.get("Stripe-Signature")
        event = services.verify(payload=request.body, signature=signature)
    except BadSignature as refused:
        return plain_error_response(refused)
    try:
        stored, first = services.receive(event=event)
    except Exception:
        logger.exception("Stripe event %s failed", event.get("id"))
        return plain_error_response(ProcessingFailed("Will retry."))
    return JsonResponse({"received": stored.stripe_id, "duplicate": not first})
