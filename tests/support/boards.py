"""A comic's cast and panels that more than one area's tests draw: two characters, four
panels, each character alone once and together once (for `pytest.mark.board`)."""

TWO_OF_THEM_CAST = [
    {"name": "Aiko", "description": "long black hair, red scarf"},
    {"name": "Kenji", "description": "spiky hair, glasses"},
]

TWO_OF_THEM_PANELS = [
    {"description": "A rooftop at night.", "shot": "establishing"},
    {"description": "Aiko runs.", "shot": "medium", "characters": ["Aiko"]},
    {"description": "Kenji waits.", "shot": "medium", "characters": ["Kenji"]},
    {"description": "Both of them.", "shot": "wide", "characters": ["Aiko", "Kenji"]},
]
