"""Sheet images are never public: only the comic's owner, only once ready."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse

from mangagen import storage

from .models import CharacterSheet, SheetState


@login_required
def sheet_image(request, path: str):
    sheet = CharacterSheet.objects.filter(
        image=f"sheets/{path}", storyboard__owner=request.user, state=SheetState.READY
    ).first()
    return private_png(sheet.image.name if sheet is not None else None)


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
