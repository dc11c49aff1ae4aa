"""A person signs up and sees their balance; an operator reconciles a stale hold."""

import re

from playwright.sync_api import expect

from .conftest import wait_until


def test_sign_up_log_in_and_see_the_balance(page, stack, shoot):
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.get_by_role("link", name="Create an account").click()

    page.get_by_label("Username").fill("yuki")
    page.get_by_label("Password", exact=True).fill("short")
    page.get_by_label("Password confirmation").fill("short")
    page.get_by_role("button", name="Sign up").click()
    expect(page.locator(".error").first).to_be_visible()  # too short, shown by the field
    shoot("signup-error")

    page.get_by_label("Password", exact=True).fill("paper-lantern-42")
    page.get_by_label("Password confirmation").fill("paper-lantern-42")
    page.get_by_role("button", name="Sign up").click()
    expect(page.locator("#credits-available")).to_have_text("0")

    stack.manage("grant_credits", "yuki", "5", "--reason", "e2e welcome")
    page.reload()
    expect(page.locator("#credits-available")).to_have_text("5")
    expect(page.locator("#nav-balance")).to_contain_text("5 credits")
    shoot("home-with-credits")
    me = page.request.get("/api/me/").json()
    assert me == {"username": "yuki", "credits": {"available": 5, "held": 0}, "credits_as_of": 1}

    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    assert page.request.get("/api/me/").status == 403
    page.get_by_label("Username").fill("yuki")
    page.get_by_label("Password").fill("paper-lantern-42")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#credits-available")).to_have_text("5")


def test_operator_releases_a_stale_hold_and_all_is_reconciled(page, stack, shoot):
    stack.shell(_STALE_HOLD)
    stack.shell(_SUPERUSER)

    page.goto("/admin/")
    page.get_by_label("Username").fill("operator")
    page.get_by_label("Password").fill("operator-pass-1234")
    page.get_by_role("button", name="Log in").click()

    page.goto("/admin/ledger/account/reconciliation/")
    expect(page.locator("#mismatches")).to_contain_text("stale_hold")
    expect(page.locator("#mismatches")).to_contain_text("job 7 panel 1")
    shoot("admin-reconciliation-stale")

    page.get_by_role("link", name="the stale holds list").click()
    expect(page.locator("#result_list")).to_contain_text("job 7 panel 1")
    page.locator("#result_list input.action-select").first.check()
    page.select_option("select[name=action]", "release_holds")
    page.get_by_role("button", name="Go").click()
    page.get_by_label("Reason").fill("the render crashed; customer not charged")
    shoot("admin-release-confirm")
    page.get_by_role("button", name=re.compile(r"Release 1 hold")).click()
    expect(page.locator(".messagelist")).to_contain_text("1 hold(s) released")

    page.goto("/admin/ledger/account/reconciliation/")
    expect(page.locator("#all-reconciled")).to_have_text("✔ All reconciled.")
    shoot("admin-reconciliation-all-reconciled")

    balance = stack.shell(
        "from ledger.models import Account;"
        "a = Account.objects.get(user__username='holder'); print(a.available, a.held)"
    )
    assert balance.split() == ["3", "0"]


_STALE_HOLD = """
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from ledger import services
from ledger.models import Hold
user = get_user_model().objects.create_user("holder", password="holder-pass-1234")
account = services.account_for(user)
services.grant(account=account, amount=3, key="e2e-holder", reason="e2e")
hold = services.authorize(account=account, amount=1, key="e2e-h", reference="job 7 panel 1")
Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() - timedelta(minutes=5))
"""

_SUPERUSER = """
from django.contrib.auth import get_user_model
get_user_model().objects.create_superuser("operator", "op@example.com", "operator-pass-1234")
"""


def test_the_sweep_runs_on_a_real_worker(stack):
    stack.shell(
        """
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from ledger import services
from ledger.models import Hold
user = get_user_model().objects.create_user("sweepme", password="sweep-pass-1234")
account = services.account_for(user)
services.grant(account=account, amount=2, key="e2e-sweep", reason="e2e")
hold = services.authorize(account=account, amount=2, key="e2e-sweep-h", reference="abandoned")
Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
from ledger.tasks import expire_stale_holds
expire_stale_holds.delay()
"""
    )
    state = "from ledger.models import Hold;print(Hold.objects.get(reference='abandoned').state)"
    wait_until(
        lambda: stack.shell(state).strip() == "expired",
        timeout=30,
        every=0.5,
        what="the abandoned hold to expire",
    )
