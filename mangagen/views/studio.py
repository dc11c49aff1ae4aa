"""The studio's pages: the dashboard and the four-step wizard.

The pages are thin shells; each step's small JS module reads and saves the
storyboard through the public API, so the browser and outside clients share
one contract.
"""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from ledger import selectors as ledger_selectors
from ledger import services as ledger
from mangagen.storyboards import limits
from mangagen.storyboards.models import Shot, Storyboard, Style

STEPS = [
    ("story", "Story"),
    ("characters", "Characters"),
    ("storyboard", "Storyboard"),
    ("review", "Review"),
]


@login_required
def dashboard(request):
    account = ledger.account_for(request.user)
    storyboards = Storyboard.objects.filter(owner=request.user).prefetch_related("panels")
    return render(
        request,
        "studio/dashboard.html",
        {
            "account": account,
            "holds": ledger_selectors.open_holds(account=account),
            "storyboards": storyboards,
        },
    )


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
    return render(
        request,
        f"studio/step_{step}.html",
        {
            "storyboard": storyboard,
            "step": step,
            "steps": [
                {"name": name, "label": label, "number": i + 1, "state": _state(i, position)}
                for i, (name, label) in enumerate(STEPS)
            ],
            "styles": Style.choices,
            "shots": Shot.choices,
            "limits": {k: v for k, v in vars(limits).items() if k.startswith("MAX_")},
        },
    )


def _state(i: int, position: int) -> str:
    return "done" if i < position else "current" if i == position else "todo"
