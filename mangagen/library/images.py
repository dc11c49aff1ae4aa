"""Library pictures (cast sheets, places) are never public: only their owner."""

from django.contrib.auth.decorators import login_required

from mangagen.characters.images import private_png

from .models import CastSheet, SavedPlace


@login_required
def library_image(request, path: str):
    name = f"library/{path}"
    sheet = CastSheet.objects.filter(image=name, member__owner=request.user).first()
    if sheet is not None:
        return private_png(sheet.image.name)
    place = SavedPlace.objects.filter(picture=name, owner=request.user).first()
    return private_png(place.picture.name if place is not None else None)
