"""Safe by default (issue #14 §2): sign-in throttling, sign-up limits, a staff-only
API schema in production, operators' notes kept out of people's history, demo
logins only in DEBUG."""

import subprocess

import pytest
from django.core.management import call_command

from ledger import services as ledger
from ledger.models import Transfer

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def small_limits(settings):
    settings.LOGIN_FAILURES_PER_USERNAME = 3
    settings.LOGIN_FAILURES_PER_ADDRESS = 5
    settings.LOGIN_LOCKOUT_SECONDS = 900
    settings.SIGNUP_PER_ADDRESS_PER_HOUR = 2


def sign_in(client, username, password, address="10.0.0.1", **extra):
    return client.post(
        "/accounts/login/",
        {"username": username, "password": password},
        REMOTE_ADDR=address,
        **extra,
    )


# --- sign-in throttling ----------------------------------------------------------------


def test_a_username_is_locked_out_after_its_failures_even_with_the_right_password(
    client, make_user
):
    make_user("kenji", password="paper-lantern-42")
    for _ in range(3):
        assert sign_in(client, "kenji", "wrong").status_code == 200
    locked = sign_in(client, "kenji", "paper-lantern-42")
    assert locked.status_code == 429
    assert "Too many failed sign-in attempts" in locked.content.decode()
    assert "try again in 15 minutes" in locked.content.decode()
    assert client.get("/api/me/").status_code == 403


def test_one_attacker_cannot_lock_an_account_out_everywhere(client, make_user):
    """The username is locked out from the address that guessed; its owner, signing in
    from another, is not (a lockout per username alone locked them out too)."""
    make_user("kenji", password="paper-lantern-42")
    for _ in range(6):
        sign_in(client, "kenji", "wrong", address="203.0.113.7")
    assert sign_in(client, "kenji", "paper-lantern-42", address="203.0.113.7").status_code == 429
    assert sign_in(client, "kenji", "paper-lantern-42", address="10.0.0.2").status_code == 302


def test_every_spelling_that_signs_in_as_a_username_counts_as_it(client, make_user):
    """The form NFKC-normalises a username before checking it: "ｋenji" (a
    fullwidth k) signs in as kenji, so its failures are kenji's too."""
    make_user("kenji", password="paper-lantern-42")
    for spelling in ("ｋenji", "𝐤enji", " KENJI "):
        assert sign_in(client, spelling, "wrong", address="10.2.0.9").status_code == 200
    locked = sign_in(client, "ｋｅｎｊｉ", "paper-lantern-42", address="10.2.0.9")
    assert locked.status_code == 429
    assert sign_in(client, "kenji", "paper-lantern-42", address="10.2.0.9").status_code == 429


def test_an_address_is_locked_out_after_its_failures_across_usernames(client, make_user):
    make_user("kenji", password="paper-lantern-42")
    for n in range(5):
        sign_in(client, f"guess{n}", "wrong")
    assert sign_in(client, "kenji", "paper-lantern-42").status_code == 429
    assert sign_in(client, "kenji", "paper-lantern-42", address="10.0.0.9").status_code == 302


def test_unknown_and_known_usernames_lock_out_alike(client, make_user):
    make_user("kenji", password="paper-lantern-42")
    answers = []
    for username in ("kenji", "nobody-here"):
        for _ in range(4):
            answers.append(sign_in(client, username, "wrong", address=f"10.1.0.{len(username)}"))
    assert [a.status_code for a in answers] == [200, 200, 200, 429] * 2


def test_a_good_sign_in_clears_the_usernames_failures(client, make_user):
    make_user("kenji", password="paper-lantern-42")
    for _ in range(2):
        sign_in(client, "kenji", "wrong")
    assert sign_in(client, "kenji", "paper-lantern-42").status_code == 302
    client.post("/accounts/logout/")
    for _ in range(2):
        assert sign_in(client, "kenji", "wrong").status_code == 200
    assert sign_in(client, "kenji", "paper-lantern-42").status_code == 302


def test_a_blank_password_does_not_clear_the_count(client, make_user):
    make_user("kenji", password="paper-lantern-42")
    for _ in range(2):
        sign_in(client, "kenji", "wrong")
    sign_in(client, "kenji", "")
    sign_in(client, "kenji", "wrong")
    assert sign_in(client, "kenji", "paper-lantern-42").status_code == 429


def test_guesses_sent_at_once_get_no_more_password_checks_than_the_limit(monkeypatch, race):
    """Forty wrong passwords for one username from one address, all at once: each
    attempt is counted before its password is checked, so at most the limit (3) are
    checked. (Counted after, every guess passed the check for an earlier failure: all
    40 were.)"""
    import threading

    from django.contrib.auth import forms as auth_forms
    from django.test import RequestFactory

    from mangagen.accounts.forms import LoginForm

    guesses = 40
    checked, refused = [], []
    everyone_in = threading.Event()
    lock = threading.Lock()

    def arrived():
        if len(checked) + len(refused) == guesses:
            everyone_in.set()

    def slow_check(request=None, **credentials):
        with lock:
            checked.append(credentials["username"])
            arrived()
        everyone_in.wait(timeout=30)  # every guess is in before any check ends
        return None  # a wrong password

    monkeypatch.setattr(auth_forms, "authenticate", slow_check)

    def guess(n: int) -> None:
        request = RequestFactory().post("/accounts/login/", REMOTE_ADDR="10.9.0.1")
        form = LoginForm(request, data={"username": "kenji", "password": f"guess-{n}"})
        form.is_valid()
        if form.locked_out:
            with lock:
                refused.append(n)
                arrived()

    assert race([lambda n=n: guess(n) for n in range(guesses)]) == [None] * guesses
    assert len(checked) == 3 and len(refused) == guesses - 3


def test_an_ipv6_address_counts_as_its_64(client, make_user):
    make_user("kenji", password="paper-lantern-42")
    for n in range(5):  # five addresses of one /64, five usernames
        sign_in(client, f"guess{n}", "wrong", address=f"2001:db8:1:2::{n + 1:x}")
    assert (
        sign_in(client, "kenji", "paper-lantern-42", address="2001:db8:1:2::ff").status_code == 429
    )
    assert (
        sign_in(client, "kenji", "paper-lantern-42", address="2001:db8:1:3::1").status_code == 302
    )


def test_sign_ups_from_one_ipv6_64_share_one_allowance(client):
    def sign_up(name, address):
        answer = client.post(
            "/accounts/signup/",
            {"username": name, "password1": "paper-lantern-42", "password2": "paper-lantern-42"},
            REMOTE_ADDR=address,
        )
        client.post("/accounts/logout/")
        return answer.status_code

    assert sign_up("hana", "2001:db8:7:7::1") == 302
    assert sign_up("mei", "2001:db8:7:7::2") == 302
    assert sign_up("rin", "2001:db8:7:7:ffff::3") == 429  # the allowance (2) is the /64's
    assert sign_up("rin", "2001:db8:7:8::1") == 302  # another /64


def test_the_admin_sign_in_shares_the_throttle(client, make_user):
    make_user("ops", password="paper-lantern-42", is_staff=True, is_superuser=True)
    for _ in range(3):
        client.post(
            "/admin/login/", {"username": "ops", "password": "wrong"}, REMOTE_ADDR="10.0.0.1"
        )
    page = client.post(
        "/admin/login/", {"username": "ops", "password": "paper-lantern-42"}, REMOTE_ADDR="10.0.0.1"
    )
    assert "Too many failed sign-in attempts" in page.content.decode()
    assert client.get("/admin/").status_code == 302


def test_the_forwarded_address_counts_only_behind_a_proxy(client, make_user, settings):
    make_user("kenji", password="paper-lantern-42")
    settings.LOGIN_FAILURES_PER_USERNAME = 100
    for n in range(5):  # a caller varying X-Forwarded-For is still one address
        sign_in(client, f"g{n}", "wrong", HTTP_X_FORWARDED_FOR=f"1.2.3.{n}")
    assert sign_in(client, "kenji", "paper-lantern-42").status_code == 429
    settings.BEHIND_PROXY = True
    fresh = sign_in(client, "kenji", "paper-lantern-42", HTTP_X_FORWARDED_FOR="6.6.6.6, 7.7.7.7")
    assert fresh.status_code == 302


# --- sign-up ---------------------------------------------------------------------------


def test_sign_ups_are_limited_per_address(client):
    def sign_up(name):
        return client.post(
            "/accounts/signup/",
            {"username": name, "password1": "paper-lantern-42", "password2": "paper-lantern-42"},
            REMOTE_ADDR="10.0.0.1",
        )

    assert sign_up("hana").status_code == 302
    client.post("/accounts/logout/")
    assert sign_up("hana").status_code == 200  # taken: said once, next to the field
    refused = sign_up("mei")
    assert refused.status_code == 429
    assert "Too many sign-ups" in refused.content.decode()
    assert "already exists" not in refused.content.decode()


# --- the API's description --------------------------------------------------------------


def test_schema_and_docs_are_staff_only_with_debug_off(client, make_user, settings, user):
    settings.DEBUG = False
    for url in ("/api/schema/", "/api/docs/"):
        assert client.get(url).status_code == 403
        client.force_login(user)
        assert client.get(url).status_code == 403
        client.force_login(make_user(is_staff=True))
        assert client.get(url).status_code == 200
        client.logout()


def test_schema_is_open_on_the_local_demo(client, settings):
    settings.DEBUG = True
    assert client.get("/api/schema/").status_code == 200


# --- what people see of operators' work -------------------------------------------------


@pytest.fixture
def adjusted(user, make_user):
    """A history with an admin's release, a CLI grant and a failed render."""
    ops = make_user("ops-yamada", is_staff=True, is_superuser=True)
    account = ledger.account_for(user)
    ledger.grant(account=account, amount=5, key="p", reason="Purchase of the starter pack")
    call_command(
        "grant_credits", user.username, "3", "--reason", "goodwill, ticket #812 angry customer"
    )
    hold = ledger.authorize(account=account, amount=1, key="h1", reference="job 1 panel 1")
    ledger.release(hold=hold, reason="admin ops-yamada: stuck since the outage", actor=ops)
    hold = ledger.authorize(account=account, amount=1, key="h2", reference="job 1 panel 2")
    ledger.release(hold=hold, reason="render failed: 500 from http://10.2.0.7:7860/sdapi")
    return user


SECRETS = ("ops-yamada", "stuck since the outage", "ticket #812", "manage.py", "10.2.0.7")


def test_transfers_api_never_shows_operators_names_or_notes(client, adjusted):
    client.force_login(adjusted)
    body = client.get("/api/credits/transfers/").content.decode()
    assert not [s for s in SECRETS if s in body]
    rows = client.get("/api/credits/transfers/").json()["results"]
    words = [t["description"] for t in rows] + [t["outcome_words"] for t in rows]
    assert "Credits added by our support team" in words
    assert "Hold released by our support team" in words
    assert "Purchase of the starter pack" in words
    assert "given back: the render failed" in words
    assert Transfer.objects.filter(reason__contains="ops-yamada").exists()  # kept for admin


def test_credits_page_never_shows_operators_names_or_notes(client, adjusted):
    client.force_login(adjusted)
    page = client.get("/credits/").content.decode()
    assert not [s for s in SECRETS if s in page]
    assert "Credits added by our support team" in page


def test_admin_still_shows_the_operators_note(client, adjusted, make_user):
    client.force_login(make_user(is_staff=True, is_superuser=True))
    assert "stuck since the outage" in client.get("/admin/ledger/transfer/").content.decode()


# --- demo logins -------------------------------------------------------------------------


@pytest.fixture
def no_processes(monkeypatch):
    """runstack up to the point where it would start daphne and the workers."""
    from mangagen.management.commands import runstack

    class Stopped(Exception):
        pass

    def stop(self):
        raise Stopped

    monkeypatch.setattr(runstack.Manager, "loop", stop)
    monkeypatch.setattr(runstack, "call_command", lambda *a, **k: None)
    return Stopped


def test_runstack_makes_no_demo_logins_outside_demo_mode(settings, no_processes, django_user_model):
    settings.DEMO_MODE = False
    with pytest.raises(no_processes):
        call_command("runstack")
    assert not django_user_model.objects.exists()


def test_runstack_makes_the_demo_logins_in_demo_mode(settings, no_processes, django_user_model):
    settings.DEMO_MODE = True
    with pytest.raises(no_processes):
        call_command("runstack")
    assert django_user_model.objects.get(username="admin").is_superuser
    demo = django_user_model.objects.get(username=settings.DEMO_USERNAME)
    assert ledger.account_for(demo).available == settings.DEMO_CREDITS


# --- the local demo stays local ----------------------------------------------------------


def settings_under(tmp_path, env_file: str, **env: str) -> dict:
    """DEBUG and DEMO_MODE as a fresh process reads them from `env` and an .env file."""
    import json
    import os
    import subprocess
    import sys

    from tests.support.stack import ROOT

    (tmp_path / ".env").write_text(env_file)
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "HOST", "ALLOWED_HOSTS"}}
    done = subprocess.run(
        [sys.executable, "-c", "import json; from mangagen import settings as s;"
         "print(json.dumps({'DEBUG': s.DEBUG, 'DEMO_MODE': s.DEMO_MODE}))"],
        cwd=ROOT,
        env={**clean, "ENV_FILE": str(tmp_path / ".env"), **env},
        capture_output=True,
        text=True,
        check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def test_make_run_never_overrides_debug_off_in_the_env_file(tmp_path):
    production = (
        "DEBUG=off\nSECRET_KEY=a-real-secret-of-some-length\nALLOWED_HOSTS=comics.example\n"
    )
    assert settings_under(tmp_path, production, LOCAL_RUN="on") == {
        "DEBUG": False,
        "DEMO_MODE": False,
    }


def test_make_run_on_a_laptop_is_the_demo(tmp_path):
    assert settings_under(tmp_path, "", LOCAL_RUN="on") == {"DEBUG": True, "DEMO_MODE": True}


def test_no_demo_on_a_host_others_can_reach(tmp_path):
    assert settings_under(tmp_path, "ALLOWED_HOSTS=comics.example\n", LOCAL_RUN="on") == {
        "DEBUG": True,
        "DEMO_MODE": False,
    }
    assert settings_under(tmp_path, "", LOCAL_RUN="on", HOST="0.0.0.0")["DEMO_MODE"] is False
    # Asked for on every interface, it refuses to start (tests/test_settings_refusals.py).
    with pytest.raises(subprocess.CalledProcessError) as refused:
        settings_under(tmp_path, "DEMO_MODE=on\n", HOST="0.0.0.0", DEBUG="on")
    assert "DEMO_MODE is on with HOST 0.0.0.0" in refused.value.stderr


def test_demo_credits_only_in_demo_mode(client, user, settings):
    client.force_login(user)
    settings.DEMO_MODE = False
    assert client.post("/credits/demo/").status_code == 404
    settings.DEMO_MODE = True
    assert client.post("/credits/demo/").status_code == 302
    assert ledger.account_for(user).available == 10
