"""Server-rendered pages of the studio."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from ledger import selectors as ledger_selectors
from ledger import services as ledger


@login_required
def home(request):
    account = ledger.account_for(request.user)
    return render(
        request,
        "home.html",
        {"account": account, "holds": ledger_selectors.open_holds(account=account)},
    )
