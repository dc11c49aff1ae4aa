"""One client address everywhere (issue #45, item 4): every throttle, the sign-in lockout
and the log lines count the caller as mangagen/kernel/client_address.py does: the
trusted proxy hop of X-Forwarded-For (BEHIND_PROXY, TRUSTED_PROXY_HOPS), an IPv6 /64,
and never a header value as it came (DRF's own get_ident keyed on the whole header)."""

from __future__ import annotations

import json
import logging

import pytest
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework import throttling
from rest_framework.throttling import ScopedRateThrottle as DrfScopedRateThrottle

from mangagen.api import throttles
from mangagen.kernel.client_address import client_address, counted_address
from mangagen.observability import logs
from mangagen.publishing import services as publishing
from tests.support import factories

pytestmark = pytest.mark.django_db


def request(remote: str = "198.51.100.7", forwarded: str | None = None):
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **extra)


# --- the address -------------------------------------------------------------------------


def test_the_header_is_ignored_unless_behind_a_proxy(settings):
    settings.BEHIND_PROXY = False
    assert client_address(request(forwarded="203.0.113.9")) == "198.51.100.7"


@pytest.mark.parametrize(
    "hops, forwarded, expected",
    [
        (1, "203.0.113.9", "203.0.113.9"),
        (1, "1.1.1.1, 2.2.2.2, 203.0.113.9", "203.0.113.9"),  # what the client wrote: left
        (2, "1.1.1.1, 203.0.113.9, 10.0.0.2", "203.0.113.9"),  # a CDN, then the proxy
        (2, "203.0.113.9", "198.51.100.7"),  # shorter than the chain: the connection's
        (1, "not-an-address", "198.51.100.7"),
        (1, "", "198.51.100.7"),
        (1, "2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        (1, "::ffff:203.0.113.9", "203.0.113.9"),
        (1, "x" * 8192, "198.51.100.7"),
    ],
)
def test_behind_a_proxy_the_trusted_hop_is_the_client(settings, hops, forwarded, expected):
    settings.BEHIND_PROXY = True
    settings.TRUSTED_PROXY_HOPS = hops
    assert client_address(request(forwarded=forwarded)) == expected


def test_an_address_is_counted_bounded():
    assert counted_address("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64"
    assert counted_address("[2001:db8::1]") == "2001:db8::/64"
    assert counted_address("127.attacker.example") == "unknown"
    assert counted_address("9" * 400) == "unknown"


# --- the throttles -------------------------------------------------------------------------


def throttle_classes() -> set[type]:
    """Every throttle class a routed API view names."""
    found: set[type] = set()
    pending = list(get_resolver().url_patterns)
    while pending:
        entry = pending.pop()
        if isinstance(entry, URLResolver):
            pending.extend(entry.url_patterns)
        elif isinstance(entry, URLPattern):
            view = getattr(entry.callback, "view_class", None) or getattr(
                entry.callback, "cls", None
            )
            found |= set(getattr(view, "throttle_classes", ()) or ())
    return found


def test_every_throttle_a_view_names_counts_the_one_client_address():
    classes = throttle_classes()
    assert throttles.ScopedRateThrottle in classes and throttles.AddressThrottle in classes
    for throttle in classes:
        assert issubclass(throttle, throttles.ScopedRateThrottle), throttle
        assert throttle.get_ident is throttles.ScopedRateThrottle.get_ident, throttle


def test_a_rotating_header_behind_a_proxy_is_one_caller(settings):
    settings.BEHIND_PROXY = True

    class View:
        throttle_scope = "read"

    keys = set()
    for n in range(20):
        made = request(remote="10.0.0.2", forwarded=f"9.9.{n}.{n}, 203.0.113.9")
        made.user = type("Anonymous", (), {"is_authenticated": False})()
        throttle = throttles.ScopedRateThrottle()
        throttle.scope = "read"
        keys.add(throttle.get_cache_key(made, View()))
    assert keys == {"throttle_read_203.0.113.9"}
    # DRF's own, for the record: twenty callers, each a key as long as the header.
    drf = DrfScopedRateThrottle()
    made = request(remote="10.0.0.2", forwarded="9.9.9.9, 203.0.113.9")
    assert drf.get_ident(made) != "203.0.113.9"


def test_throttle_keys_are_bounded_whatever_the_header(settings):
    settings.BEHIND_PROXY = True
    made = request(forwarded="a" * 8192)
    ident = throttles.ScopedRateThrottle().get_ident(made)
    assert ident == "198.51.100.7"
    assert isinstance(throttles.AddressThrottle(), throttling.ScopedRateThrottle)


@pytest.mark.parametrize("behind", [False, True])
def test_a_reading_link_read_with_a_rotating_header_is_throttled_as_one_address(
    person, user, monkeypatch, settings, behind
):
    settings.BEHIND_PROXY = behind
    board = factories.storyboard(user, panels=[{"description": "Aiko waits."}])
    factories.keep(board)
    link, _ = publishing.publish_comic(storyboard=board)
    url = f"/read/{link.token}/"
    monkeypatch.setattr(DrfScopedRateThrottle, "THROTTLE_RATES", {"read": "3/min"})
    reader = Client(REMOTE_ADDR="10.0.0.2")
    answers = [
        # What a proxy in front forwards: whatever the client sent, then the client.
        reader.get(url, headers={"X-Forwarded-For": f"7.7.{n}.{n}, 203.0.113.9"}).status_code
        for n in range(6)
    ]
    assert answers == [200, 200, 200, 429, 429, 429]
    other = reader.get(url, headers={"X-Forwarded-For": "7.7.7.7, 203.0.113.10"}).status_code
    assert other == (200 if behind else 429)  # another client, when the hop is trusted


# --- the lockout and the logs -----------------------------------------------------------------


def test_the_lockout_and_the_log_line_name_the_trusted_hop(client, make_user, settings, caplog):
    make_user("kenji", password="paper-lantern-42")
    settings.BEHIND_PROXY = True
    settings.LOGIN_FAILURES_PER_ADDRESS = 3
    for n in range(3):
        client.post(
            "/accounts/login/",
            {"username": f"g{n}", "password": "wrong"},
            headers={"X-Forwarded-For": f"5.5.5.{n}, 203.0.113.9"},
        )
    with caplog.at_level(logging.WARNING, logger="mangagen.accounts.forms"):
        locked = client.post(
            "/accounts/login/",
            {"username": "kenji", "password": "paper-lantern-42"},
            headers={"X-Forwarded-For": "5.5.5.5, 203.0.113.9"},
        )
    assert locked.status_code == 429
    [line] = [r for r in caplog.records if r.name == "mangagen.accounts.forms"]
    assert "203.0.113.9" in line.getMessage()


def test_a_request_s_log_lines_carry_its_client_address(client, settings, capsys):
    settings.BEHIND_PROXY = True
    config = logs.logging_config(level="INFO", json=True)
    handler = logging.StreamHandler()
    handler.addFilter(logs.ContextFilter())
    formatter_config = dict(config["formatters"]["default"])
    formatter_class = formatter_config.pop("()")
    module, _, name = formatter_class.rpartition(".")
    handler.setFormatter(getattr(__import__(module, fromlist=[name]), name)(**formatter_config))
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    try:
        client.get("/api/me/", headers={"X-Forwarded-For": "6.6.6.6, 2001:db8:9:9::1"})
    finally:
        logger.removeHandler(handler)
    lines = [json.loads(line) for line in capsys.readouterr().err.strip().splitlines()]
    refused = [line for line in lines if "/api/me/" in line["message"]]
    assert refused and refused[-1]["client"] == "2001:db8:9:9::/64"
