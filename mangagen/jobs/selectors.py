"""Reads of jobs for the services, the API and the pages: no writes here."""

from __future__ import annotations

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.urls import reverse

from ledger import selectors as ledger_selectors
from mangagen.storyboards.models import KeptArt, Panel, Storyboard

from .models import LIVE_STATES, Job, JobPanel


def comics_of(*, owner) -> QuerySet[Storyboard]:
    """A person's comics as the dashboard lists them, in a constant number of queries
    however many jobs each has had: `panel_count`, `kept` (kept renders),
    `live_job` (the pk of its confirmed job still under way, or None) and, for a
    chapter, its `series` (joined, not queried per comic)."""

    def count(model):
        rows = model.objects.filter(storyboard=OuterRef("pk")).order_by()
        return Subquery(rows.values("storyboard").annotate(n=Count("pk")).values("n")[:1])

    live = Job.objects.filter(storyboard=OuterRef("pk"), confirmed=True, state__in=LIVE_STATES)
    return (
        Storyboard.objects.filter(owner=owner)
        .select_related("series")
        .annotate(
            panel_count=count(Panel),
            kept=count(KeptArt),
            live_job=Subquery(live.order_by("-pk").values("pk")[:1]),
        )
    )


def image_url(panel: JobPanel, job: Job) -> str | None:
    """Only a confirmed job's delivered panels have an image URL: no free images."""
    if not (job.confirmed and panel.shown and panel.image):
        return None
    name = panel.image.name or ""  # a set image always has a name
    return reverse("render-image", args=[name.removeprefix("renders/")])


def delivered_panels(job: Job) -> list[dict]:
    """The panels the person can already see (`index`, `image_url`, the judge's
    `check`), for Generate's answer: when it attached to a finished speculation, panel
    one, which Review shows at once (already checked)."""
    return [
        {"index": panel.index, "image_url": url, "check": panel.judge_check}
        for panel in job.panels.order_by("index")
        if (url := image_url(panel, job)) is not None
    ]


def credits_of(*, user_id: int) -> dict:
    """The person's balance as the `credits` event carries it: the account's figures as of
    the event, and `as_of` (the length of their journal then: a page shows the figures
    with the greatest, so a replayed event never puts back an older balance)."""
    figures = ledger_selectors.figures_of(user_id=user_id)
    return {"available": figures.available, "held": figures.held, "as_of": figures.as_of}


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


def sheets_in_live_jobs(*, storyboard, name: str) -> frozenset[str]:
    """The hashes of the character's sheets, of their usual look and of any outfit, that
    the storyboard's live jobs draw from (each job keeps the sheets its panels were
    started with)."""
    specs = JobPanel.objects.filter(job__storyboard=storyboard, job__state__in=LIVE_STATES)
    used = set()
    for spec in specs.values_list("spec", flat=True):
        used.add((spec.get("sheets") or {}).get(name))
        used.add(((spec.get("outfits") or {}).get(name) or {}).get("sheet"))
    return frozenset(filter(None, used))
