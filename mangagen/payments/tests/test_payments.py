"""Buying credits: packs, Checkout against a stand-in, signed webhooks granting exactly once."""

import hashlib
import hmac
import json
import time
from urllib.parse import parse_qs

import pytest

from ledger import services as ledger
from ledger.models import Transfer
from mangagen.payments.models import CheckoutSession, Outcome, Purchase, ReviewReason, StripeEvent
from tests.support.ledger_invariants import assert_ledger_invariants
from tests.support.standin import Canned

pytestmark = pytest.mark.django_db

SECRET = "whsec_test_secret"
_ids = iter(range(1, 10_000))


@pytest.fixture(autouse=True)
def stripe_settings(settings):
    settings.STRIPE_WEBHOOK_SECRET = SECRET
    settings.STRIPE_SECRET_KEY = "sk_test_123"


def sign(payload: str, *, secret: str = SECRET, at: int | None = None) -> str:
    """The Stripe-Signature header, computed as stripe-python's own tests do."""
    at = at or int(time.time())
    digest = hmac.new(secret.encode(), f"{at}.{payload}".encode(), hashlib.sha256).hexdigest()
    return f"t={at},v1={digest}"


def event(type_: str, obj: dict, event_id: str | None = None) -> dict:
    return {
        "id": event_id or f"evt_{next(_ids)}",
        "object": "event",
        "type": type_,
        "data": {"object": obj},
    }


def created(user, *, session="cs_1", pack="starter", credits=20, amount=500, livemode=False):
    """The record this app keeps of a Checkout Session it created."""
    return CheckoutSession.objects.get_or_create(
        session_id=session,
        defaults={
            "user": user,
            "pack": pack,
            "credits": credits,
            "amount": amount,
            "currency": "usd",
            "livemode": livemode,
        },
    )[0]


def checkout(
    user, *, paid=True, session="cs_1", intent="pi_1", pack="starter", credits=20, ours=True
):
    """A Checkout Session as Stripe reports it; `ours` records it as one this app created."""
    if ours:
        created(user, session=session, pack=pack, credits=credits)
    return {
        "id": session,
        "object": "checkout.session",
        "payment_status": "paid" if paid else "unpaid",
        "client_reference_id": str(user.pk),
        "metadata": {"user_id": str(user.pk), "pack": pack, "credits": str(credits)},
        "payment_intent": intent,
        "amount_total": 500,
        "currency": "usd",
        "livemode": False,
    }


def failed_refund(*, refund_id="re_1", intent="pi_1", amount=250, status="failed"):
    return {
        "id": refund_id,
        "object": "refund",
        "payment_intent": intent,
        "charge": "ch_1",
        "amount": amount,
        "currency": "usd",
        "status": status,
    }


def refund(*, intent="pi_1", refunded=250, amount=500):
    return {
        "id": "ch_1",
        "object": "charge",
        "payment_intent": intent,
        "amount": amount,
        "amount_refunded": refunded,
    }


def deliver(client, body: dict, **sign_options):
    payload = json.dumps(body)
    return client.post(
        "/stripe/webhook/",
        payload,
        content_type="application/json",
        HTTP_STRIPE_SIGNATURE=sign(payload, **sign_options),
    )


def available(user):
    account = ledger.account_for(user)
    account.refresh_from_db()
    return account.available


def spend(user, amount):
    """Renders paid for: credits no refund can take back."""
    hold = ledger.authorize(
        account=ledger.account_for(user), amount=amount, key="spent", reference="r"
    )
    ledger.capture(hold=hold)


# --- packs and checkout ----------------------------------------


def test_packs_are_listed(client, user):
    client.force_login(user)
    packs = client.get("/api/credits/packs/").json()
    assert [p["code"] for p in packs] == ["starter", "studio", "publisher"]
    assert set(packs[0]) >= {"code", "credits", "price", "currency"}


def test_checkout_creates_a_stripe_session(client, user, settings, standin):
    settings.STRIPE_API_BASE = standin.url
    standin.reply(
        Canned(
            body={
                "id": "cs_test_1",
                "object": "checkout.session",
                "url": "https://checkout.stripe.test/c/cs_test_1",
            }
        )
    )
    client.force_login(user)
    response = client.post(
        "/api/credits/checkout/", {"pack": "studio"}, content_type="application/json"
    )
    assert response.json() == {"checkout_url": "https://checkout.stripe.test/c/cs_test_1"}
    sent = standin.requests[0]
    assert sent["path"] == "/v1/checkout/sessions"
    assert sent["headers"]["Authorization"] == "Bearer sk_test_123"
    form = parse_qs(sent["json"].decode() if isinstance(sent["json"], bytes) else "")
    assert form["mode"] == ["payment"]
    assert form["client_reference_id"] == [str(user.pk)]
    assert form["metadata[pack]"] == ["studio"] and form["metadata[credits]"] == ["60"]
    assert form["line_items[0][price_data][unit_amount]"] == ["1200"]
    assert form["success_url"][0].startswith("http://testserver/credits/?checkout=success")
    record = CheckoutSession.objects.get(session_id="cs_test_1")
    assert (record.user, record.pack, record.credits) == (user, "studio", 60)
    assert (record.amount, record.currency, record.livemode) == (1200, "usd", False)
    assert form["metadata[checkout_reference]"] == [str(record.reference)]
    assert sent["headers"]["Idempotency-Key"] == f"checkout:{record.reference}"


def test_a_checkout_whose_session_id_was_not_recorded_still_grants(
    client, user, settings, standin, monkeypatch
):
    """The record is written before Stripe is asked: if writing Stripe's session id
    afterwards fails, the person still pays and the payment finds its record by the
    reference the session's metadata carries back (it was once "not ours")."""
    from django.db import DatabaseError
    from django.db.models import QuerySet

    settings.STRIPE_API_BASE = standin.url
    standin.reply(Canned(body={"id": "cs_lost", "object": "checkout.session", "url": "https://x"}))
    original_update = QuerySet.update

    def failing_update(self, **fields):
        if self.model is CheckoutSession and "session_id" in fields:
            raise DatabaseError("the database went away")
        return original_update(self, **fields)

    monkeypatch.setattr(QuerySet, "update", failing_update)
    client.force_login(user)
    answer = client.post(
        "/api/credits/checkout/", {"pack": "starter"}, content_type="application/json"
    )
    assert answer.status_code == 200 and answer.json() == {"checkout_url": "https://x"}
    monkeypatch.undo()
    record = CheckoutSession.objects.get()
    assert record.session_id is None  # pending: Stripe's id never written
    paid = checkout(user, session="cs_lost", ours=False)
    paid["metadata"]["checkout_reference"] = str(record.reference)
    assert deliver(client, event("checkout.session.completed", paid)).status_code == 200
    assert available(user) == 20
    assert CheckoutSession.objects.get().session_id == "cs_lost"
    assert StripeEvent.objects.get().outcome == Outcome.APPLIED


def test_checkout_of_an_unknown_pack_is_400(client, user):
    client.force_login(user)
    response = client.post(
        "/api/credits/checkout/", {"pack": "mega"}, content_type="application/json"
    )
    assert response.status_code == 400 and "starter" in response.json()["detail"]
    for body in ([], "starter", 1):
        response = client.post("/api/credits/checkout/", body, content_type="application/json")
        assert response.status_code == 400, body


def test_checkout_without_stripe_keys_says_so(client, user, settings):
    settings.STRIPE_SECRET_KEY = ""
    client.force_login(user)
    response = client.post(
        "/api/credits/checkout/", {"pack": "starter"}, content_type="application/json"
    )
    assert response.status_code == 503 and response.json()["error"] == "payments_unavailable"


def test_demo_credits_only_offline_in_debug(client, user, settings):
    client.force_login(user)
    settings.DEMO_MODE, settings.STRIPE_SECRET_KEY = True, ""
    assert "Add 10 demo credits" in client.get("/credits/").content.decode()
    client.post("/credits/demo/")
    assert available(user) == 10
    settings.STRIPE_SECRET_KEY = "sk_test_123"
    assert 'id="add-demo-credits"' not in client.get("/credits/").content.decode()
    assert client.post("/credits/demo/").status_code == 404
    settings.DEMO_MODE, settings.STRIPE_SECRET_KEY = False, ""
    assert client.post("/credits/demo/").status_code == 404
    assert available(user) == 10


# --- the webhook ----------------------------------------


def test_a_paid_checkout_grants_the_pack_once(client, user):
    body = event("checkout.session.completed", checkout(user))
    assert deliver(client, body).status_code == 200
    assert available(user) == 20
    grant = Transfer.objects.get(credit_account__user=user)
    assert grant.key == "stripe:checkout:cs_1" and grant.debit_account.code == "purchases"
    again = deliver(client, body)
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert available(user) == 20
    assert StripeEvent.objects.get().deliveries == 2
    assert_ledger_invariants()


@pytest.mark.parametrize(
    "signature",
    [
        "t=1,v1=deadbeef",
        None,
        "garbage",
    ],
)
def test_a_bad_signature_is_400_and_changes_nothing(client, user, signature):
    payload = json.dumps(event("checkout.session.completed", checkout(user)))
    headers = {"HTTP_STRIPE_SIGNATURE": signature} if signature else {}
    response = client.post("/stripe/webhook/", payload, content_type="application/json", **headers)
    assert response.status_code == 400
    assert response.json() == {"error": "bad_signature", "detail": UNSIGNED}  # not Stripe's words
    assert available(user) == 0 and not StripeEvent.objects.exists()


UNSIGNED = "The call is not signed with the webhook's secret, or was signed too long ago."


def test_a_webhook_without_its_secret_set_names_no_setting(client, user, settings, caplog):
    settings.STRIPE_WEBHOOK_SECRET = ""
    response = deliver(client, event("checkout.session.completed", checkout(user)))
    assert response.status_code == 400
    assert response.json() == {"error": "bad_signature", "detail": UNSIGNED}
    assert "STRIPE_WEBHOOK_SECRET is not set" in caplog.text  # for the operator


def test_a_wrong_secret_or_a_stale_timestamp_is_400(client, user):
    body = event("checkout.session.completed", checkout(user))
    assert deliver(client, body, secret="whsec_other").status_code == 400
    assert deliver(client, body, at=int(time.time()) - 3600).status_code == 400
    assert available(user) == 0


def test_two_events_about_one_payment_grant_once(client, user):
    deliver(client, event("checkout.session.completed", checkout(user)))
    deliver(client, event("checkout.session.async_payment_succeeded", checkout(user)))
    assert available(user) == 20


def test_unpaid_then_async_success_grants_on_success(client, user):
    deliver(client, event("checkout.session.completed", checkout(user, paid=False)))
    assert available(user) == 0
    deliver(client, event("checkout.session.async_payment_succeeded", checkout(user)))
    assert available(user) == 20


def test_async_failure_is_recorded_and_grants_nothing(client, user):
    deliver(client, event("checkout.session.completed", checkout(user, paid=False)))
    assert (
        deliver(
            client, event("checkout.session.async_payment_failed", checkout(user, paid=False))
        ).status_code
        == 200
    )
    assert available(user) == 0
    assert StripeEvent.objects.filter(type="checkout.session.async_payment_failed").get().processed


@pytest.mark.parametrize("refunded, left", [(250, 10), (500, 0), (100, 16)])
def test_refunds_revoke_the_refunded_part(client, user, refunded, left):
    deliver(client, event("checkout.session.completed", checkout(user)))
    deliver(client, event("charge.refunded", refund(refunded=refunded)))
    assert available(user) == left
    assert_ledger_invariants()


def test_growing_refunds_revoke_only_the_difference(client, user):
    deliver(client, event("checkout.session.completed", checkout(user)))
    deliver(client, event("charge.refunded", refund(refunded=250)))
    deliver(client, event("charge.refunded", refund(refunded=500)))
    assert available(user) == 0
    assert Purchase.objects.get().credits_revoked == 20


def test_a_refund_before_its_completion_ends_the_same(client, user):
    deliver(client, event("charge.refunded", refund(refunded=250)))
    assert available(user) == 0
    deliver(client, event("checkout.session.completed", checkout(user)))
    assert available(user) == 10
    assert_ledger_invariants()


def test_a_refund_of_spent_credits_revokes_what_is_left_and_flags(client, user):
    deliver(client, event("checkout.session.completed", checkout(user)))
    spend(user, 15)
    deliver(client, event("charge.refunded", refund(refunded=500)))
    account = ledger.account_for(user)
    account.refresh_from_db()
    assert account.available == 0 and account.flagged_at is not None
    assert "only 5 could be revoked" in account.flag_reason
    assert_ledger_invariants()


def test_a_dispute_flags_the_account_and_stops_rendering(client, user):
    from mangagen.storyboards import services as boards

    deliver(client, event("checkout.session.completed", checkout(user)))
    deliver(client, event("charge.dispute.created", {"id": "dp_1", "payment_intent": "pi_1"}))
    account = ledger.account_for(user)
    account.refresh_from_db()
    assert account.flagged_at is not None
    client.force_login(user)
    board = boards.update_storyboard(
        storyboard=boards.create_storyboard(owner=user, title="t"), panels=[{"description": "x"}]
    )
    generate = client.post(f"/api/storyboards/{board.pk}/generate/")
    assert generate.status_code == 403 and generate.json()["error"] == "account_flagged"
    speculate = client.post(f"/api/storyboards/{board.pk}/speculate/").json()
    assert speculate == {"job": None, "hint": False, "reason": "flagged"}
    ledger.clear_account_flag(account=account)
    assert client.post(f"/api/storyboards/{board.pk}/speculate/").json()["hint"] is True


def test_unknown_events_are_stored_and_acknowledged(client):
    response = deliver(client, event("customer.created", {"id": "cus_1"}))
    assert response.status_code == 200
    assert StripeEvent.objects.get(type="customer.created").processed


def test_a_processing_error_is_500_leaves_nothing_and_can_be_reprocessed(client, user, monkeypatch):
    from mangagen.payments import services

    def broken(**kwargs):
        raise RuntimeError("ledger is down")

    monkeypatch.setattr(services.ledger, "grant", broken)
    body = event("checkout.session.completed", checkout(user))
    response = deliver(client, body)
    assert response.status_code == 500
    stored = StripeEvent.objects.get()
    assert not stored.processed and "ledger is down" in stored.error
    assert not Purchase.objects.exists() and not Transfer.objects.filter(kind="grant").exists()
    assert deliver(client, body).status_code == 500  # Stripe retries; still failing, still clean
    assert StripeEvent.objects.get().deliveries == 2


def test_admin_lists_events_and_reprocesses(client, make_user, user, monkeypatch):
    from mangagen.payments import services

    grant = services.ledger.grant
    monkeypatch.setattr(services.ledger, "grant", lambda **kw: 1 / 0)
    deliver(client, event("checkout.session.completed", checkout(user)))
    stored = StripeEvent.objects.get()
    assert not stored.processed
    monkeypatch.setattr(services.ledger, "grant", grant)
    client.force_login(make_user("ops", is_staff=True, is_superuser=True))
    page = client.get("/admin/mangagen/stripeevent/?processed=no").content.decode()
    assert stored.stripe_id in page
    client.post(
        "/admin/mangagen/stripeevent/",
        {"action": "reprocess", "_selected_action": [stored.pk]},
    )
    assert available(user) == 20
    assert services.process(stripe_event=StripeEvent.objects.get()).processed


# --- cross-checks: not ours, not what was sold, refunds that fail ------------------------


def test_a_session_this_app_did_not_create_is_acknowledged_and_grants_nothing(client, user):
    foreign = checkout(user, session="cs_other_product", ours=False)
    foreign["metadata"] = {"sku": "t-shirt"}
    foreign["client_reference_id"] = "not-a-number"
    response = deliver(client, event("checkout.session.completed", foreign))
    assert response.status_code == 200
    stored = StripeEvent.objects.get()
    assert stored.processed and stored.outcome == Outcome.FOREIGN
    assert available(user) == 0
    assert not Purchase.objects.exists() and not Transfer.objects.exists()


def test_a_foreign_session_naming_one_of_our_people_still_grants_nothing(client, user):
    """Metadata is whatever the other product wrote; only our own record grants."""
    response = deliver(client, event("checkout.session.completed", checkout(user, ours=False)))
    assert response.status_code == 200
    assert available(user) == 0
    assert StripeEvent.objects.get().outcome == Outcome.FOREIGN


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"amount_total": 50}, ReviewReason.AMOUNT),
        ({"currency": "eur"}, ReviewReason.CURRENCY),
        ({"livemode": True}, ReviewReason.LIVEMODE),
    ],
)
def test_a_session_paid_differently_from_its_pack_is_held_for_an_operator(
    client, user, change, reason
):
    body = event("checkout.session.completed", checkout(user) | change)
    assert deliver(client, body).status_code == 200
    assert available(user) == 0
    purchase = Purchase.objects.get()
    assert purchase.review == reason and purchase.user == user
    assert StripeEvent.objects.get().outcome == Outcome.REVIEW
    deliver(client, event("charge.refunded", refund(refunded=500)))  # nothing to take back
    assert available(user) == 0 and Purchase.objects.get().credits_revoked == 0
    assert_ledger_invariants()


def test_the_grant_uses_what_the_session_was_created_for_not_its_metadata(client, user):
    body = checkout(user)
    body["metadata"]["credits"] = "9999"
    deliver(client, event("checkout.session.completed", body))
    assert available(user) == 20


def test_an_operator_grants_a_held_purchase_once(client, user, make_user):
    deliver(client, event("checkout.session.completed", checkout(user) | {"amount_total": 499}))
    purchase = Purchase.objects.get()
    client.force_login(make_user("ops", is_staff=True, is_superuser=True))
    for _ in range(2):
        client.post(
            "/admin/mangagen/purchase/",
            {"action": "grant_after_review", "_selected_action": [purchase.pk]},
        )
    assert available(user) == 20
    assert Purchase.objects.get().review == ""
    grant = Transfer.objects.get(kind="grant")
    assert grant.key == "stripe:checkout:cs_1"
    assert_ledger_invariants()


def test_a_refund_that_fails_restores_what_was_revoked(client, user):
    deliver(client, event("checkout.session.completed", checkout(user)))
    deliver(client, event("charge.refunded", refund(refunded=250)))
    assert available(user) == 10
    response = deliver(client, event("charge.refund.updated", failed_refund(amount=250)))
    assert response.status_code == 200
    assert available(user) == 20
    purchase = Purchase.objects.get()
    assert (purchase.credits_revoked, purchase.credits_restored) == (10, 10)
    restore = Transfer.objects.filter(kind="grant", debit_account__code="refunds").get()
    assert restore.amount == 10
    assert_ledger_invariants()


def test_disputes_of_charges_with_no_payment_intent_are_not_ours(client, user, make_user):
    """Each was once filed under one shared purchase (payment intent ""): a second
    such dispute found the first's row."""
    other = make_user()
    deliver(client, event("checkout.session.completed", checkout(user)))
    for n in (1, 2):
        dispute = {"id": f"dp_{n}", "object": "dispute", "payment_intent": None, "charge": "ch_x"}
        assert deliver(client, event("charge.dispute.created", dispute)).status_code == 200
    assert not Purchase.objects.filter(payment_intent="").exists()
    assert list(StripeEvent.objects.values_list("outcome", flat=True).order_by("pk"))[1:] == [
        "foreign",
        "foreign",
    ]
    for person in (user, other):
        assert ledger.account_for(person).flagged_at is None


def test_refunds_of_charges_with_no_payment_intent_are_not_ours(client, user):
    """Charges-API refunds (another product on the same Stripe account) are
    acknowledged, never retried for days as errors."""
    deliver(client, event("checkout.session.completed", checkout(user)))
    for type_, obj in (
        ("charge.refunded", refund(intent=None)),
        ("charge.refund.updated", failed_refund(intent=None)),
    ):
        assert deliver(client, event(type_, obj)).status_code == 200
    assert available(user) == 20
    assert list(StripeEvent.objects.values_list("outcome", flat=True).order_by("pk"))[1:] == [
        "foreign",
        "foreign",
    ]


def test_a_failed_refund_reported_twice_restores_once(client, user):
    deliver(client, event("checkout.session.completed", checkout(user)))
    deliver(client, event("charge.refunded", refund(refunded=500)))
    deliver(client, event("charge.refund.updated", failed_refund(amount=500)))
    deliver(client, event("charge.refund.updated", failed_refund(amount=500)))  # a new event id
    assert available(user) == 20
    assert_ledger_invariants()


def test_a_refund_update_that_is_not_a_failure_changes_nothing(client, user):
    deliver(client, event("checkout.session.completed", checkout(user)))
    deliver(client, event("charge.refunded", refund(refunded=250)))
    deliver(client, event("charge.refund.updated", failed_refund(status="succeeded")))
    assert available(user) == 10


def test_after_a_failed_refund_a_new_refund_revokes_again(client, user):
    deliver(client, event("checkout.session.completed", checkout(user)))
    deliver(client, event("charge.refunded", refund(refunded=250)))
    deliver(client, event("charge.refund.updated", failed_refund(refund_id="re_1", amount=250)))
    assert available(user) == 20
    deliver(client, event("charge.refunded", refund(refunded=500)))  # re_1 failed + re_2 250
    assert available(user) == 10
    assert_ledger_invariants()


def test_a_failed_refund_before_its_report_ends_the_same(client, user):
    deliver(client, event("checkout.session.completed", checkout(user)))
    deliver(client, event("charge.refund.updated", failed_refund(amount=250)))
    deliver(client, event("charge.refunded", refund(refunded=250)))
    assert available(user) == 20
    assert_ledger_invariants()


def test_a_failed_refund_of_spent_credits_gives_back_only_what_was_taken(client, user):
    deliver(client, event("checkout.session.completed", checkout(user)))
    spend(user, 15)
    deliver(client, event("charge.refunded", refund(refunded=500)))
    assert available(user) == 0
    deliver(client, event("charge.refund.updated", failed_refund(amount=500)))
    assert available(user) == 5
    assert_ledger_invariants()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_many_concurrent_deliveries_of_one_event_grant_once(user, race):
    """200 deliveries of one event, 40 at a time (PostgreSQL's connection limit): one grant."""
    from django.test import Client

    body = json.dumps(event("checkout.session.completed", checkout(user), event_id="evt_same"))
    header = sign(body)

    def post_five() -> list[int]:
        client = Client()
        return [
            client.post(
                "/stripe/webhook/",
                body,
                content_type="application/json",
                HTTP_STRIPE_SIGNATURE=header,
            ).status_code
            for _ in range(5)
        ]

    assert race([post_five] * 40, timeout=120) == [[200] * 5] * 40
    assert available(user) == 20
    assert Transfer.objects.filter(kind="grant").count() == 1
    assert StripeEvent.objects.get().deliveries == 200


def test_a_signed_body_that_is_no_event_is_400_in_fixed_words(client):
    payload = "{not json"
    response = client.post(
        "/stripe/webhook/",
        payload,
        content_type="application/json",
        HTTP_STRIPE_SIGNATURE=sign(payload),
    )
    assert response.status_code == 400
    assert response.json() == {
        "error": "bad_signature",
        "detail": "The body is not a Stripe event.",
    }
