"""One call of an OpenAI-compatible chat-completions endpoint, asking for a JSON object.

Used by the chat drafter (story → storyboard), the chat translator and the judge
(a render and its characters' sheets, as pictures). The
endpoint is `POST {base}/v1/chat/completions` with `response_format`
`{"type": "json_object"}` (OpenAI's JSON mode, which LocalAI, vLLM, SGLang
and Ollama's OpenAI API accept too); the object is read from the first
choice's message content.

The call goes to that URL alone (a redirect is not followed: it is an answer that
cannot be used, and the key is never sent elsewhere), and its answer is read up to
CHAT_MAX_ANSWER_BYTES (a draft of the longest storyboard is some tens of kilobytes).

A call that fails raises `ChatFailed`, whose `kind` says why in one of a few
fixed ways (`ChatFailure`). A person is told only that (`ChatFailed.reason`):
the exception's own words name the endpoint's host, port and path, so they go
to the log, whose lines carry the request's id, and nowhere else.
"""

from __future__ import annotations

import json
import logging
from enum import StrEnum

import requests
from django.conf import settings
from django.utils.translation import gettext, gettext_lazy

logger = logging.getLogger(__name__)


class ChatFailure(StrEnum):
    """Why a chat model's answer could not be used."""

    UNREACHABLE = "unreachable"  # no connection (refused, no such host, TLS)
    TIMED_OUT = "timed_out"  # connected, but no answer within CHAT_TIMEOUT_SECONDS
    REFUSED = "refused"  # an HTTP 4xx: a key, a model name or a quota it will not take
    FAILING = "failing"  # an HTTP 5xx: the model's server is failing
    UNUSABLE = "unusable"  # an answer, but not the JSON asked for (or it broke the rules)


# What a person is told for each kind, as part of a sentence ("… could not be used (…)").
REASONS = {
    ChatFailure.UNREACHABLE: gettext_lazy("the model could not be reached"),
    ChatFailure.TIMED_OUT: gettext_lazy("the model did not answer in time"),
    ChatFailure.REFUSED: gettext_lazy("the model refused the request"),
    ChatFailure.FAILING: gettext_lazy("the model answered with an error"),
    ChatFailure.UNUSABLE: gettext_lazy("the model's answer was not what was asked for"),
}


class ChatFailed(Exception):
    """A chat call that gave nothing usable. `str()` is the detail for the log (it may
    name the endpoint); `reason` is the fixed words for a person."""

    def __init__(self, kind: ChatFailure, detail: str):
        super().__init__(detail)
        self.kind = kind

    @property
    def reason(self) -> str:
        """Why, in the interface's language, naming no host, port, path or key."""
        return gettext(REASONS[self.kind])

    def log(self, what: str) -> None:
        """Writes the detail to the log (with the request's id, as every line has)."""
        logger.warning("%s failed (%s): %s", what, self.kind, self)


def ask_json(
    *,
    base_url: str,
    api_key: str,
    model: str,
    timeout: float,
    system: str,
    user: str,
    temperature: float,
) -> object:
    """The JSON the model answered. Raises ChatFailed when the endpoint cannot be reached,
    does not answer in time, answers an HTTP error, or answers anything but JSON in the
    shape of a chat completion."""
    return ask_json_at(
        url=f"{base_url.rstrip('/')}/v1/chat/completions",
        api_key=api_key,
        model=model,
        timeout=timeout,
        system=system,
        user=user,
        temperature=temperature,
    )


def ask_json_at(
    *,
    url: str,
    api_key: str,
    model: str,
    timeout: float | tuple[float, float],
    system: str,
    user: str | list[dict],
    temperature: float,
) -> object:
    """`ask_json` at the chat-completions `url` itself. `user` is the user message's
    content: text, or a list of content parts (`{"type": "text", "text": …}`,
    `{"type": "image_url", "image_url": {"url": "data:image/…;base64,…"}}`), as the
    chat API takes pictures. Raises ChatFailed as `ask_json` does."""
    try:
        with requests.post(
            url,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            json={
                "model": model,
                "response_format": {"type": "json_object"},
                "temperature": temperature,
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
            },
            timeout=timeout,
            # The key goes to this URL alone: a redirect is an answer that is not the one
            # asked for, never a request sent elsewhere with it.
            allow_redirects=False,
            stream=True,
        ) as response:
            status, body = response.status_code, _bounded_body(response)
    except requests.Timeout as exc:  # before ConnectionError: a ConnectTimeout is both
        raise ChatFailed(ChatFailure.TIMED_OUT, f"{type(exc).__name__}: {exc}") from exc
    except requests.RequestException as exc:
        raise ChatFailed(ChatFailure.UNREACHABLE, f"{type(exc).__name__}: {exc}") from exc
    if status >= 400:
        kind = ChatFailure.FAILING if status >= 500 else ChatFailure.REFUSED
        raise ChatFailed(kind, f"HTTP {status}: {body[:300].decode(errors='replace')}")
    if status >= 300:
        raise ChatFailed(ChatFailure.UNUSABLE, f"HTTP {status}: a redirect, not followed")
    try:
        content = json.loads(body)["choices"][0]["message"]["content"]
        return json.loads(content)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ChatFailed(ChatFailure.UNUSABLE, f"{type(exc).__name__}: {exc}") from exc


def _bounded_body(response: requests.Response) -> bytes:
    """The answer's body, at most CHAT_MAX_ANSWER_BYTES: one whose Content-Length says
    more is refused before it is read, one that runs past it as soon as it does."""
    limit = settings.CHAT_MAX_ANSWER_BYTES
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ChatFailed(ChatFailure.UNUSABLE, f"an answer of {declared} bytes, past {limit}")
    body = bytearray()
    for chunk in response.iter_content(64 * 1024):
        body += chunk
        if len(body) > limit:
            raise ChatFailed(ChatFailure.UNUSABLE, f"an answer past {limit} bytes")
    return bytes(body)
