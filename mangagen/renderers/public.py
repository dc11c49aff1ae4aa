"""What a person is told of a failed render, in their own language.

A failed panel or sheet keeps its renderer's public message (`RenderError.public`),
or the paid render's (`paid_render.HOLD_ENDED`), as it was, in English; `shown`
translates it when it is read. Not imported by settings (which import `base`):
`gettext_noop` here already reads them.
"""

from django.utils.translation import gettext, gettext_noop

from mangagen.paid_render import HOLD_ENDED

from .base import RENDER_FAILED
from .provider_http import PROVIDER_DOWN

# Every public message a failed render stores, for the catalog (makemessages reads these).
MESSAGES = (
    gettext_noop("The render failed; nothing was charged."),
    gettext_noop(
        "The image provider is not answering, so the render failed; nothing was charged. "
        "Try again in a few minutes."
    ),
    gettext_noop("This render's hold ended before it could be shown. Try it again."),
)
assert set(MESSAGES) == {RENDER_FAILED, PROVIDER_DOWN, HOLD_ENDED}, "a message is missing here"


def shown(stored: str) -> str:
    """A stored public message in the request's language ("" stays "")."""
    return gettext(stored) if stored else ""
