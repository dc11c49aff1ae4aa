"""The balloon styles a dialogue line may have, defined once: the API validates with
them (mangagen/storyboards/models.py re-exports `BalloonStyle`), the lettering draws
each (`shapes.py`), and every screen that lists them (the Storyboard screen, Review, the
lettering editor) reads the list and its labels from the page (`{% balloon_styles %}`)."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class BalloonStyle(models.TextChoices):
    """How a dialogue line's balloon is drawn (docs/api.md, "Lettering you direct")."""

    SPEECH = "speech", _("Speech")
    THOUGHT = "thought", _("Thought")
    SHOUT = "shout", _("Shout")
    WHISPER = "whisper", _("Whisper")


def style_choices() -> list[list[str]]:
    """[value, label] of each style, in the interface's language, in the menus' order."""
    return [[value, str(label)] for value, label in BalloonStyle.choices]
