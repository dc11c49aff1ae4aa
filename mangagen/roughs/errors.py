"""Why a rough is refused: the codes in one enum, and the errors that carry them."""

from __future__ import annotations

from enum import StrEnum

from mangagen.kernel.errors import ApplicationError


class RoughRefusal(StrEnum):
    NO_CREDITS = "no_credits"
    ROUGH_BUDGET = "rough_budget"


class NoCredits(ApplicationError, code=RoughRefusal.NO_CREDITS, status=402):
    """Roughs are offered to people with a credit (available or held) only: nothing is
    drawn for anyone else (docs/api.md, "Rough pages")."""

    def extra(self) -> dict:
        from django.urls import reverse

        return {"purchase_url": reverse("credits")}


class RoughBudget(ApplicationError, code=RoughRefusal.ROUGH_BUDGET, status=429):
    """Past ROUGHS_PER_PERSON_PER_DAY: nothing more is drawn until tomorrow (UTC)."""

    def __init__(self, detail: str, *, retry_after: int):
        super().__init__(detail)
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}
