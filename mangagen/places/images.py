"""Place pictures are never public: only the comic's owner."""

from django.contrib.auth.decorators import login_required

from mangagen.characters.images import private_png

from .models import Place


@login_required
def place_image(request, path: str):
    place = Place.objects.filter(picture=f"places/{path}", storyboard__owner=request.user).first()
    return private_png(place.picture.name if place is not None else None)
