"""What ProviderHTTP (mangagen/renderers/provider_http.py) sends and reads is bounded,
whatever the provider answers: paths under its base URL only (its auth header never
goes to another host), no redirect followed, an answer's body capped in bytes, and a
malformed `Content-Length` a failed render. Over real HTTP to a local stand-in."""

from __future__ import annotations

import pytest

from mangagen.renderers import RenderError
from mangagen.renderers.provider_http import ProviderHTTP
from tests.support.providers.base import Reply, StandIn

SECRET = {"Authorization": "Bearer provider-key-1234"}


@pytest.fixture
def provider():
    standin = StandIn()
    standin.route("GET", r"/ok", lambda r: Reply(body={"fine": True}))
    standin.route(
        "GET", r"/moved", lambda r: Reply(302, raw=b"", headers={"Location": "/elsewhere"})
    )
    standin.route("GET", r"/elsewhere", lambda r: Reply(body={"followed": True}))
    standin.route("GET", r"/large", lambda r: Reply(body={"b64_json": "A" * 5000}))
    standin.route(
        "GET", r"/large-chunked", lambda r: Reply(body={"b64_json": "A" * 50_000}, chunked=True)
    )
    standin.route(
        "GET",
        r"/odd-length",
        lambda r: Reply(body={"fine": True}, chunked=True, headers={"Content-Length": "lots"}),
    )
    with standin:
        yield standin


def http(standin: StandIn, **options) -> ProviderHTTP:
    return ProviderHTTP(
        name="The stand-in",
        base_url=standin.url,
        headers=SECRET,
        retries=0,
        max_body_bytes=options.pop("max_body_bytes", 1000),
        **options,
    )


def test_a_path_under_the_base_url_is_answered(provider):
    assert http(provider).call("GET", "/ok").body == {"fine": True}
    assert provider.requests[0].headers["authorization"] == SECRET["Authorization"]


@pytest.mark.parametrize(
    "path",
    [
        "{url}/ok",  # even the provider's own host, spelled as an absolute URL
        "http://evil.example/ok",
        "//evil.example/ok",
        "@evil.example/ok",  # base URL + this would name the host evil.example
        "ok",
    ],
)
def test_anything_but_a_path_is_refused_before_anything_is_sent(provider, path):
    with pytest.raises(RenderError, match="not a path under") as refused:
        http(provider).call("GET", path.format(url=provider.url))
    assert not refused.value.retryable
    assert provider.requests == []


def test_a_redirect_is_not_followed(provider):
    with pytest.raises(RenderError, match="redirects are not followed") as refused:
        http(provider).call("GET", "/moved")
    assert not refused.value.retryable
    assert [r.path for r in provider.requests] == ["/moved"], "never /elsewhere"


@pytest.mark.parametrize("path", ["/large", "/large-chunked"])
def test_an_answer_past_the_body_cap_is_refused(provider, path):
    with pytest.raises(RenderError, match="body over 1000 bytes") as refused:
        http(provider).call("GET", path)
    assert not refused.value.retryable
    assert http(provider, max_body_bytes=100_000).call("GET", path).body["b64_json"]


def test_a_content_length_that_is_not_a_number_is_a_failed_render(provider):
    with pytest.raises(RenderError, match="not a number of bytes"):
        http(provider).call("GET", "/odd-length")
