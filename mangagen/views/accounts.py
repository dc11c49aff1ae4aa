"""Sign-in and sign-up; logout is Django's own view (see urls.py).

Both are throttled (see `mangagen.accounts.throttle`): a locked-out sign-in and
a sign-up past its per-address allowance answer 429 with a message saying so.
"""

from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import UserCreationForm
from django.shortcuts import redirect
from django.utils.translation import gettext
from django.views.generic import FormView

from mangagen.accounts import throttle
from mangagen.accounts.forms import LoginForm
from mangagen.kernel.client_address import client_address


class LoginView(auth_views.LoginView):
    authentication_form = LoginForm
    redirect_authenticated_user = True

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.locked_out:
            response.status_code = 429
        return response


class SignupView(FormView):
    template_name = "registration/signup.html"
    form_class = UserCreationForm

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated:
            return redirect("home")
        return super().dispatch(request, *args, **kwargs)

    def post(self, request, *args, **kwargs):
        # Counted per address, so no one can test thousands of usernames for "taken".
        if not throttle.signup_allowed(address=client_address(request)):
            form = self.get_form()
            form.errors.clear()
            form.add_error(
                None, gettext("Too many sign-ups from your network; please try again later.")
            )
            response = self.render_to_response(self.get_context_data(form=form))
            response.status_code = 429
            return response
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        user = form.save()
        login(self.request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
