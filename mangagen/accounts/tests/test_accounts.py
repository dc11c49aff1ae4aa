"""Sign-up, login, logout and the pages around them (docs/api.md, "Accounts")."""

import pytest

pytestmark = pytest.mark.django_db


def test_login_page_sets_the_csrf_cookie(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert "csrftoken" in response.cookies


def test_signup_logs_the_person_in(client):
    response = client.post(
        "/accounts/signup/",
        {"username": "hana", "password1": "paper-lantern-42", "password2": "paper-lantern-42"},
    )
    assert response.status_code == 302
    assert client.get("/api/me/").json() == {
        "username": "hana",
        "credits": {"available": 0, "held": 0},
        "credits_as_of": 0,
    }


def test_signup_errors_are_shown_next_to_the_field(client):
    response = client.post(
        "/accounts/signup/", {"username": "hana", "password1": "abc", "password2": "abd"}
    )
    assert response.status_code == 200
    assert "The two password fields didn\u2019t match." in response.content.decode()


def test_login_and_logout(client, make_user):
    make_user("kenji", password="paper-lantern-42")
    response = client.post(
        "/accounts/login/", {"username": "kenji", "password": "paper-lantern-42"}
    )
    assert response.status_code == 302
    assert client.get("/api/me/").status_code == 200
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/api/me/").status_code == 403


def test_wrong_password_is_refused(client, make_user):
    make_user("kenji", password="paper-lantern-42")
    response = client.post("/accounts/login/", {"username": "kenji", "password": "nope"})
    assert response.status_code == 200
    assert "enter a correct username and password" in response.content.decode()


def test_home_needs_login_and_shows_the_balance(client, user):
    assert client.get("/").status_code == 302
    client.force_login(user)
    page = client.get("/").content.decode()
    assert (
        "Your comics" in page
        and '<strong id="credits-available" data-credits="available">0</strong>' in page
    )


def test_logout_refuses_a_post_without_csrf(user):
    from django.test import Client

    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(user)
    response = csrf_client.post("/accounts/logout/")
    assert response.status_code == 403


def test_openapi_schema_and_docs_are_served(client, make_user):
    client.force_login(make_user(is_staff=True))  # staff-only with DEBUG off (as in tests)
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/credits/" in schema.content
    assert client.get("/api/docs/").status_code == 200
