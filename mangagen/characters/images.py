"""Sheet images are never public: only the comic's owner, only once ready."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse

from .models import CharacterSheet, SheetState


@login_required
def sheet_image(request, path: str):
    sheet = CharacterSheet.objects.filter(
        image=f"sheets/{path}", storyboard__owner=request.user, state=SheetState.READY
    ).first()
    if sheet is None:
        raise Http404("No such image.")
    return private_png(sheet.image)


def private_png(image) -> HttpResponse:
    """A stored PNG whose file never changes, for its owner only (the caller checked)."""
    with image.open("rb") as handle:
        response = HttpResponse(handle.read(), content_type="image/png")
    response["Cache-Control"] = "private, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    return response
