"""The studio's models, defined in their own modules and gathered here for Django."""

from mangagen.characters.models import CharacterSheet
from mangagen.jobs.models import Job, JobEvent, JobPanel, RenderAttempt
from mangagen.payments.models import Purchase, StripeEvent
from mangagen.renderers.models import RenderSample
from mangagen.storyboards.models import Character, KeptArt, Panel, Storyboard

__all__ = [
    "Character",
    "CharacterSheet",
    "Job",
    "JobEvent",
    "JobPanel",
    "KeptArt",
    "Panel",
    "Purchase",
    "RenderAttempt",
    "RenderSample",
    "Storyboard",
    "StripeEvent",
]
