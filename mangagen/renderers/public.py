"""What a person is told of a failed render, in their own language.

A failed panel or sheet keeps its renderer's public message (`RenderError.public`: the
kernel's words for a failed render, mangagen/kernel/failed_render.py, marked for the
catalog there), or the paid render's (its hold ended: marked where it is written, in
mangagen/kernel/paid_render.py, for the renderers know nothing of paying), as it was, in
English; `shown` translates any of them when it is read.
"""

from django.utils.translation import gettext


def shown(stored: str) -> str:
    """A stored public message in the request's language ("" stays "")."""
    return gettext(stored) if stored else ""
