"""`GET /api/storyboards/<id>/panels/<index>/lettering/`: where the lettering put each
balloon, its tail, the caption and each sound effect on the panel's current take, as its
lettered picture shows them (docs/api.md, "Lettering you direct"). Owner only.

The lettering editor puts each handle on its balloon from this, and says when a balloon
or a sound effect was moved in or made smaller to stay inside the panel. The answer is
the one the picture was drawn with: read from the cache beside the picture, or drawn
(against the person's drawing budget) and kept for the picture's next request too.
"""

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.errors import plain_error_response
from mangagen.api.schema import refuses
from mangagen.jobs.lettered_images import (
    cached_layout,
    find_shown,
    lettering_of,
    store,
    store_layout,
)
from mangagen.kernel import quotas
from mangagen.kernel.quotas import Limit
from mangagen.pages.frames import frame_of
from mangagen.storyboards.api import owned_storyboard
from mangagen.storyboards.selectors import takes_of
from mangagen.translations.errors import NoSuchTranslation


def _placed(name: str, *, numbered: bool) -> serializers.Serializer:
    """The schema of one thing lettered (`mangagen.lettering.report.Placed`)."""

    def point(part: str, **options) -> serializers.Serializer:
        fields = {"x": serializers.FloatField(), "y": serializers.FloatField()}
        return inline_serializer(f"{name}{part}", fields, **options)

    box = {k: serializers.FloatField() for k in ("x0", "y0", "x1", "y1")}
    fields = {
        "kind": serializers.CharField(),
        "box": inline_serializer(f"{name}Box", box),
        "centre": point("Centre"),
        "tail": point("Tail", allow_null=True),
        "auto": serializers.BooleanField(),
        "moved_in": serializers.BooleanField(),
        "shrunk": serializers.BooleanField(),
    }
    if numbered:
        return inline_serializer(name, {"number": serializers.IntegerField(), **fields}, many=True)
    return inline_serializer(name, fields, allow_null=True)


class PanelLetteringView(APIView):
    @refuses(NoSuchTranslation, Limit.DRAWING)
    @extend_schema(
        summary="Where the lettering put each balloon and sound effect on the panel",
        parameters=[OpenApiParameter("lang", str, description="A translation's language.")],
        responses=inline_serializer(
            "PanelLettering",
            {
                "image_url": serializers.CharField(),
                "width": serializers.IntegerField(),
                "height": serializers.IntegerField(),
                "lines": _placed("LetteredLine", numbered=True),
                "caption": _placed("LetteredCaption", numbered=False),
                "sfx": _placed("LetteredSoundEffect", numbered=True),
                "frame": inline_serializer(
                    "PanelFrame",
                    {
                        "page": serializers.IntegerField(),
                        "width": serializers.IntegerField(),
                        "height": serializers.IntegerField(),
                        "drawn_smaller": serializers.BooleanField(),
                    },
                    allow_null=True,
                ),
            },
        ),
    )
    def get(self, request, pk: int, index: int):
        storyboard = owned_storyboard(request, pk)
        panel = storyboard.panels.filter(index=index).first()
        takes = takes_of(storyboard=storyboard, art_hash=panel.art_hash) if panel else []
        if not takes:
            raise Http404("This panel has no kept picture yet.")
        name = takes[0].image.name
        path = name.removeprefix("renders/")
        shown = find_shown(request.user, name)
        if shown is None:
            raise Http404("This panel has no kept picture yet.")
        try:
            etag, key, language, lettered = lettering_of(shown, path, request.GET.get("lang"))
        except NoSuchTranslation as missing:
            return plain_error_response(missing)
        try:
            quotas.check_drawing(user_id=request.user.pk)
            layout = cached_layout(etag)
            if layout is None:
                layout = {}
                with quotas.drawing(user_id=request.user.pk, estimate=lettered.estimate):
                    png = lettered(layout)
                store(key, etag, png, language)  # the picture's next request is free
                store_layout(etag, layout)
        except quotas.LimitReached as refused:
            return plain_error_response(refused)
        except FileNotFoundError as gone:
            raise Http404("No such image.") from gone
        image_url = reverse("render-image", args=[path])
        frame = frame_of(
            storyboard=storyboard, index=index, art_size=(layout["width"], layout["height"])
        )
        on_page = None
        if frame is not None:
            on_page = {
                "page": frame.page,
                "width": frame.width,
                "height": frame.height,
                "drawn_smaller": frame.drawn_smaller,
            }
        return Response({"image_url": image_url, **layout, "frame": on_page})
