"""The Credits page: balance, what is held and why, and the full history."""

import uuid

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from ledger import selectors as ledger_selectors
from ledger import services as ledger
from mangagen.orchestration import credit_rows
from mangagen.payments.packs import packs


@login_required
def credits_page(request):
    account = ledger.account_for(request.user)
    history = Paginator(ledger_selectors.history_for(account=account), 25)
    page = history.get_page(request.GET.get("page"))
    return render(
        request,
        "credits.html",
        {
            "account": account,
            "holds": credit_rows.open_hold_rows(account=account),
            "page": page,
            "rows": credit_rows.rows(account=account, transfers=page),
            "demo_credits": DEMO_GRANT if demo_credits_enabled() else 0,
            "packs": packs(),
            "payments_enabled": bool(settings.STRIPE_SECRET_KEY),
            "checkout": request.GET.get("checkout", ""),
        },
    )


DEMO_GRANT = 10


def demo_credits_enabled() -> bool:
    """Only a local demo (DEMO_MODE: DEBUG on, loopback only) with no Stripe configured."""
    return settings.DEMO_MODE and not settings.STRIPE_SECRET_KEY


@login_required
@require_POST
def demo_credits(request):
    if not demo_credits_enabled():
        raise Http404("Demo credits are off.")
    ledger.grant(
        account=ledger.account_for(request.user),
        amount=DEMO_GRANT,
        key=f"demo:{request.user.pk}:{uuid.uuid4()}",
        reason="Demo credits (DEBUG, no Stripe)",
    )
    messages.success(
        request,
        ngettext("%(count)s demo credit added.", "%(count)s demo credits added.", DEMO_GRANT)
        % {"count": DEMO_GRANT},
    )
    return redirect("credits")
