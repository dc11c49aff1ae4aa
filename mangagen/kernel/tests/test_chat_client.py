"""The chat client (drafter, translator, judge) goes to its URL alone and reads a bounded
answer (issue #45, item 6): a redirect is not followed (the key is never sent
elsewhere), and an answer past CHAT_MAX_ANSWER_BYTES is refused, before it is read when
its Content-Length says so."""

from __future__ import annotations

import json

import pytest

from mangagen.kernel.chat_client import ChatFailed, ChatFailure, ask_json
from tests.support.standin import Canned, serve


def completion(content: dict) -> dict:
    return {"choices": [{"message": {"content": json.dumps(content)}}]}


@pytest.fixture
def two_hosts():
    first, first_server = serve()
    second, second_server = serve()
    yield first, second
    for server in (first_server, second_server):
        server.shutdown()
        server.server_close()


def ask(url: str):
    return ask_json(
        base_url=url,
        api_key="sk-secret",
        model="m",
        timeout=10,
        system="s",
        user="u",
        temperature=0,
    )


def test_an_answer_is_read(standin):
    standin.reply(Canned(body=completion({"panels": []})))
    assert ask(standin.url) == {"panels": []}


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else(two_hosts, status):
    first, elsewhere = two_hosts
    target = f"{elsewhere.url}/v1/chat/completions"
    first.reply(Canned(status=status, body={}, headers={"Location": target}))
    elsewhere.reply(Canned(body=completion({"stolen": True})))
    with pytest.raises(ChatFailed) as failed:
        ask(first.url)
    assert failed.value.kind == ChatFailure.UNUSABLE
    assert elsewhere.requests == []


def test_an_answer_said_to_be_past_the_cap_is_refused_unread(standin, settings):
    settings.CHAT_MAX_ANSWER_BYTES = 1000
    standin.reply(Canned(raw=b"x" * 5000))
    with pytest.raises(ChatFailed) as failed:
        ask(standin.url)
    assert failed.value.kind == ChatFailure.UNUSABLE and "5000" in str(failed.value)


def test_an_answer_without_a_length_is_cut_at_the_cap(standin, settings):
    settings.CHAT_MAX_ANSWER_BYTES = 1000
    padded = completion({"text": "y" * 5000})
    standin.reply(Canned(body=padded, send_length=False))
    with pytest.raises(ChatFailed) as failed:
        ask(standin.url)
    assert failed.value.kind == ChatFailure.UNUSABLE and "past 1000" in str(failed.value)
