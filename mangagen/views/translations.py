"""The translation editor: the original beside a translation, line by line.

A thin shell like the wizard's steps: static/js/translations.js reads and
saves translations through the public API.
"""

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from mangagen.lettering import languages
from mangagen.storyboards import limits
from mangagen.storyboards.models import Storyboard
from mangagen.translations.chat import get_translator


@login_required
def translations_page(request, pk: int):
    storyboard = get_object_or_404(Storyboard, pk=pk, owner=request.user)
    return render(
        request,
        "studio/translations.html",
        {
            "storyboard": storyboard,
            "original_name": languages.display_name(storyboard.language),
            "languages": [
                {"code": code, "label": label}
                for code, label in languages.choices()
                if code != storyboard.language
            ],
            "translator": get_translator() is not None,
            "limits": limits,
        },
    )
