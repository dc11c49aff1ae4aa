"""The series pages: start a series, see its chapters with their progress, start the next
chapter (drafted from its story with the cast, the places and how the last one ended)."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from mangagen.kernel import quotas
from mangagen.kernel.errors import ApplicationError
from mangagen.lettering import languages
from mangagen.series import selectors, services
from mangagen.series.models import Series
from mangagen.storyboards import limits
from mangagen.storyboards import services as storyboards
from mangagen.storyboards.models import Style


class SeriesForm(forms.Form):
    title = forms.CharField(max_length=limits.MAX_TITLE, strip=True)
    style = forms.ChoiceField(choices=Style.choices, initial=Style.MANGA)


class ChapterForm(forms.Form):
    title = forms.CharField(max_length=limits.MAX_TITLE, required=False, strip=True)
    story = forms.CharField(
        max_length=limits.MAX_STORY, required=False, strip=False, widget=forms.Textarea
    )


@login_required
def new_series(request):
    form = SeriesForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            series = services.create_series(owner=request.user, **form.cleaned_data)
        except ApplicationError as refused:
            form.add_error(None, str(refused))
        else:
            return redirect("series", pk=series.pk)
    return render(request, "studio/series_new.html", {"form": form})


@login_required
def series_page(request, pk: int):
    series = get_object_or_404(Series, pk=pk, owner=request.user)
    data = selectors.series_json(series)
    # The plain downloads are each chapter in its own language; a language offered
    # besides is one every drawn chapter can be read in, unless all are written in it.
    originals = {chapter["language"] for chapter in data["chapters"] if chapter["kept"]}
    offered = [
        (code, languages.display_name(code)) for code in data["languages"] if originals != {code}
    ]
    return render(
        request,
        "studio/series.html",
        {
            "series": series,
            "data": data,
            "languages": offered,
            "form": ChapterForm(),
            "limits": {"MAX_TITLE": limits.MAX_TITLE, "MAX_STORY": limits.MAX_STORY},
        },
    )


@login_required
@require_POST
def next_chapter(request, pk: int):
    """Starts the next chapter and, when a story was written, drafts its panels; then opens
    its Characters step (the cast is there already, with their sheets)."""
    series = get_object_or_404(Series, pk=pk, owner=request.user)
    form = ChapterForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
        return redirect("series", pk=pk)
    try:
        chapter = services.start_chapter(series=series, **form.cleaned_data)
    except ApplicationError as refused:
        messages.error(request, str(refused))
        return redirect("series", pk=pk)
    if chapter.story.strip():
        try:
            _, notice = storyboards.draft_storyboard(storyboard=chapter)
        except quotas.LimitReached as refused:
            notice = gettext("Not drafted: %(why)s Draft it from the Storyboard step later.") % {
                "why": refused
            }
        if notice:
            messages.info(request, notice)
    return redirect("comic-step", pk=chapter.pk, step="characters")
