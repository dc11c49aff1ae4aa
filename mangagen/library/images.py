"""Library pictures (cast sheets, places) are never public: only their owner."""

from django.contrib.auth.decorators import login_required
from django.http import Http404

from mangagen.characters.images import private_png

from .models import CastSheet, SavedPlace


@login_required
def library_image(request, path: str):
    name = f"library/{path}"
    sheet = CastSheet.objects.filter(image=name, member__owner=request.user).first()
    if sheet is not None:
        return private_png(sheet.image)
    place = SavedPlace.objects.filter(picture=name, owner=request.user).first()
    if place is None:
        raise Http404("No such image.")
    return private_png(place.picture)
