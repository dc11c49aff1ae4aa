"""Translations drafted by a model (issue #25): a chat model drafts the lines a
translation is missing, over real HTTP against a local stand-in answering as OpenAI's
chat-completions endpoint does; what it may not do (no translator, a failed or
unreachable model, a line written meanwhile) changes nothing.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mangagen.translations import services
from mangagen.translations.matching import Edit
from tests.support.standin import Canned
from tests.support.translations import CAST, JAPANESE, PANELS, edit_original, put, texts, url

ROOT = Path(__file__).resolve().parents[3]

pytestmark = [pytest.mark.board(characters=CAST, panels=PANELS)]


# --- machine drafts --------------------------------------------------------------------------


REQUEST_ID = "8d3c8a1e3b7e4f0a9c6b5d4e3f2a1b0c"


def completion(content: dict) -> Canned:
    """An answer as OpenAI's chat-completions endpoint gives it (a chat.completion object)."""
    return Canned(
        body={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1767225600,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": json.dumps(content)},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160},
        }
    )


@pytest.fixture
def translator(settings, standin):
    settings.TRANSLATOR = "openai"
    settings.CHAT_BASE_URL = standin.url
    settings.CHAT_API_KEY = "sk-test"
    settings.CHAT_MODEL = "gpt-4o-mini"
    settings.CHAT_TIMEOUT_SECONDS = 5
    return standin


@pytest.mark.django_db
def test_drafting_without_a_translator_answers_409(board, person, settings):
    settings.TRANSLATOR = "none"
    response = person.post(url(board, "ja", "draft/"))
    assert response.status_code == 409 and response.json()["error"] == "no_translator"
    assert person.get(url(board)).json()["translations"] == []


@pytest.mark.django_db
def test_the_model_drafts_the_missing_lines_only(board, person, translator):
    put(person, board, "ja", {"panels": [{"index": 2, "dialogue": ["誰？"]}]})
    translator.reply(
        completion(
            {
                "lines": {
                    "title": "屋上",
                    "p1.c": "ネオ京都、午前二時。",
                    "p2.l2": "出てきなさい。",
                    "p3.l1": "俺だよ。",
                    "p9.l1": "stray",
                }
            }
        )
    )
    response = person.post(url(board, "ja", "draft/"))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert texts(body) == [
        "屋上",
        ["ネオ京都、午前二時。"],
        ["誰？", "出てきなさい。", ""],
        ["俺だよ。", ""],
    ]
    assert body["missing"] == 0 and body["notice"] == "The language model drafted 4 lines."
    assert (
        body["panels"][1]["dialogue"][1]["drafted"]
        and not body["panels"][1]["dialogue"][0]["drafted"]
    )

    (sent,) = translator.requests
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == "Bearer sk-test"
    assert sent["json"]["model"] == "gpt-4o-mini"
    assert sent["json"]["response_format"] == {"type": "json_object"}
    asked = json.loads(sent["json"]["messages"][-1]["content"])
    assert (asked["from"], asked["to"]) == ("English", "Japanese")
    assert {line["id"]: line["text"] for line in asked["lines"]} == {
        "title": "Rooftops",
        "p1.c": "Neo-Kyoto, 2 a.m.",
        "p2.l2": "Show yourself.",
        "p3.l1": "Only me.",
    }, "the line a person translated is not sent"

    edited = put(person, board, "ja", {"panels": [{"index": 3, "dialogue": ["僕だ。"]}]})
    assert not edited.json()["panels"][2]["dialogue"][0]["drafted"], "a person's line now"


@pytest.mark.django_db
def test_a_draft_creates_the_translation_and_counts_in_the_daily_quota(
    board, person, translator, settings
):
    settings.DRAFT_DAILY_QUOTA = 1
    translator.reply(completion({"lines": {"title": "Toits"}}))
    first = person.post(url(board, "fr", "draft/"))
    assert first.status_code == 200
    assert first.json()["title"] == "Toits" and first.json()["missing"] == 4
    assert "1 of the 5 missing lines" in first.json()["notice"]
    second = person.post(url(board, "fr", "draft/"))
    assert second.status_code == 429 and second.json()["error"] == "draft_quota"
    assert len(translator.requests) == 1


@pytest.mark.django_db
def test_nothing_missing_asks_nothing_and_counts_nothing(board, person, translator, settings):
    settings.DRAFT_DAILY_QUOTA = 0
    put(person, board, "ja", JAPANESE)
    response = person.post(url(board, "ja", "draft/"))
    assert (
        response.status_code == 200
        and response.json()["notice"] == "Every line is translated already."
    )
    assert translator.requests == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "reply, reason",
    [
        (
            Canned(status=503, body={"error": {"message": "overloaded"}}),
            "could not be used (the model answered with an error)",
        ),
        (
            Canned(status=403, body={"error": {"message": "no such model"}}),
            "could not be used (the model refused the request)",
        ),
        (completion({"lines": ["not", "a", "map"]}), "not a set of lines"),
        (completion({"lines": {"title": 7, "p1.c": "x" * 301}}), "none of the lines"),
        (
            Canned(body={"choices": [{"message": {"role": "assistant", "content": "Sure!"}}]}),
            "could not be used (the model's answer was not what was asked for)",
        ),
    ],
)
def test_a_failed_draft_answers_502_and_changes_nothing(board, person, translator, reply, reason):
    put(person, board, "ja", {"title": "屋上"})
    before = person.get(url(board, "ja")).json()
    translator.reply(reply)
    response = person.post(url(board, "ja", "draft/"))
    assert response.status_code == 502 and response.json()["error"] == "translator_failed"
    assert reason in response.json()["detail"]
    assert "overloaded" not in response.text and "no such model" not in response.text
    assert person.get(url(board, "ja")).json() == before


@pytest.mark.django_db
def test_an_unreachable_model_is_named_in_fixed_words_and_its_address_only_in_the_log(
    board, person, translator, settings, caplog
):
    from mangagen.observability.logs import ContextFilter

    caplog.handler.addFilter(ContextFilter())  # as the console handler does: the request id
    settings.CHAT_BASE_URL = "http://127.0.0.1:9/internal-chat"
    response = person.post(url(board, "ja", "draft/"), HTTP_X_REQUEST_ID=REQUEST_ID)
    assert response.status_code == 502 and response.json() == {
        "error": "translator_failed",
        "detail": "The translation model could not be used (the model could not be reached); "
        "nothing was changed.",
    }
    logged = [r for r in caplog.records if "internal-chat" in r.getMessage()]
    assert logged and "port=9" in logged[0].getMessage()
    assert logged[0].request_id == REQUEST_ID


@pytest.mark.django_db
def test_a_line_written_while_the_model_answers_is_kept(board, person, translator, monkeypatch):
    """The person types on while the model works: their line wins over the draft's."""
    from mangagen.translations.chat import ChatTranslator

    answer = ChatTranslator.translate

    def slow(self, **kwargs):
        result = answer(self, **kwargs)
        services.save_translation(
            storyboard=board,
            language="ja",
            panels=[{"index": 3, "dialogue": [Edit("僕だ。")]}],
        )
        edit_original(board, {2: {"dialogue": [{"speaker": "Aiko", "text": "Hello?"}]}})
        return result

    monkeypatch.setattr(ChatTranslator, "translate", slow)
    translator.reply(completion({"lines": {"title": "屋上", "p2.l1": "誰？", "p3.l1": "俺だよ。"}}))
    body = person.post(url(board, "ja", "draft/")).json()
    assert body["title"] == "屋上"
    assert body["panels"][2]["dialogue"][0]["text"] == "僕だ。", "the person's line"
    assert body["panels"][1]["dialogue"][0]["text"] == "", "its original changed meanwhile"


def test_an_unknown_translator_refuses_to_start():
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=os.environ | {"DEBUG": "on", "TRANSLATOR": "babelfish"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "TRANSLATOR is 'babelfish'; use one of: none, openai." in done.stderr
