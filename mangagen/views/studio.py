"""The studio's pages: the dashboard and the four-step wizard.

The pages are thin shells; each step's small JS module reads and saves the
storyboard through the public API, so the browser and outside clients share
one contract.
"""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext_lazy

from ledger import services as ledger
from mangagen.jobs import selectors as job_selectors
from mangagen.jobs.api import job_body, owned_job
from mangagen.jobs.models import LIVE_STATES, JobState
from mangagen.lettering import languages
from mangagen.orchestration import credit_rows
from mangagen.renderers import get_renderer
from mangagen.series.models import Series
from mangagen.storyboards import limits
from mangagen.storyboards.models import (
    ExportFormat,
    PageFormat,
    PageTemplate,
    ReadingDirection,
    Shot,
    Storyboard,
    Style,
)
from mangagen.views.credits import DEMO_GRANT, demo_credits_enabled

# The job states the pages' scripts treat as work under way, from the enum (json_script).
LIVE_JOB_STATES = [str(state) for state in LIVE_STATES]

STEPS = [
    ("story", gettext_lazy("Story")),
    ("characters", gettext_lazy("Characters")),
    ("storyboard", gettext_lazy("Storyboard")),
    ("review", gettext_lazy("Review")),
]


@login_required
def dashboard(request):
    account = ledger.account_for(request.user)
    storyboards = job_selectors.comics_of(owner=request.user)
    return render(
        request,
        "studio/dashboard.html",
        {
            "account": account,
            "holds": credit_rows.open_hold_rows(account=account),
            # Where a person with no credits gets some: the demo's, where on, else the packs.
            "demo_credits": DEMO_GRANT if demo_credits_enabled() else 0,
            "storyboards": storyboards,
            "series": Series.objects.filter(owner=request.user).annotate(
                chapter_count=Count("chapters")
            ),
        },
    )


def touchup_draws_shapes() -> bool:
    """Whether the configured renderer's touch-ups draw shapes of their own rather than the
    words typed (the offline renderer): the touch-up dialog then says so."""
    return not get_renderer().touch_up_follows_words


@login_required
def new_comic(request):
    return _step(request, None, "story")


@login_required
def wizard_step(request, pk: int, step: str):
    storyboard = get_object_or_404(Storyboard, pk=pk, owner=request.user)
    return _step(request, storyboard, step)


def _step(request, storyboard, step: str):
    names = [name for name, _ in STEPS]
    if step not in names:
        raise Http404("No such step.")
    position = names.index(step)
    live_job = None
    if storyboard is not None:
        live_job = storyboard.jobs.filter(state__in=LIVE_STATES, confirmed=True).first()
    return render(
        request,
        f"studio/step_{step}.html",
        {
            "storyboard": storyboard,
            "live_job": live_job,
            "speculation_debounce_ms": settings.SPECULATION_DEBOUNCE_MS,
            "step": step,
            "steps": [
                {"name": name, "label": label, "number": i + 1, "state": _state(i, position)}
                for i, (name, label) in enumerate(STEPS)
            ],
            "styles": Style.choices,
            "languages": languages.choices(),
            "shots": Shot.choices,
            "templates": PageTemplate.choices,
            "live_job_states": LIVE_JOB_STATES,
            "limits": {k: v for k, v in vars(limits).items() if k.startswith("MAX_")},
        },
    )


def _state(i: int, position: int) -> str:
    return "done" if i < position else "current" if i == position else "todo"


@login_required
def job_page(request, pk: int, job_pk: int):
    job = owned_job(request, job_pk, storyboard_pk=pk)
    # The job as the API gives it, in the HTML: a panel delivered before the click
    # (a speculation that finished while the person read Review) is on screen with
    # the first paint, not after a script, a request and a websocket round trip.
    return render(
        request,
        "studio/job.html",
        {
            "job": job,
            "storyboard": job.storyboard,
            "job_data": job_body(job),
            "live_job_states": LIVE_JOB_STATES,
            "touchup_draws_shapes": touchup_draws_shapes(),
            # window.mangagenJob, the browser tests' handle on the socket, ships only with DEBUG.
            "test_hook": settings.DEBUG,
        },
    )


@login_required
def reader(request, pk: int, job_pk: int):
    """A finished job's reader is the comic's: pages are the storyboard's, not one job's."""
    job = owned_job(request, job_pk, storyboard_pk=pk)
    if job.state != JobState.COMPLETED:
        return redirect("comic-job", pk=pk, job_pk=job_pk)
    return redirect("comic-read", pk=pk)


@login_required
def read_comic(request, pk: int):
    """The pages, read in the comic's direction; open once one panel is drawn."""
    storyboard = get_object_or_404(
        Storyboard.objects.select_related("series"), pk=pk, owner=request.user
    )
    return render(
        request,
        "studio/reader.html",
        {
            "storyboard": storyboard,
            "chapters": neighbours(storyboard),
            "touchup_draws_shapes": touchup_draws_shapes(),
            "original_name": languages.display_name(storyboard.language),
            "templates": PageTemplate.choices,
            "directions": ReadingDirection.choices,
            "formats": PageFormat.choices,
        },
    )


def neighbours(storyboard: Storyboard) -> dict | None:
    """A chapter's place in its series for the reader: the chapters before and after it
    and how many there are; None for a standalone comic."""
    if storyboard.series_id is None:
        return None
    chapters = list(storyboard.series.chapters.order_by("chapter"))
    at = next(i for i, c in enumerate(chapters) if c.pk == storyboard.pk)
    return {
        "series": storyboard.series,
        "number": storyboard.chapter,
        "count": len(chapters),
        "previous": chapters[at - 1] if at > 0 else None,
        "next": chapters[at + 1] if at + 1 < len(chapters) else None,
    }


@login_required
def download(request, pk: int, job_pk: int, fmt: str):
    """The old per-job download links lead to the comic's export."""
    owned_job(request, job_pk, storyboard_pk=pk)
    if fmt not in ExportFormat.values:
        raise Http404("No such download.")
    return redirect(f"{reverse('api-storyboard-export', args=[pk])}?format={fmt}")
