"""Rendered images are never public: only the owner, only once delivered.

A panel is shown with its lettering drawn over the art from the storyboard's
current text (while the panel's picture is still the one the storyboard
asks for; otherwise the text the job started with), so a text edit shows at
once without a render. A comic's kept takes are served the same way, to its
owner only.
"""

import hashlib
import io
from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.db.models.fields.files import FieldFile
from django.http import Http404, HttpResponse, HttpResponseNotModified

from mangagen.lettering import Letterable
from mangagen.pages.builds import REVISION
from mangagen.pages.compose import PanelArt, compose_panel
from mangagen.storyboards.models import KeptArt, Storyboard

from .models import SHOWN_STATES, JobPanel

LETTERED_TTL = 24 * 3600  # seconds a lettered panel stays drawn in the cache


@dataclass
class _Shown:
    image: FieldFile
    storyboard: Storyboard
    art_hash: str
    faces: dict
    spec: dict  # the text to letter when the storyboard no longer asks for this picture
    index: int | None = None


def _find(user, name: str) -> _Shown | None:
    panel = (
        JobPanel.objects.select_related("job", "job__storyboard")
        .filter(image=name, job__owner=user, job__confirmed=True, state__in=SHOWN_STATES)
        .first()
    )
    if panel is not None:
        job = panel.job
        return _Shown(
            panel.image, job.storyboard, panel.art_hash, panel.faces, panel.spec, panel.index
        )
    kept = (
        KeptArt.objects.select_related("storyboard")
        .filter(image=name, storyboard__owner=user)
        .first()
    )
    if kept is None:
        return None
    return _Shown(kept.image, kept.storyboard, kept.art_hash, kept.faces, {})


def _lettering(shown: _Shown, path: str) -> tuple[str, str, Callable[[], bytes]]:
    """The ETag, the cache key and the drawing of a shown panel with its lettering."""
    same_art = shown.storyboard.panels.filter(art_hash=shown.art_hash).order_by("index")
    current = same_art.filter(index=shown.index).first() if shown.index else None
    current = current or same_art.first()
    if current is not None:
        fields = {
            k: getattr(current, k)
            for k in ("dialogue", "caption", "shot", "characters", "blocking")
        }
    else:
        spec = shown.spec
        fields = {
            "dialogue": spec.get("dialogue", []),
            "caption": spec.get("caption", ""),
            "shot": spec.get("shot", "medium"),
            "characters": spec.get("characters", []),
            "blocking": spec.get("blocking", {}),
        }
    direction = shown.storyboard.reading_direction
    digest = hashlib.sha256(repr((REVISION, path, fields, direction, shown.faces)).encode())

    def lettered() -> bytes:
        def load() -> bytes:
            with shown.image.open("rb") as handle:
                return handle.read()

        art = PanelArt(index=0, letterable=Letterable.of(faces=shown.faces, **fields), load=load)
        buffer = io.BytesIO()
        compose_panel(art, direction=direction).save(buffer, "PNG", compress_level=1)
        return buffer.getvalue()

    # The key is only reachable after the owner check of the view.
    return f'"{digest.hexdigest()[:32]}"', f"lettered-panel:{digest.hexdigest()}", lettered


def draw_ahead(panel: JobPanel) -> None:
    """Draws a just-rendered panel's lettering into the cache, in the worker, so that
    the request that first shows it (the job page right after Generate) only sends
    it. Nothing is revealed: the image is served only by `render_image`'s checks."""
    job = panel.job
    shown = _Shown(
        panel.image, job.storyboard, panel.art_hash, panel.faces, panel.spec, panel.index
    )
    _, key, lettered = _lettering(shown, (panel.image.name or "").removeprefix("renders/"))
    cache.get_or_set(key, lettered, LETTERED_TTL)


@login_required
def render_image(request, path: str):
    shown = _find(request.user, f"renders/{path}")
    if shown is None:
        raise Http404("No such image.")
    etag, key, lettered = _lettering(shown, path)
    if request.headers.get("If-None-Match") == etag:
        return HttpResponseNotModified()
    # Drawn once per picture and text (the key names both), not on every request: a
    # person's first paint after Generate and every other tab then skip the lettering
    # (and a render's worker draws it ahead: draw_ahead).
    png = cache.get_or_set(key, lettered, LETTERED_TTL)
    response = HttpResponse(png, content_type="image/png")
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"  # the lettering may change under this URL
    response["X-Content-Type-Options"] = "nosniff"
    return response
