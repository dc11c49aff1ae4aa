"""One call of an OpenAI-compatible chat-completions endpoint, asking for a JSON object.

Used by the chat drafter (story → storyboard) and the chat translator. The
endpoint is `POST {base}/v1/chat/completions` with `response_format`
`{"type": "json_object"}` (OpenAI's JSON mode, which LocalAI, vLLM, SGLang
and Ollama's OpenAI API accept too); the object is read from the first
choice's message content.
"""

from __future__ import annotations

import json

import requests


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
    """The JSON the model answered. Raises `requests.RequestException` when the
    endpoint cannot be reached, ValueError for an HTTP error or an answer that is
    not JSON, KeyError/IndexError/TypeError for an answer of another shape."""
    response = requests.post(
        f"{base_url.rstrip('/')}/v1/chat/completions",
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
    )
    if response.status_code >= 400:
        raise ValueError(f"the model answered HTTP {response.status_code}")
    content = response.json()["choices"][0]["message"]["content"]
    return json.loads(content)


def reason(exc: Exception) -> str:
    """A failed call's reason, short enough to show a person."""
    text = str(exc) or type(exc).__name__
    return text if len(text) < 160 else text[:157] + "…"
