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

A second run goes through every media type the schema declares for a request
body, one at a time (Schemathesis picks one at random per request, so a run may
never send a form or a multipart body to an operation), generated bodies then
malformed ones of that type (a multipart body with no parts, a cut JSON body, …),
and checks that every refusal is in the one error shape.

Bounded and deterministic: a few examples per operation, one worker, generation
derandomized, so a failure found is found again on every run. The rate limits are
raised so that the requests reach what is behind them; 429 `throttled` stays
declared (tests/test_schema_errors.py) and is tested with the throttles themselves.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import time
import uuid

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.people import Visitor
from tests.support.stack import ROOT, WebServer, migrated_database_url, own_redis_url
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
        "REDIS_URL": own_redis_url(),
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
    before Django (mangagen/web/daphne_server.py): the API answers it, in its own shape."""
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


# --- every media type a request body may have --------------------------------------------------

METHODS = {"get", "put", "post", "patch", "delete"}
EXAMPLES = 2  # generated bodies per operation, media type and mode (valid, invalid)
MALFORMED = {
    "application/json": [
        ("application/json", b'{"title": '),  # cut short
        ("application/json", b"[" * 40 + b"]" * 40),  # deeper than the API reads
    ],
    "application/x-www-form-urlencoded": [
        (
            "application/x-www-form-urlencoded",
            b"&".join(b"f%d=1" % n for n in range(1001)),  # past DATA_UPLOAD_MAX_NUMBER_FIELDS
        ),
    ],
    "multipart/form-data": [
        ("multipart/form-data; boundary=fuzz", b"--fuzz--\r\n"),  # only the closing boundary
        ("multipart/form-data", b"--fuzz--\r\n"),  # no boundary named
        (  # a part's headers past what Django reads
            "multipart/form-data; boundary=fuzz",
            b"--fuzz\r\nContent-Disposition: form-data; name=a\r\nX: "
            + b"y" * 9000
            + b"\r\n\r\n1\r\n--fuzz--\r\n",
        ),
    ],
}
ANSWER_CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def declared_media_types(raw: dict) -> set[str]:
    return {
        media_type
        for methods in raw["paths"].values()
        for method, operation in methods.items()
        if method in METHODS
        for media_type in operation.get("requestBody", {}).get("content", {})
    }


def narrowed(raw: dict, media_type: str) -> dict:
    """The schema with only the operations whose body may be `media_type`, each declaring
    that one alone."""
    schema = copy.deepcopy(raw)
    for path, methods in list(schema["paths"].items()):
        for method in [m for m in methods if m in METHODS]:
            content = methods[method].get("requestBody", {}).get("content", {})
            if media_type in content:
                methods[method]["requestBody"]["content"] = {media_type: content[media_type]}
            else:
                del methods[method]
        if not METHODS & set(methods):
            del schema["paths"][path]
    return schema


def assert_in_the_error_shape(response) -> None:
    """A refusal is JSON with `error` and `detail` (`response`: Schemathesis')."""
    if response.status_code < 400:
        return
    where = f"{response.request.method} {response.request.url}"
    content_type = response.headers.get("content-type", [None])[0]
    assert content_type == "application/json", (
        f"{where}: {response.status_code} with {content_type!r}: {response.text[:300]!r}"
    )
    body = response.json()
    assert isinstance(body.get("error"), str) and isinstance(body.get("detail"), str), (
        f"{where}: {response.status_code} {body}"
    )


def test_every_declared_media_type_and_a_malformed_body_of_each_is_answered_in_shape(web):
    """Each operation that takes a body gets, for each media type it declares, generated
    bodies (valid and not) and malformed ones of that type; every answer is one the
    schema declares, and every refusal is the error shape (JSON `error` and `detail`)."""
    started = time.monotonic()
    person = Visitor(web.base_url)
    board = person.post("/api/storyboards/", {"title": "Fuzz", "story": "Aiko runs."})
    series = person.post("/api/series/", {"title": "Fuzz"})
    assert board.status_code == series.status_code == 201, (board.text, series.text)
    ids = {"storyboards": board.json()["id"], "series": series.json()["id"]}
    raw = person.get("/api/schema/?format=json").json()
    media_types = declared_media_types(raw)
    assert {"application/json", "multipart/form-data"} <= media_types
    assert media_types <= set(MALFORMED), "give MALFORMED bodies of the new media type"
    cookies = "; ".join(f"{k}={v}" for k, v in person.http.cookies.items())
    headers = {"Cookie": cookies, "X-CSRFToken": person.csrf, "Referer": f"{web.base_url}/"}
    sent = 0

    def answer(case) -> None:
        nonlocal sent
        response = case.call(base_url=web.base_url, headers=headers, timeout=30)
        sent += 1
        case.validate_response(response, checks=ANSWER_CHECKS, headers=headers)
        assert_in_the_error_shape(response)

    for media_type in sorted(media_types):
        schema = schemathesis.openapi.from_dict(narrowed(raw, media_type))
        for result in schema.get_all_operations():
            operation = result.ok()
            area = operation.path.split("/")[2]
            values = {
                "id": ids.get(area, ids["storyboards"]),
                "name": "Aiko",
                "lang": "ja",
                "index": 1,
            }
            params = {p.name: values[p.name] for p in operation.path_parameters}
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                strategy = operation.as_strategy(generation_mode=mode, path_parameters=params)

                @settings(
                    max_examples=EXAMPLES,
                    derandomize=True,
                    database=None,
                    deadline=None,
                    phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck),
                )
                @given(case=strategy)
                def generated(case) -> None:
                    answer(case)

                generated()
            for content_type, body in MALFORMED[media_type]:
                case = operation.Case(
                    path_parameters=params,
                    media_type=media_type,
                    body=body,
                    headers={"Content-Type": content_type},
                )
                answer(case)
    print(f"{sent} requests in {time.monotonic() - started:.1f} s")  # 248 in 30 s, 2 busy cores
    assert sent > 100
