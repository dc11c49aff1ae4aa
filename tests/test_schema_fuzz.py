"""Schemathesis against the real web process: every answer is one the served schema declares.

`bin/web` (daphne, as the Procfile runs it) on a database of its own, with Stripe
Checkout pointed at a local stand-in (tests/support/stripe_checkout.py), so a
checkout answers as it would with real keys. A person signs up and gets credits;
Schemathesis reads `/api/schema/` as served and sends generated requests with the
person's session and CSRF token, through its examples, fuzzing and stateful
phases (sequences that follow the links it infers between operations: a
storyboard created, then read, edited, generated…; and the coverage phase with
SCHEMA_FUZZ_COVERAGE=1), checking each answer:

- not a server error (no 5xx),
- its status is one the operation declares,
- its content type and its body match what the schema declares for that status.

Bounded and deterministic: a few examples per operation, one worker, generation
derandomized, so a failure found is found again on every run. The rate limits are
raised so that the requests reach what is behind them; 429 `throttled` stays
declared (tests/test_schema_errors.py) and is tested with the throttles themselves.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from tests.support.people import Visitor
from tests.support.stack import ROOT, WebServer, migrated_database_url, redis_url
from tests.support.stripe_checkout import StripeCheckout

ARTIFACTS = ROOT / "artifacts"
CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
]
# The coverage phase (every boundary of every parameter) takes about two minutes here
# on its own: SCHEMA_FUZZ_COVERAGE=1 adds it for a deeper run.
PHASES = "examples,fuzzing,stateful" + (
    ",coverage" if os.environ.get("SCHEMA_FUZZ_COVERAGE") else ""
)
UNTHROTTLED = {
    f"THROTTLE_{scope}": "100000/min"
    for scope in ("SPECULATE", "LEAVE", "GENERATE", "DRAFT", "CHECKOUT", "STORYBOARDS", "EXPORT")
}


@pytest.fixture(scope="module")
def stripe():
    with StripeCheckout() as standin:
        yield standin


@pytest.fixture(scope="module")
def web(stripe):
    env = {
        "DATABASE_URL": migrated_database_url("schema_fuzz"),
        "REDIS_URL": redis_url(9),
        "STRIPE_SECRET_KEY": "sk_test_fuzz",
        "STRIPE_WEBHOOK_SECRET": "whsec_fuzz",
        "STRIPE_API_BASE": stripe.url,
        **UNTHROTTLED,
    }
    with WebServer(env=env, log=ARTIFACTS / "schema-fuzz-web.log") as running:
        yield running


def test_every_answer_is_one_the_served_schema_declares(web, stripe):
    person = Visitor(web.base_url)
    web.manage("grant_credits", person.username, "30", "--reason", "schema fuzz")
    schema = person.get("/api/schema/?format=json")
    assert schema.status_code == 200, schema.text[:300]
    operations = sum(len(methods) for methods in schema.json()["paths"].values())
    cookies = "; ".join(f"{k}={v}" for k, v in person.http.cookies.items())
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemathesis.cli",
            "--config-file",
            str(ROOT / "tests" / "schemathesis.toml"),
            "run",
            f"{web.base_url}/api/schema/?format=json",
            "--header",
            f"Cookie: {cookies}",
            "--header",
            f"X-CSRFToken: {person.csrf}",
            "--header",
            f"Referer: {web.base_url}/",
            "--checks",
            ",".join(CHECKS),
            "--phases",
            PHASES,
            "--max-examples",
            "10",
            "--generation-deterministic",
            "--workers",
            "1",
            # The session is the person's: never one Schemathesis makes up.
            "--generation-with-security-parameters",
            "false",
            "--request-timeout",
            "30",
            "--no-color",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = run.stdout + run.stderr
    (ARTIFACTS / "schema-fuzz.txt").write_text(output)
    assert run.returncode == 0, output[-12000:]
    assert f"Tested: {operations}" in output, output[-3000:]
    assert "Stateful" in output and "Scenarios:" in output, output[-3000:]
    assert stripe.sessions, "no checkout reached Stripe's stand-in"


def test_a_multipart_body_reaches_django_whatever_it_holds(web):
    """daphne's Twisted no longer answers a multipart body it cannot parse with a bare 400
    before Django (mangagen/daphne_server.py): the API answers it, in its own shape."""
    person = Visitor(web.base_url)
    board = person.post("/api/storyboards/", {"title": "Multipart", "story": "Aiko runs."})
    assert board.status_code == 201, board.text
    boundary = uuid.uuid4().hex
    empty = person.request(
        "POST",
        f"/api/storyboards/{board.json()['id']}/speculate/leave/",
        data=f"--{boundary}--\r\n",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert empty.status_code == 400
    assert empty.headers["Content-Type"] == "application/json"
    assert empty.json()["error"] == "invalid"  # no token: the view's own refusal
