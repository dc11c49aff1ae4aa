"""What a person is told of a render that failed, said once: the renderers' failed render
(mangagen/renderers/base.py `RenderError.public`), a provider that does not answer
(mangagen/renderers/provider_http.py), and the credit history's line for the hold a
failed render released (credit_history.py). Stored in English and translated when
shown (mangagen/renderers/public.py `shown`).

Django-free: the settings import the renderers' contract, which imports these, before
translations may be asked for.
"""


def gettext_noop(message: str) -> str:
    """Marks `message` for the catalog (makemessages reads the calls of this name), as
    Django's own does, which needs the settings loaded."""
    return message


RENDER_FAILED = gettext_noop("The render failed; nothing was charged.")
PROVIDER_DOWN = gettext_noop(
    "The image provider is not answering, so the render failed; nothing was charged. "
    "Try again in a few minutes."
)
