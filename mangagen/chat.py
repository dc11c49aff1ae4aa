"""One call of an OpenAI-compatible chat-completions endpoint, asking for a JSON object.

Used by the chat drafter (story → storyboard), the chat translator and the judge
(a render and its characters' sheets, as pictures). The
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
    chat API takes pictures. Raises as `ask_json` does."""
    response = requests.post(
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
    )
    if response.status_code >= 400:
        raise ValueError(f"the model answered HTTP {response.status_code}")
    content = response.json()["choices"][0]["message"]["content"]
    return json.loads(content)


def reason(exc: Exception) -> str:
    """A failed call's reason, short enough to show a person."""
    text = str(exc) or type(exc).__name__
    return text if len(text) < 160 else text[:157] + "…"
