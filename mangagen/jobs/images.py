"""Rendered images are never public: only the owner, only once delivered.

A panel is shown with its lettering drawn over the art from the storyboard's
current text (while the panel's picture is still the one the storyboard
asks for; otherwise the text the job started with), so a text edit shows at
once without a render.
"""

import hashlib
import io

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, HttpResponseNotModified

from mangagen.lettering import Letterable
from mangagen.pages.compose import PanelArt, compose_panel

from .models import SHOWN_STATES, JobPanel


@login_required
def render_image(request, path: str):
    panel = (
        JobPanel.objects.select_related("job", "job__storyboard")
        .filter(
            image=f"renders/{path}",
            job__owner=request.user,
            job__confirmed=True,
            state__in=SHOWN_STATES,
        )
        .first()
    )
    if panel is None:
        raise Http404("No such image.")
    storyboard = panel.job.storyboard
    text = storyboard.panels.filter(index=panel.index, art_hash=panel.art_hash).first()
    source = text or panel.spec
    read = (lambda key: getattr(source, key)) if text else source.get
    lettering = {
        "dialogue": read("dialogue"),
        "caption": read("caption"),
        "shot": read("shot"),
        "characters": read("characters"),
    }
    direction = storyboard.reading_direction
    digest = hashlib.sha256(repr((path, lettering, direction, panel.faces)).encode())
    etag = f'"{digest.hexdigest()[:32]}"'
    if request.headers.get("If-None-Match") == etag:
        return HttpResponseNotModified()

    def load() -> bytes:
        with panel.image.open("rb") as handle:
            return handle.read()

    art = PanelArt(
        index=panel.index,
        letterable=Letterable.of(faces=panel.faces, **lettering),
        load=load,
    )
    buffer = io.BytesIO()
    compose_panel(art, direction=direction).save(buffer, "PNG", compress_level=1)
    response = HttpResponse(buffer.getvalue(), content_type="image/png")
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"  # the lettering may change under this URL
    response["X-Content-Type-Options"] = "nosniff"
    return response
