"""Sign-in forms that stop guessing: the site's and the admin's share one throttle."""

import logging

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, UsernameField

from mangagen.kernel.client_address import client_address

from . import throttle

logger = logging.getLogger(__name__)


class ThrottledLoginMixin:
    """Refuses to check a password while its username or address is locked out."""

    def clean(self):
        # Counted under the name the form signs in with: UsernameField
        # NFKC-normalises it, so "ａlice" and "alice" are one person's guesses.
        username = UsernameField().to_python(self.data.get("username", "") or "")
        address = client_address(self.request)
        # Counted before the password is checked: guesses sent at once cannot all
        # pass a check made before any of them failed.
        if not throttle.take_attempt(username=username, address=address):
            self.locked_out = True
            # The line carries the client address counted (`client`), never the username.
            logger.warning("A sign-in was refused unchecked: too many failures from %s", address)
            raise forms.ValidationError(throttle.lockout_message(), code=throttle.LOCKED_OUT)
        cleaned = super().clean()
        if self.get_user() is not None:  # not on a blank password: that proves nothing
            throttle.record_success(username=username, address=address)
        return cleaned


class LoginForm(ThrottledLoginMixin, AuthenticationForm):
    locked_out = False


class AdminLoginForm(ThrottledLoginMixin, AdminAuthenticationForm):
    locked_out = False
