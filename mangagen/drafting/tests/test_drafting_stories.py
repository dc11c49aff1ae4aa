"""The offline drafter read against the stories its rules were developed on.

Each says what a person would draft (see drafts.py). The held-out stories,
written before the rules and never tuned on, are in test_drafting_heldout.py.
"""

from __future__ import annotations

import pytest

from tests.support.drafts import problems

NEO_KYOTO = {  # the five paragraphs of issue #25
    "story": """Rain hammered the neon streets of Neo-Kyoto. Aiko pulled her hood low and slipped into an alley.

Kenji was waiting behind the noodle stall, soaked to the bone. He grinned when he saw her.

Aiko pressed her back against the wall. "They will never find me here," she whispers.

"They found me," Kenji says. Aiko laughs and takes his hand.

Sirens wailed above Neo-Kyoto. Together they ran toward the harbor.""",  # noqa: E501
    "characters": {"Aiko", "Kenji"},
    "panels": [
        {"speakers": [], "must": {"Aiko"}, "never": {"Kenji"}},
        {"speakers": [], "must": {"Kenji", "Aiko"}},
        {"speakers": ["Aiko"], "must": {"Aiko"}, "never": {"Kenji"}},
        {"speakers": ["Kenji"], "must": {"Aiko", "Kenji"}},
        {"speakers": [], "must": set()},
    ],
}

TWO_NARRATORS = {  # sections named by a line of their own, told in the first person
    "story": """— Hana —

I was the first one at the Silver Lotus that night. The owner, a quiet man named Goro, slid a cup of tea across the counter to me.

"You look tired," he said. I told him I had not slept since Sapporo.

Part two: Goro

Hana left before midnight. I locked the door of the Silver Lotus and counted the money twice.

Someone knocked. It was her brother Taro, breathless from the hill above Otaru. "Where is she?" he asked me.

"She went to the harbor," I replied.""",  # noqa: E501
    "characters": {"Hana", "Goro", "Taro"},
    "panels": [
        {"speakers": [], "must": {"Hana", "Goro"}, "never": {"Taro"}},
        {"speakers": ["Goro"], "must": {"Goro", "Hana"}, "never": {"Taro"}},
        {"speakers": [], "must": {"Goro", "Hana"}, "never": {"Taro"}},
        {"speakers": ["Taro"], "must": {"Taro", "Goro"}, "never": {"Hana"}},
        {"speakers": ["Goro"], "must": {"Goro"}, "never": {"Hana"}},
    ],
}

MOUNTAIN_ROAD = {  # places by place words and by prepositions, people who act
    "story": """Dawn came slowly over Mount Hiei. Silence fell on the temple road.

Sora climbed the last steps to Enryaku Temple. She carried a letter from Kyoto for the abbot.

Brother Jiro met her at the gate. "The abbot is at Lake Biwa," he said. "He left for Otsu yesterday."

Sora frowned. "Then I will walk to Otsu tonight," she replied.

Jiro shook his head and handed her a lantern.""",  # noqa: E501
    "characters": {"Sora", "Jiro"},
    "panels": [
        {"speakers": [], "must": set(), "never": {"Sora", "Jiro"}},
        {"speakers": [], "must": {"Sora"}, "never": {"Jiro"}},
        {"speakers": ["Jiro", "Jiro"], "must": {"Jiro", "Sora"}},
        {"speakers": ["Sora"], "must": {"Sora"}},
        {"speakers": [], "must": {"Jiro", "Sora"}},
    ],
}

RIVALS = {  # two men and two women: each pronoun's line to the right one
    "story": """Mei and her sister Rika reached the dojo in Asakusa before the others. Rika bowed to the old master, Ishida.

Ishida studied them in silence. "Which of you fights first?" he asked.

"I do," Mei said. Rika stepped back, her arms folded.

A boy named Kaito burst through the door, late again. He dropped his bag by the wall.

"You're late," Ishida said. "Sorry, master," he replied, bowing low.

Rika laughed. She tossed him a wooden sword.""",  # noqa: E501
    "characters": {"Mei", "Rika", "Ishida", "Kaito"},
    "panels": [
        {"speakers": [], "must": {"Mei", "Rika", "Ishida"}, "never": {"Kaito"}},
        {"speakers": ["Ishida"], "must": {"Ishida"}, "never": {"Kaito"}},
        {"speakers": ["Mei"], "must": {"Mei", "Rika"}, "never": {"Kaito"}},
        {"speakers": [], "must": {"Kaito"}, "never": {"Ishida"}},
        {"speakers": ["Ishida", "Kaito"], "must": {"Ishida", "Kaito"}},
        {"speakers": [], "must": {"Rika", "Kaito"}},
    ],
}

STATION = {  # a narrator who introduces himself; "we" puts him in the panel
    "story": """I'm Yusuke, and I have one job tonight: get Nami out of Shinjuku.

We meet under the clock at Shinjuku Station. Nami wears a grey coat and carries nothing.

"Is it safe?" she asks. I say, "Nothing is safe. Walk."

Two men in black suits step off the train from Yokohama. One of them points at us.

Nami grabs my arm. "Run," I whisper.""",
    "characters": {"Yusuke", "Nami"},
    "panels": [
        {"speakers": [], "must": {"Yusuke", "Nami"}},
        {"speakers": [], "must": {"Yusuke", "Nami"}},
        {"speakers": ["Nami", "Yusuke"], "must": {"Nami", "Yusuke"}},
        {"speakers": [], "must": {"Yusuke", "Nami"}},
        {"speakers": ["Yusuke"], "must": {"Nami", "Yusuke"}},
    ],
}

STORIES = {
    "neo-kyoto": NEO_KYOTO,
    "two-narrators": TWO_NARRATORS,
    "mountain-road": MOUNTAIN_ROAD,
    "rivals": RIVALS,
    "station": STATION,
}


@pytest.mark.parametrize("name", STORIES)
def test_drafted_as_a_person_would(name):
    assert problems(STORIES[name]) == []
