"""A comic of three panels and credits to speculate with, as the speculation tests make them."""

from ledger import services as ledger
from tests.support import factories

THREE_PANELS = [{"description": "One."}, {"description": "Two."}, {"description": "3"}]


def make_board(user, title="Rooftops", panels=None):
    return factories.storyboard(user, title=title, panels=panels or THREE_PANELS)


def fund(user, amount):
    ledger.grant(account=ledger.account_for(user), amount=amount, key=f"seed-{user.pk}", reason="x")
