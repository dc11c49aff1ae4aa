"""A comic of three panels and its pages, as the page and export tests read them."""

from mangagen.storyboards import services as storyboards

PANELS = [
    {"description": "A rooftop at night.", "shot": "establishing", "caption": "Neo-Kyoto."},
    {
        "description": "Aiko turns.",
        "shot": "medium",
        "characters": ["Aiko"],
        "dialogue": [{"speaker": "Aiko", "text": "Who's there?"}],
    },
    {
        "description": "Kenji grins.",
        "shot": "close-up",
        "characters": ["Kenji"],
        "dialogue": [{"speaker": "Kenji", "text": "Only me."}],
    },
]


def edit(board, changes: dict):
    """Replaces fields of panels: {index: {field: value}}."""
    panels = [dict(p) for p in PANELS]
    for index, fields in changes.items():
        panels[index - 1].update(fields)
    return storyboards.update_storyboard(storyboard=board, panels=panels)


def page_png(client, board_id, number=1) -> bytes:
    pages = client.get(f"/api/storyboards/{board_id}/pages/").json()
    response = client.get(pages["pages"][number - 1]["image_url"])
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    return b"".join(response.streaming_content)


def download(client, board_id, fmt):
    response = client.get(f"/api/storyboards/{board_id}/export/?format={fmt}")
    return response, b"".join(response.streaming_content) if response.status_code == 200 else b""
