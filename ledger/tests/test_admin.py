"""Operators reconcile in admin: balances beside the journal, stale holds, audit."""

from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone

from ledger import services
from ledger.models import Account, Hold, Transfer
from tests.support.ledger_invariants import assert_ledger_invariants

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(make_user, client):
    admin_user = make_user("operator", is_staff=True, is_superuser=True)
    client.force_login(admin_user)
    return admin_user


@pytest.fixture
def stale_hold(make_user):
    account = services.account_for(make_user("reader"))
    services.grant(account=account, amount=5, key="seed", reason="seed")
    hold = services.authorize(account=account, amount=2, key="h", reference="job 1 panel 1")
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    return hold


def action(client, name, holds, **extra):
    data = {"action": name, "_selected_action": [h.pk for h in holds], **extra}
    return client.post(reverse("admin:ledger_hold_changelist"), data)


def test_reconciliation_reads_all_reconciled(operator, client, make_user):
    services.grant(account=services.account_for(make_user()), amount=3, key="g", reason="x")
    page = client.get(reverse("admin:ledger_reconciliation"))
    assert page.status_code == 200
    assert "All reconciled." in page.content.decode()


def test_reconciliation_lists_a_stale_hold_until_released(operator, client, stale_hold):
    page = client.get(reverse("admin:ledger_reconciliation")).content.decode()
    assert "All reconciled" not in page
    assert "stale_hold" in page and "job 1 panel 1" in page

    confirm = action(client, "release_holds", [stale_hold])
    assert confirm.status_code == 200
    assert "Release holds" in confirm.content.decode()
    stale_hold.refresh_from_db()
    assert stale_hold.state == Hold.State.PENDING  # nothing happens before confirming

    done = action(client, "release_holds", [stale_hold], apply="1", reason="customer called")
    assert done.status_code == 302
    stale_hold.refresh_from_db()
    assert stale_hold.state == Hold.State.RELEASED
    assert stale_hold.resolved_by == operator
    assert "customer called" in stale_hold.resolution_reason
    assert stale_hold.resolution_transfer.actor == operator
    assert LogEntry.objects.filter(object_id=str(stale_hold.pk), user=operator).exists()
    page = client.get(reverse("admin:ledger_reconciliation")).content.decode()
    assert "All reconciled." in page
    assert_ledger_invariants()


def test_a_long_reason_from_an_operator_with_a_long_name_fits_the_journal(
    make_user, client, stale_hold
):
    """The form takes 200 characters and a username may have 150; the journal
    keeps 255 (PostgreSQL refused the write: a 500)."""
    client.force_login(make_user("o" * 60, is_staff=True, is_superuser=True))
    done = action(client, "release_holds", [stale_hold], apply="1", reason="r" * 200)
    assert done.status_code == 302
    stale_hold.refresh_from_db()
    assert stale_hold.state == Hold.State.RELEASED
    reason = stale_hold.resolution_transfer.reason
    assert len(reason) == 255 and reason.startswith("admin " + "o" * 60 + ": rrr")
    assert_ledger_invariants()


def test_release_by_hand_needs_a_reason(operator, client, stale_hold):
    response = action(client, "release_holds", [stale_hold], apply="1", reason="")
    assert response.status_code == 200
    assert "This field is required" in response.content.decode()
    stale_hold.refresh_from_db()
    assert stale_hold.state == Hold.State.PENDING


def test_capture_by_hand_goes_through_the_services(operator, client, make_user):
    account = services.account_for(make_user())
    services.grant(account=account, amount=5, key="seed2", reason="seed")
    hold = services.authorize(account=account, amount=3, key="h2", reference="render")
    action(client, "capture_holds", [hold], apply="1", reason="delivered by hand", amount="2")
    hold.refresh_from_db()
    assert (hold.state, hold.captured_amount) == (Hold.State.CAPTURED, 2)
    account.refresh_from_db()
    assert (account.available, account.held) == (3, 0)


def test_capture_of_an_expired_hold_by_hand_is_refused_with_a_message(operator, client, stale_hold):
    response = action(client, "capture_holds", [stale_hold], apply="1", reason="x")
    assert response.status_code == 302
    messages = [m.message for m in response.wsgi_request._messages]
    assert any("expired" in m for m in messages)
    stale_hold.refresh_from_db()
    assert stale_hold.state == Hold.State.PENDING


def test_stale_filter(operator, client, stale_hold, make_user):
    account = services.account_for(make_user())
    services.grant(account=account, amount=1, key="g3", reason="x")
    fresh = services.authorize(account=account, amount=1, key="fresh", reference="fresh one")
    page = client.get(reverse("admin:ledger_hold_changelist") + "?stale=yes").content.decode()
    assert "job 1 panel 1" in page and "fresh one" not in page
    page = client.get(reverse("admin:ledger_hold_changelist") + "?stale=no").content.decode()
    assert "fresh one" in page and "job 1 panel 1" not in page
    assert fresh.state == Hold.State.PENDING


def test_accounts_show_journal_balances_beside_cached_ones(operator, client, stale_hold):
    Account.objects.filter(pk=stale_hold.account_id).update(available=99)  # a corrupted cache
    page = client.get(reverse("admin:ledger_account_changelist")).content.decode()
    assert "99" in page
    recon = client.get(reverse("admin:ledger_reconciliation")).content.decode()
    assert "cached available/held 99/2, journal says 3/2" in recon


def test_journal_is_read_only_in_admin(operator, client, stale_hold):
    transfer = Transfer.objects.first()
    assert client.get(reverse("admin:ledger_transfer_changelist")).status_code == 200
    delete = client.post(
        reverse("admin:ledger_transfer_delete", args=[transfer.pk]), {"post": "yes"}
    )
    assert delete.status_code == 403
    assert client.get(reverse("admin:ledger_transfer_add")).status_code == 403
    change = client.post(
        reverse("admin:ledger_transfer_change", args=[transfer.pk]), {"amount": 1000}
    )
    assert change.status_code == 403
    transfer.refresh_from_db()
    assert transfer.amount == 5


def test_staff_without_the_permission_cannot_resolve_holds(client, make_user, stale_hold):
    clerk = make_user("clerk", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_hold"))
    client.force_login(clerk)
    page = client.get(reverse("admin:ledger_hold_changelist")).content.decode()
    assert "release_holds" not in page
    action(client, "release_holds", [stale_hold], apply="1", reason="try")
    stale_hold.refresh_from_db()
    assert stale_hold.state == Hold.State.PENDING


def test_non_staff_cannot_see_reconciliation(client, make_user):
    client.force_login(make_user())
    response = client.get(reverse("admin:ledger_reconciliation"))
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


# --- granting credits from admin (credits without Stripe) -----------------------------------


def grant(client, accounts, **extra):
    data = {"action": "grant_credits", "_selected_action": [a.pk for a in accounts], **extra}
    return client.post(reverse("admin:ledger_account_changelist"), data)


def test_an_operator_grants_credits_as_the_command_does(operator, client, make_user):
    from django.core.management import call_command

    reader = make_user("reader")
    account = services.account_for(reader)
    confirm = grant(client, [account])
    assert confirm.status_code == 200 and "reader" in confirm.content.decode()
    assert not Transfer.objects.filter(credit_account=account).exists()

    done = grant(client, [account], apply="1", amount="7", reason="ticket 812")
    assert done.status_code == 302
    call_command("grant_credits", "reader", "3", reason="ticket 813")
    by_admin, by_command = Transfer.objects.filter(credit_account=account).order_by("pk")
    account.refresh_from_db()
    assert account.available == 10
    # Written alike: a grant, from the same grants account, the operator's words kept.
    assert by_admin.kind == by_command.kind == Transfer.Kind.GRANT
    assert by_admin.debit_account_id == by_command.debit_account_id
    assert by_admin.reason == "admin operator: ticket 812"
    assert by_admin.actor == operator
    assert LogEntry.objects.filter(object_id=str(account.pk), change_message__contains="812")
    assert_ledger_invariants()


def test_a_grant_needs_an_amount_and_a_reason(operator, client, make_user):
    account = services.account_for(make_user("reader"))
    for bad in ({"amount": "0", "reason": "x"}, {"amount": "5", "reason": ""}):
        page = grant(client, [account], apply="1", **bad)
        assert page.status_code == 200  # the form again, with its error
    assert not Transfer.objects.filter(credit_account=account).exists()


def test_staff_who_may_not_add_transfers_cannot_grant(client, make_user):
    clerk = make_user("clerk", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_account"))
    client.force_login(clerk)
    account = services.account_for(make_user("reader"))
    page = client.get(reverse("admin:ledger_account_changelist")).content.decode()
    assert "grant_credits" not in page
    grant(client, [account], apply="1", amount="5", reason="try")
    account.refresh_from_db()
    assert account.available == 0
