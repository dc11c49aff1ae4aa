"""The studio's models, defined in their own modules and gathered here for Django."""

from mangagen.storyboards.models import Character, Panel, Storyboard

__all__ = ["Character", "Panel", "Storyboard"]
