"""One exception handler answers every refusal in one shape (docs/api.md, "Errors")."""

import pytest

from ledger import errors as ledger_errors
from mangagen.api.errors import exception_handler
from mangagen.jobs import services as jobs
from mangagen.kernel.errors import ApplicationError
from mangagen.kernel.quotas import Limit, LimitReached


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
        if ".tests." in kind.__module__ or kind.__module__.startswith("tests."):
            continue
        assert kind.codes or isinstance(kind.code, Enum), kind
    ledger = list(ledger_errors.LedgerError.__subclasses__())
    assert all(isinstance(kind.code, ledger_errors.LedgerCode) for kind in ledger)
    assert schema.declared(ledger_errors.InsufficientCredits) == [(402, "insufficient_credits")]


# --- bodies the API cannot read (mangagen/api/parsers.py) ---------------------------------

BOUNDARY = "b0undary"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"


def part(name: str, value: str, *, filename: str = "") -> bytes:
    named = f'name="{name}"' + (f'; filename="{filename}"' if filename else "")
    return f"--{BOUNDARY}\r\nContent-Disposition: form-data; {named}\r\n\r\n{value}\r\n".encode()


CLOSE = f"--{BOUNDARY}--\r\n".encode()


@pytest.mark.parametrize(
    "content_type, body, detail",
    [
        ("application/json", b'{"title": ', "The body is not valid JSON."),
        ("application/json", b'{"title": "\xff"}', "The body is not valid JSON."),
        ("application/json", b"[" * 100_000, "The body is nested more than 32 levels deep."),
        ("application/json", b"[" * 33 + b"]" * 33, "The body is nested more than 32 levels deep."),
        (
            "application/json; charset=bz2_codec",
            b"{}",
            "The body's charset is not one the API reads.",
        ),
        (
            "application/x-www-form-urlencoded",
            b"&".join(b"f%d=1" % n for n in range(1001)),
            "The body has more than 1000 fields.",
        ),
        (
            "application/x-www-form-urlencoded",
            b"title=" + b"y" * (2_621_440 + 1),
            "The body is larger than 2621440 bytes.",
        ),
        ("multipart/form-data", b"x", "The body is not a valid multipart form."),
        (
            MULTIPART,
            b"".join(part(f"f{n}", "1") for n in range(1001)) + CLOSE,
            "The body has more than 1000 fields.",
        ),
        (
            MULTIPART,
            b"".join(part(f"f{n}", "1", filename="a.png") for n in range(101)) + CLOSE,
            "The body has more than 100 files.",
        ),
        (
            MULTIPART,
            part("title", "y" * (2_621_440 + 1)) + CLOSE,
            "The body is larger than 2621440 bytes.",
        ),
        (
            MULTIPART,
            f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=a\r\nX: {'y' * 9000}\r\n\r\n"
            f"1\r\n--{BOUNDARY}--\r\n".encode(),
            "The body is not a valid multipart form.",
        ),
    ],
    ids=[
        "json-cut",
        "json-not-utf8",
        "json-past-recursion",
        "json-33-deep",
        "json-bytes-codec",
        "form-fields",
        "form-size",
        "multipart-no-boundary",
        "multipart-fields",
        "multipart-files",
        "multipart-size",
        "multipart-header",
    ],
)
def test_a_body_the_api_cannot_read_answers_parse_error_in_fixed_words(
    person, content_type, body, detail
):
    """In the error shape whatever the media type, in words that quote no parser (Django
    answered the bounds with an HTML page, deep JSON with a 500)."""
    response = person.generic("POST", "/api/storyboards/", body, content_type=content_type)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"error": "parse_error", "detail": detail}


def test_json_as_deep_as_allowed_is_read(person):
    body = b'{"title": "Deep", "story": ' + b"[" * 31 + b"]" * 31 + b"}"
    response = person.generic("POST", "/api/storyboards/", body, content_type="application/json")
    assert response.status_code == 400 and response.json()["error"] == "invalid"  # not a string


def test_a_multipart_body_with_no_parts_is_read_as_an_empty_form(person):
    response = person.generic("POST", "/api/storyboards/", CLOSE, content_type=MULTIPART)
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert response.json()["error"] == "invalid"
    assert response.json()["fields"] == {"title": ["This field is required."]}
