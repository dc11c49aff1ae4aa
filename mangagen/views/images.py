"""Images are never public: each view serves a picture to its owner only, once it is
theirs to see (a delivered panel, a ready sheet or rough, a place's or the library's
picture).

A panel is sent lettered (mangagen/jobs/lettered_images.py): drawn once per picture
and text, kept in the cache, checked against the person's drawing budget.
"""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, HttpResponseNotModified

from mangagen.api.errors import plain_error_response
from mangagen.characters.models import CharacterSheet, SheetState
from mangagen.jobs.lettered_images import cached, find_shown, lettering_of, store, store_layout
from mangagen.kernel import quotas, storage
from mangagen.library.models import CastSheet, SavedPlace
from mangagen.places.models import Place
from mangagen.roughs.selectors import shown_rough
from mangagen.translations.errors import NoSuchTranslation


@login_required
def render_image(request, path: str):
    shown = find_shown(request.user, f"renders/{path}")
    if shown is None:
        raise Http404("No such image.")
    try:
        etag, key, language, lettered = lettering_of(shown, path, request.GET.get("lang"))
    except NoSuchTranslation as missing:  # nothing read from the cache, nothing stored
        return plain_error_response(missing)
    if request.headers.get("If-None-Match") == etag:
        return HttpResponseNotModified()
    # Drawn once per picture and text, not on every request: a person's first paint
    # after Generate and every other tab then skip the lettering (and a render's
    # worker draws it ahead: draw_ahead). The budget is checked before the cache is
    # read: reading it decodes the image's whole entry.
    try:
        quotas.check_drawing(user_id=request.user.pk)
        png = cached(key, etag, language)
        if png is None:
            layout: dict = {}
            with quotas.drawing(user_id=request.user.pk, estimate=lettered.estimate):
                png = lettered(layout)
            store(key, etag, png, language)
            store_layout(etag, layout)  # where it put each balloon: the editor's handles
    except quotas.LimitReached as refused:
        return plain_error_response(refused)
    except FileNotFoundError as gone:  # its file left storage (the comic is going)
        raise Http404("No such image.") from gone
    response = HttpResponse(png, content_type="image/png")
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"  # the lettering may change under this URL
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_required
def sheet_image(request, path: str):
    sheet = CharacterSheet.objects.filter(
        image=f"sheets/{path}", storyboard__owner=request.user, state=SheetState.READY
    ).first()
    return private_png(sheet.image.name if sheet is not None else None)


@login_required
def place_image(request, path: str):
    place = Place.objects.filter(picture=f"places/{path}", storyboard__owner=request.user).first()
    return private_png(place.picture.name if place is not None else None)


@login_required
def library_image(request, path: str):
    name = f"library/{path}"
    sheet = CastSheet.objects.filter(image=name, member__owner=request.user).first()
    if sheet is not None:
        return private_png(sheet.image.name)
    place = SavedPlace.objects.filter(picture=name, owner=request.user).first()
    return private_png(place.picture.name if place is not None else None)


@login_required
def rough_image(request, path: str):
    """A ready rough, to its comic's owner only (a rough's picture, unlettered: the rough
    pages letter it, `GET …/pages/?rough=1`)."""
    rough = shown_rough(user=request.user, name=f"roughs/{path}")
    return private_png(rough.image.name if rough is not None else None)


def private_png(name: str | None) -> HttpResponse:
    """The stored PNG `name`, whose file never changes, for its owner only (the caller
    checked); 404 when there is no name or its file has left storage."""
    png = storage.read(name) if name else None
    if png is None:
        raise Http404("No such image.")
    response = HttpResponse(png, content_type="image/png")
    response["Cache-Control"] = "private, max-age=3600"  # the file never changes
    response["X-Content-Type-Options"] = "nosniff"
    return response
