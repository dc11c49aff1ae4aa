"""The studio's models, defined in their own modules and gathered here for Django."""

from mangagen.characters.models import CharacterSheet
from mangagen.jobs.models import Job, JobEvent, JobPanel, RenderAttempt, TouchUp
from mangagen.library.models import CastMember, CastSheet, SavedPlace
from mangagen.pages.models import PageBuild
from mangagen.payments.models import Purchase, StripeEvent
from mangagen.places.models import Place
from mangagen.publishing.models import ReadingLink
from mangagen.renderers.models import RenderSample
from mangagen.roughs.models import Rough
from mangagen.series.models import Series
from mangagen.storyboards.models import Character, KeptArt, Panel, Storyboard
from mangagen.translations.models import Translation

__all__ = [
    "CastMember",
    "CastSheet",
    "Character",
    "CharacterSheet",
    "Job",
    "JobEvent",
    "JobPanel",
    "KeptArt",
    "PageBuild",
    "Panel",
    "Place",
    "Purchase",
    "ReadingLink",
    "RenderAttempt",
    "RenderSample",
    "Rough",
    "SavedPlace",
    "Series",
    "Storyboard",
    "StripeEvent",
    "TouchUp",
    "Translation",
]
