"""Rendered images are never public: only the owner, only once delivered."""

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404

from .models import SHOWN_STATES, JobPanel


@login_required
def render_image(request, path: str):
    panel = (
        JobPanel.objects.select_related("job")
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
    response = FileResponse(panel.image.open("rb"), content_type="image/png")
    response["Cache-Control"] = "private, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    return response
