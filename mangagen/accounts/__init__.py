"""Accounts: sign-in throttling and the sign-up/sign-in forms (Django's own views serve them)."""
