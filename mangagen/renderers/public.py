"""What a person is told of a failed render, in their own language.

A failed panel or sheet keeps its renderer's public message (`RenderError.public`)
as it was, in English; `shown` translates it when it is read. Not imported by
settings (which import `base`): `gettext_noop` here already reads them.
"""

from django.utils.translation import gettext, gettext_noop

from .base import RENDER_FAILED
from .provider_http import PROVIDER_DOWN

# Every public message a renderer stores, for the catalog (makemessages reads these).
MESSAGES = (
    gettext_noop("The render failed; nothing was charged."),
    gettext_noop(
        "The image provider is not answering, so the render failed; nothing was charged. "
        "Try again in a few minutes."
    ),
)
assert set(MESSAGES) == {RENDER_FAILED, PROVIDER_DOWN}, "a public message is missing here"


def shown(stored: str) -> str:
    """A stored public message in the request's language ("" stays "")."""
    return gettext(stored) if stored else ""
