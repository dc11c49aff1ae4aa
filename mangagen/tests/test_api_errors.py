"""One exception handler answers every refusal in one shape (docs/api.md, "Errors")."""

import pytest

from ledger import errors as ledger_errors
from mangagen.api.errors import exception_handler
from mangagen.errors import ApplicationError
from mangagen.jobs import services as jobs
from mangagen.quotas import Limit, LimitReached


class Teapot(ApplicationError):
    code = "teapot"
    status = 418

    def extra(self) -> dict:
        return {"spout": 1}


def test_an_application_error_is_answered_with_its_code_status_and_extra():
    response = exception_handler(Teapot("Short and stout."), {})
    assert response.status_code == 418
    assert response.data == {"error": "teapot", "detail": "Short and stout.", "spout": 1}


def test_job_refusals_carry_their_own_status():
    assert exception_handler(jobs.IllegalTransition("No."), {}).status_code == 409
    assert exception_handler(jobs.StoryboardIncomplete("No."), {}).data["error"] == "incomplete"
    assert exception_handler(jobs.StoryboardIncomplete("No."), {}).status_code == 400


def test_a_limit_says_when_to_try_again():
    response = exception_handler(LimitReached(Limit.DRAFTS, "Tomorrow.", retry_after=60), {})
    assert response.status_code == 429 and response["Retry-After"] == "60"
    assert response.data == {"error": "draft_quota", "detail": "Tomorrow."}


class View:
    insufficient_credits_detail = "You need a credit to render a panel."


def test_every_402_has_one_shape_and_the_view_may_say_what_the_credit_was_for():
    exc = ledger_errors.InsufficientCredits(available=0, requested=1)
    plain = exception_handler(exc, {"view": object()})
    said = exception_handler(exc, {"view": View()})
    assert plain.status_code == said.status_code == 402
    assert plain.data == {
        "error": "insufficient_credits",
        "detail": "1 credit(s) requested, 0 available.",
        "available": 0,
        "purchase_url": "/credits/",
    }
    assert said.data == {**plain.data, "detail": "You need a credit to render a panel."}


def test_other_ledger_refusals_keep_their_statuses():
    assert exception_handler(ledger_errors.AccountFlagged(), {}).status_code == 403
    assert exception_handler(ledger_errors.HoldExpired(hold_id=1), {}).status_code == 409


@pytest.mark.django_db
@pytest.mark.parametrize(
    "refusal, secret",
    [
        (ledger_errors.IdempotencyConflict(key="stripe:refund:pi_secret:3"), "pi_secret"),
        (ledger_errors.HoldAlreadyResolved(hold_id=4242, state="captured"), "4242"),
        (ledger_errors.HoldExpired(hold_id=4242), "4242"),
        (ledger_errors.HoldAlreadyExpired(hold_id=4242), "4242"),
        (ledger_errors.InvalidAmount("amount=-3 on key job:9:hold"), "job:9"),
    ],
)
def test_a_ledger_refusal_tells_a_person_no_hold_or_key(refusal, secret, caplog):
    """The ledger's own words name holds and idempotency keys: the log has them, the
    answer says what happened in fixed words."""
    response = exception_handler(refusal, {})
    assert response.data["error"] == str(refusal.code)
    assert secret not in response.data["detail"] and response.data["detail"]
    assert secret in caplog.text


def test_an_api_path_no_route_serves_answers_the_api_404(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("unrouted", password="p"))
    for path in ("/api/jobs/-1/cancel/", "/api/no-such-thing/", "/api/storyboards/x/"):
        response = client.post(path)
        assert response.status_code == 404, path
        assert response["Content-Type"] == "application/json"
        assert response.json() == {"error": "not_found", "detail": "Not found."}
    # Without the slash, CommonMiddleware still sends a client to the one with it.
    assert client.get("/api/me").status_code == 301


def test_every_refusal_code_is_a_member_of_its_areas_enum():
    """No error class spells its code by hand: each is a member of an enum."""
    from enum import Enum

    from mangagen.api import schema

    pending = list(ApplicationError.__subclasses__())
    while pending:
        kind = pending.pop()
        pending += kind.__subclasses__()
        if kind.__module__.startswith("mangagen.tests"):
            continue
        assert kind.codes or isinstance(kind.code, Enum), kind
    ledger = list(ledger_errors.LedgerError.__subclasses__())
    assert all(isinstance(kind.code, ledger_errors.LedgerCode) for kind in ledger)
    assert schema.declared(ledger_errors.InsufficientCredits) == [(402, "insufficient_credits")]
