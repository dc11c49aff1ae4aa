"""Reads of jobs for the services, the API and the pages: no writes here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.urls import reverse

from ledger import services as ledger

from .models import Job, JobPanel

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def image_url(panel: JobPanel, job: Job) -> str | None:
    """Only a confirmed job's delivered panels have an image URL: no free images."""
    if not (job.confirmed and panel.shown and panel.image):
        return None
    name = panel.image.name or ""  # a set image always has a name
    return reverse("render-image", args=[name.removeprefix("renders/")])


def delivered_panels(job: Job) -> list[dict]:
    """The panels the person can already see (`index`, `image_url`), for Generate's
    answer: when it attached to a finished speculation, panel one, which Review shows
    at once."""
    return [
        {"index": panel.index, "image_url": url}
        for panel in job.panels.order_by("index")
        if (url := image_url(panel, job)) is not None
    ]


def credits_of(user: User) -> dict:
    """The person's balance as the `credits` event and the header show it."""
    account = ledger.account_for(user)
    account.refresh_from_db()
    return {"available": account.available, "held": account.held}


def reader_url(job: Job) -> str:
    return reverse("comic-reader", args=[job.storyboard_id, job.pk])


def state_data(job: Job) -> dict:
    """The `job.state` event's payload (docs/api.md)."""
    return {
        "state": job.state,
        "confirmed": job.confirmed,
        "current_index": job.current_index,
        "total": job.panels.count(),
    }
