"""A series and its chapters through the API, as the series tests make them."""

CAST = [
    {
        "name": "Aiko",
        "description": "long black hair",
        "outfits": [{"name": "winter coat", "description": "a long navy duffle coat"}],
    },
    {"name": "Kenji", "description": "spiky hair"},
]

PANELS = [
    {"description": "The roof at dusk.", "shot": "establishing", "place": "Rooftop"},
    {
        "description": "Aiko waits.",
        "characters": ["Aiko"],
        "outfits": {"Aiko": "winter coat"},
        "dialogue": [{"speaker": "Aiko", "text": "He is late."}],
    },
    {"description": "Kenji runs up the stairs.", "shot": "action", "characters": ["Kenji"]},
]


def post(person, url, body=None):
    return person.post(url, body or {}, content_type="application/json")


def new_series(person, title="Rooftops", style="shoujo"):
    response = post(person, "/api/series/", {"title": title, "style": style})
    assert response.status_code == 201
    return response.json()


def chapter(person, series_id, story="Aiko waits on the roof.", title=""):
    response = post(person, f"/api/series/{series_id}/chapters/", {"story": story, "title": title})
    assert response.status_code == 201, response.content
    return response.json()
