import pytest
from django.core.management import CommandError, call_command

from ledger import services
from ledger.models import Transfer

pytestmark = pytest.mark.django_db


def test_grant_credits_grants_through_the_ledger(user, capsys):
    call_command("grant_credits", "aiko", "7", reason="support ticket 12")
    account = services.account_for(user)
    account.refresh_from_db()
    assert account.available == 7
    transfer = Transfer.objects.get(credit_account=account)
    assert transfer.kind == "grant" and "support ticket 12" in transfer.reason
    assert "available now 7" in capsys.readouterr().out


def test_grant_credits_with_a_key_grants_once(user):
    for _ in range(2):
        call_command("grant_credits", "aiko", "7", reason="promo", key="promo-1")
    assert services.account_for(user).available == 7


@pytest.mark.parametrize(
    "args, message",
    [
        (["nobody", "5"], "No user named"),
        (["aiko", "0"], "positive whole number"),
        (["aiko", "-3"], "positive whole number"),
        (["aiko", "5", "--reason", "r" * 240], "too long"),
    ],
)
def test_grant_credits_refuses_bad_input(user, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("grant_credits", *args, **({} if "--reason" in args else {"reason": "x"}))
    assert services.account_for(user).available == 0
