"""The drafter reads each line's balloon from the story: shouted, whispered, thought.

The story below was written for this test and is in no other one (the drafter
was not tuned on it): a thought in parentheses with "he thinks" after it (the
line the drafter used to drop), one in italics markers, one a tag before
("He wonders, (…)"), a shout by its verb and one by its "!", whispers by
"whispers" and "murmurs", and narration in parentheses that must stay narration.
"""

import json

from mangagen.drafting.openai_chat import ChatDrafter
from mangagen.drafting.rules import RuleDrafter
from tests.support.standin import Canned

STORY = """Rain drums on the station roof. Hana checks the clock for the third time.

"The last train is leaving," she shouts across the platform.

Daichi runs down the stairs, soaked. (She never waits for anyone,) he thinks.

"Don't tell the others," Hana whispers, pulling him aboard.

The doors close behind them. (It was the last train of the year.)

*I should have stayed home,* Daichi thinks. He wonders, (Does she even remember my name?)

"Tickets, please," says the conductor. Hana murmurs, "We have them."

The train screams into the tunnel. "Hold on!" Daichi cries."""


def lines(story: str) -> list[dict]:
    draft = RuleDrafter().draft(title="Last train", story=story, characters=[])
    return [line for panel in draft.panels for line in panel["dialogue"]]


def styled(story: str) -> dict[str, str]:
    return {line["text"]: line.get("style", "speech") for line in lines(story)}


def test_shouted_whispered_and_thought_lines_get_their_balloons():
    found = styled(STORY)
    assert found == {
        "The last train is leaving.": "shout",  # "shouts", though no "!"
        "She never waits for anyone.": "thought",  # (…,) he thinks
        "Don't tell the others.": "whisper",
        "I should have stayed home.": "thought",  # *…* Daichi thinks
        "Does she even remember my name?": "thought",  # He wonders, (…)
        "Tickets, please.": "speech",
        "We have them.": "whisper",  # Hana murmurs, "…"
        "Hold on!": "shout",
    }


def test_a_thought_is_the_thinkers_and_its_tag_leaves_the_description():
    draft = RuleDrafter().draft(title="t", story=STORY, characters=[])
    (panel,) = [p for p in draft.panels if "soaked" in p["description"]]
    assert panel["dialogue"] == [
        {"speaker": "Daichi", "text": "She never waits for anyone.", "style": "thought"}
    ]
    assert "thinks" not in panel["description"] and "never waits" not in panel["description"]


def test_narration_in_parentheses_stays_narration():
    draft = RuleDrafter().draft(title="t", story=STORY, characters=[])
    aside = [p for p in draft.panels if "last train of the year" in p["description"]]
    assert aside and aside[0]["dialogue"] == []
    assert "last train of the year" not in " ".join(line["text"] for line in lines(STORY))


def test_a_plain_exclamation_is_shouted_unless_its_tag_says_otherwise():
    assert styled('"Run!" Aiko says.') == {"Run!": "shout"}
    assert styled('"Run!" Aiko whispers.') == {"Run!": "whisper"}
    assert styled('"Run," Aiko says.') == {"Run.": "speech"}
    assert styled("Aiko sighed. _Why me?_ she wondered.") == {"Why me?": "thought"}


def chat(content: str) -> Canned:
    return Canned(body={"choices": [{"message": {"role": "assistant", "content": content}}]})


def test_the_chat_drafter_returns_styles_and_drops_one_the_lettering_lacks(standin):
    answer = {
        "characters": [{"name": "Hana", "description": "yellow raincoat"}],
        "panels": [
            {
                "description": "Hana on the platform.",
                "shot": "medium",
                "characters": ["Hana"],
                "dialogue": [
                    {"speaker": "Hana", "text": "Wait!", "style": "shout"},
                    {"speaker": "Hana", "text": "He never waits.", "style": "thought"},
                    {"speaker": "Hana", "text": "Hm.", "style": "sing"},
                ],
            }
        ],
    }
    standin.reply(chat(json.dumps(answer)))
    drafter = ChatDrafter(base_url=standin.url, api_key="k", model="m", timeout=2)
    draft = drafter.draft(title="t", story="Hana waits.", characters=[])
    assert draft.notice == ""
    assert [line["style"] for line in draft.panels[0]["dialogue"]] == [
        "shout",
        "thought",
        "speech",
    ]
    system = standin.requests[0]["json"]["messages"][0]["content"]
    assert '"style": "speech|thought|shout|whisper"' in system
