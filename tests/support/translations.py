"""A comic of three panels with its lines in Japanese, and the translations API's
addresses, as the translation tests use them."""

from mangagen.storyboards import services as storyboards

PANELS = [
    {"description": "A rooftop at night.", "shot": "establishing", "caption": "Neo-Kyoto, 2 a.m."},
    {
        "description": "Aiko turns.",
        "shot": "medium",
        "characters": ["Aiko"],
        "dialogue": [
            {"speaker": "Aiko", "text": "Who's there?"},
            {"speaker": "Aiko", "text": "Show yourself."},
        ],
    },
    {
        "description": "Kenji grins.",
        "shot": "close-up",
        "characters": ["Kenji"],
        "dialogue": [{"speaker": "Kenji", "text": "Only me."}],
    },
]
JAPANESE = {
    "title": "屋上",
    "panels": [
        {"index": 1, "caption": "ネオ京都、午前二時。"},
        {"index": 2, "dialogue": ["誰？", "出てきなさい。"]},
        {"index": 3, "dialogue": ["俺だよ。"]},
    ],
}


CAST = [{"name": "Aiko", "description": "red scarf"}, {"name": "Kenji"}]


def url(board, lang: str = "", tail: str = "") -> str:
    base = f"/api/storyboards/{board.pk}/translations/"
    return f"{base}{lang}/{tail}" if lang else base


def put(client, board, lang: str, body: dict):
    return client.put(url(board, lang), body, content_type="application/json")


def texts(body: dict) -> list:
    """A translation's answer as [title, [panel lines…, caption]…] of texts."""
    return [body["title"]] + [
        [line["text"] for line in p["dialogue"]] + [p["caption"]["text"]] for p in body["panels"]
    ]


def edit_original(board, changes: dict):
    panels = [dict(p) for p in PANELS]
    for index, fields in changes.items():
        panels[index - 1].update(fields)
    return storyboards.update_storyboard(storyboard=board, panels=panels)
