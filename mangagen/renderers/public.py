"""What a person is told of a failed render, in their own language.

A failed panel or sheet keeps its renderer's public message (`RenderError.public`),
or the paid render's (its hold ended: marked where it is written, in
mangagen/kernel/paid_render.py, for the renderers know nothing of paying), as it was, in
English; `shown` translates any of them when it is read. Not imported by settings
(which import `base`): `gettext_noop` here already reads them.
"""

from django.utils.translation import gettext, gettext_noop

from .base import RENDER_FAILED
from .provider_http import PROVIDER_DOWN

# Every public message a renderer's failed render stores, for the catalog (makemessages
# reads these).
MESSAGES = (
    gettext_noop("The render failed; nothing was charged."),
    gettext_noop(
        "The image provider is not answering, so the render failed; nothing was charged. "
        "Try again in a few minutes."
    ),
)
assert set(MESSAGES) == {RENDER_FAILED, PROVIDER_DOWN}, "a message is missing here"


def shown(stored: str) -> str:
    """A stored public message in the request's language ("" stays "")."""
    return gettext(stored) if stored else ""
