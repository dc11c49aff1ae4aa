"""Drafting: the offline rules, and the chat backend against a local stand-in."""

import json
from dataclasses import replace

import pytest

from mangagen.drafting import get_drafter
from mangagen.drafting.openai_chat import ChatDrafter
from mangagen.drafting.rules import RuleDrafter, find_names
from mangagen.storyboards import limits
from tests.support.standin import Canned


def test_names_are_found_and_common_words_and_places_are_not():
    story = (
        "Kenji caught her hand. The city slept. Meanwhile Director Sato watched.\n\n"
        '"Run!" shouted Aiko. Sato smiled. Tuesday came. It rained on Neo-Kyoto.'
    )
    names = find_names(story)
    assert set(names) == {"Kenji", "Sato", "Aiko"}  # Neo-Kyoto is where it rained
    assert names[0] == "Sato"  # the most frequent first


def test_each_paragraph_becomes_a_panel_with_its_speech():
    draft = RuleDrafter().draft(
        title="t",
        story='Aiko waited by the gate.\n\n"You came," said Kenji. Aiko nodded.',
        characters=[],
    )
    assert len(draft.panels) == 2
    assert draft.panels[1]["dialogue"] == [{"speaker": "Kenji", "text": "You came."}]
    assert draft.panels[1]["characters"] == ["Kenji", "Aiko"]
    assert "said Kenji" not in draft.panels[1]["description"]


def test_pronoun_attribution_goes_to_the_last_named_person():
    draft = RuleDrafter().draft(
        title="t", story='Kenji looked up. "Again?" he asked.', characters=[]
    )
    assert draft.panels[0]["dialogue"][0]["speaker"] == "Kenji"


def test_unattributed_speech_is_narration():
    draft = RuleDrafter().draft(title="t", story='"Is anyone there?"', characters=[])
    assert draft.panels[0]["dialogue"] == [{"speaker": "", "text": "Is anyone there?"}]


def test_shots_follow_the_content():
    story = (
        "The old town lay under snow.\n\n"
        "Aiko sprinted down the alley.\n\n"
        '"Who are you?" Aiko asked.\n\n'
        "Aiko, Kenji and Sato sat at the table, Mei and Jun beside them."
    )
    shots = [p["shot"] for p in RuleDrafter().draft(title="t", story=story, characters=[]).panels]
    assert shots == ["establishing", "action", "close-up", "wide"]


def test_a_caption_comes_from_a_scene_opener():
    story = 'Later that night, the harbour was empty. "Here," Aiko whispered.'
    panel = RuleDrafter().draft(title="t", story=story, characters=[]).panels[0]
    assert panel["caption"] == "Later that night, the harbour was empty."


def test_a_long_story_fits_the_limits():
    paragraph = 'Aiko ran. "Go!" Aiko shouted. Kenji followed. Sato waited. ' * 3
    story = "\n\n".join([paragraph] * 60)
    draft = RuleDrafter().draft(title="t", story=story, characters=[])
    assert 0 < len(draft.panels) <= limits.MAX_PANELS
    for panel in draft.panels:
        assert len(panel["description"]) <= limits.MAX_PANEL_DESCRIPTION
        assert len(panel["dialogue"]) <= limits.MAX_DIALOGUE_LINES


def test_many_names_are_capped():
    story = " ".join(f"Then Name{chr(65 + i)}x waved." for i in range(20))
    draft = RuleDrafter().draft(title="t", story=story, characters=[])
    assert len(draft.characters) == limits.MAX_CHARACTERS


def test_a_name_already_a_character_in_another_case_is_not_added_again():
    """Names differ ignoring case: the API refuses "kenji" beside "Kenji"."""
    draft = RuleDrafter().draft(
        title="t", story="Kenji ran. Kenji fell.", characters=[{"name": "kenji"}]
    )
    assert [c["name"] for c in draft.characters] == ["kenji"]


def test_a_name_used_as_a_place_is_a_person_once_it_acts():
    draft = RuleDrafter().draft(
        title="t",
        story="Aiko waited for hours at Hikari. Then Hikari laughed and waved to her.",
        characters=[],
    )
    assert [c["name"] for c in draft.characters] == ["Hikari", "Aiko"]
    draft = RuleDrafter().draft(
        title="t", story="Aiko waited for hours at Hikari. The lights went out.", characters=[]
    )
    assert [c["name"] for c in draft.characters] == ["Aiko"]


def test_a_heading_draws_nothing_and_names_the_narrator_of_a_first_person_section():
    story = "Rooftops of Neo-Kyoto\n\nKenji ran. He jumped.\n\nAIKO\n\nI watched him fall."
    draft = RuleDrafter().draft(title="t", story=story, characters=[])
    assert [p["characters"] for p in draft.panels] == [["Kenji"], ["Aiko", "Kenji"]]
    assert {c["name"] for c in draft.characters} == {"Kenji", "Aiko"}


def test_a_tag_leaves_the_description_but_a_beat_stays():
    draft = RuleDrafter().draft(
        title="t",
        story='Rika laughed. "Late again," she told him. Kenji shrugged.',
        characters=[],
    )
    assert draft.panels[0]["description"] == "Rika laughed. Kenji shrugged."


GOOD_ANSWER = {
    "characters": [{"name": "Aiko", "description": "red scarf"}],
    "panels": [
        {
            "description": "Aiko on the roof.",
            "shot": "wide",
            "characters": ["Aiko"],
            "dialogue": [{"speaker": "Aiko", "text": "Now!"}],
            "caption": "",
        }
    ],
}


def chat(content: str) -> Canned:
    return Canned(body={"choices": [{"message": {"role": "assistant", "content": content}}]})


def drafter(standin) -> ChatDrafter:
    return ChatDrafter(base_url=standin.url, api_key="sk-test", model="m", timeout=2)


def test_chat_drafter_takes_characters_listed_by_name_only(standin):
    answer = GOOD_ANSWER | {"characters": ["Aiko"]}
    standin.reply(chat(json.dumps(answer)))
    draft = drafter(standin).draft(title="Roof", story="Aiko waits.", characters=[])
    assert draft.notice == "" and [c["name"] for c in draft.characters] == ["Aiko"]


def test_chat_drafter_asks_for_json_and_uses_a_valid_answer(standin):
    standin.reply(chat(json.dumps(GOOD_ANSWER)))
    draft = drafter(standin).draft(title="Roof", story="Aiko waits.", characters=[])
    assert draft.notice == ""
    assert draft.panels[0]["dialogue"] == [
        {"speaker": "Aiko", "text": "Now!", "style": "speech", "place": None}
    ]
    sent = standin.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == "Bearer sk-test"
    assert sent["json"]["response_format"] == {"type": "json_object"}
    assert "Aiko waits." in sent["json"]["messages"][-1]["content"]


UNUSABLE = "the model's answer was not what was asked for"


@pytest.mark.parametrize(
    "reply, reason, detail",
    [
        (chat("Sure! Here is your storyboard: panel 1…"), UNUSABLE, "Expecting value"),
        (chat(json.dumps({"panels": []})), UNUSABLE, "no panels"),
        (
            chat(json.dumps({"characters": [], "panels": [{"description": "x" * 5000}]})),
            UNUSABLE,
            "no more than 1000 characters",
        ),
        (
            chat(json.dumps({"panels": [{"description": "x", "characters": ["Ghost"]}]})),
            UNUSABLE,
            "Ghost",
        ),
        (  # a line with no text: refused whole, not stored half
            chat(json.dumps({"panels": [{"description": "x", "dialogue": [{"speaker": ""}]}]})),
            UNUSABLE,
            "'text'",
        ),
        (chat(json.dumps(GOOD_ANSWER | {"characters": {"Aiko": "x"}})), UNUSABLE, "not a list"),
        (chat(json.dumps(GOOD_ANSWER | {"characters": [7]})), UNUSABLE, "not names"),
        (
            Canned(status=500, body={"error": "overloaded"}),
            "the model answered with an error",
            "HTTP 500",
        ),
        (
            Canned(status=401, body={"error": "bad key"}),
            "the model refused the request",
            "HTTP 401",
        ),
        (Canned(body={"unexpected": True}), UNUSABLE, "choices"),
    ],
)
def test_chat_drafter_falls_back_to_rules_with_a_notice(standin, caplog, reply, reason, detail):
    """The notice names the kind of failure in fixed words; the model's own words (which
    may name its address) go to the log only."""
    standin.reply(reply)
    draft = drafter(standin).draft(title="t", story='Aiko ran. "Go!" Aiko said.', characters=[])
    assert "built-in rules" in draft.notice and f"({reason})" in draft.notice
    assert detail not in draft.notice and "127.0.0.1" not in draft.notice
    assert detail in caplog.text
    assert draft.panels and draft.panels[0]["dialogue"][0]["speaker"] == "Aiko"


def test_chat_drafter_falls_back_when_the_model_answers_too_late(standin, caplog):
    standin.reply(replace(chat(json.dumps(GOOD_ANSWER)), delay=1.5))
    late = ChatDrafter(base_url=standin.url, api_key="", model="m", timeout=0.3)
    draft = late.draft(title="t", story="Aiko ran.", characters=[])
    assert "(the model did not answer in time)" in draft.notice
    assert "127.0.0.1" not in draft.notice and "ReadTimeout" in caplog.text


def test_chat_drafter_falls_back_when_the_server_is_unreachable(caplog):
    gone = ChatDrafter(base_url="http://127.0.0.1:9/internal-x", api_key="", model="m", timeout=1)
    draft = gone.draft(title="t", story="Aiko ran.", characters=[])
    assert "built-in rules" in draft.notice
    assert "(the model could not be reached)" in draft.notice
    for secret in ("127.0.0.1", ":9", "internal-x", "chat/completions", "HTTPConnectionPool"):
        assert secret not in draft.notice
    assert "127.0.0.1" in caplog.text and "internal-x" in caplog.text  # for the operator


def test_drafter_is_chosen_by_settings(settings):
    settings.DRAFTER = "rules"
    assert get_drafter().name == "rules"
    settings.DRAFTER = "openai"
    assert get_drafter().name == "openai"
    settings.DRAFTER = "nope"
    with pytest.raises(ValueError):
        get_drafter()


@pytest.mark.django_db
def test_draft_endpoint_shows_the_fallback_notice(client, user, settings, standin):
    settings.DRAFTER = "openai"
    settings.CHAT_BASE_URL = standin.url
    standin.reply(chat("not json"))
    client.force_login(user)
    board = client.post(
        "/api/storyboards/", {"title": "t", "story": "Aiko ran."}, content_type="application/json"
    ).json()
    body = client.post(f"/api/storyboards/{board['id']}/draft/").json()
    assert "built-in rules" in body["notice"]
    assert len(body["panels"]) == 1


def test_the_rules_prefer_the_casts_names():
    """A chapter's cast is known: the story's "Kenji" (or "Sato") is the cast's "Kenji Sato",
    in the panels and as a speaker, never a new character."""
    story = 'Kenji ran up the stairs. "Wait!" Kenji shouted. Sato was always late. Mika smiled.'
    draft = RuleDrafter().draft(
        title="t", story=story, characters=[{"name": "Kenji Sato", "description": "tall"}]
    )
    assert [c["name"] for c in draft.characters] == ["Kenji Sato", "Mika"]
    assert draft.panels[0]["characters"] == ["Kenji Sato"]
    assert draft.panels[0]["dialogue"][0]["speaker"] == "Kenji Sato"


def test_the_chat_drafter_is_told_the_places_and_how_the_last_chapter_ended(standin):
    from mangagen.drafting import StoryContext

    panels = [
        {"description": "The roof.", "place": "Rooftop"},
        {"description": "Somewhere.", "place": "The Moon"},  # not a place of the comic
    ]
    standin.reply(chat(json.dumps({"characters": [], "panels": panels})))
    context = StoryContext(
        places=[{"name": "Rooftop", "description": "the school rooftop"}],
        last_beats=["Kenji runs up the stairs. Kenji: Sorry!"],
    )
    draft = drafter(standin).draft(
        title="Chapter 2", story="Aiko waits.", characters=[], context=context
    )
    assert draft.notice == ""
    assert [p["place"] for p in draft.panels] == ["Rooftop", ""]
    told = standin.requests[0]["json"]["messages"][-1]["content"]
    assert "Known places:\n- Rooftop: the school rooftop" in told
    assert "The previous chapter ended with:\n- Kenji runs up the stairs. Kenji: Sorry!" in told


def test_the_rules_never_take_one_of_the_comics_places_for_a_character(standin):
    """A place the comic has (a chapter's places come from the series) is not a person,
    even opening a sentence before a verb a person does; the chat drafter's fallback to
    the rules is told the places too."""
    from mangagen.drafting import StoryContext

    story = "Hakone waits for the spring. Aiko climbs the hill with Kenji."
    unknown = RuleDrafter().draft(title="t", story=story, characters=[])
    assert "Hakone" in [c["name"] for c in unknown.characters]  # read alone, a person

    context = StoryContext(places=[{"name": "Hakone", "description": "hot springs"}])
    known = RuleDrafter().draft(title="t", story=story, characters=[], context=context)
    assert [c["name"] for c in known.characters] == ["Aiko", "Kenji"]
    assert all("Hakone" not in p["characters"] for p in known.panels)

    standin.reply(Canned(status=500, body={"error": "overloaded"}))
    fallback = drafter(standin).draft(title="t", story=story, characters=[], context=context)
    assert "built-in rules" in fallback.notice
    assert [c["name"] for c in fallback.characters] == ["Aiko", "Kenji"]
