"""The studio's models, defined in their own modules and gathered here for Django."""

from mangagen.characters.models import CharacterSheet
from mangagen.jobs.models import Job, JobEvent, JobPanel
from mangagen.pages.models import PageBuild
from mangagen.payments.models import Purchase, StripeEvent
from mangagen.storyboards.models import Character, KeptArt, Panel, Storyboard
from mangagen.translations.models import Translation

__all__ = [
    "Character",
    "CharacterSheet",
    "Job",
    "JobEvent",
    "JobPanel",
    "KeptArt",
    "PageBuild",
    "Panel",
    "Purchase",
    "Storyboard",
    "StripeEvent",
    "Translation",
]
