"""How big a storyboard may be. Bad input gets a clear 400 and changes nothing.

The one place for these numbers: the models' max_length (storyboards, characters)
are these constants, so the API's checks and the columns cannot drift apart.
"""

MAX_TITLE = 200
MAX_STORY = 20_000
MAX_CHARACTERS = 12
MAX_NAME = 60
MAX_CHARACTER_DESCRIPTION = 500
MAX_PANELS = 24
MAX_PANEL_DESCRIPTION = 1_000
MAX_CAPTION = 300
MAX_DIALOGUE_LINES = 6
MAX_DIALOGUE_TEXT = 300
MAX_PLACES = 12
MAX_PLACE_DESCRIPTION = 500
MAX_OUTFITS = 3  # named outfits per character
MAX_SERIES = 100  # series per person
MAX_LIBRARY = 200  # cast members, and places, one person keeps in the library
MAX_TRANSLATIONS = 30  # languages a comic may be translated into
MAX_SFX_PER_PANEL = 8  # sound effects lettered into one panel
MAX_SFX_TEXT = 40  # characters of one sound effect
MIN_SFX_SIZE = 0.04  # a sound effect's letters: fractions of the panel's shorter side
MAX_SFX_SIZE = 0.5
DEFAULT_SFX_SIZE = 0.14
