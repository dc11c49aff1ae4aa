"""A place's own picture (docs/api.md, "Places"). Another person's comic answers 404."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.parsers import MultiPartParser
from mangagen.api.schema import refuses
from mangagen.api.throttles import WritesThrottle
from mangagen.characters.errors import Refused
from mangagen.characters.uploads import checked_reference
from mangagen.kernel.request_bodies import BodyKind
from mangagen.storyboards.selectors import owned_storyboard

from . import selectors, services
from .errors import NoSuchPlace
from .models import Place

PlaceBody = inline_serializer(
    "PlaceBody",
    {
        "place": inline_serializer(
            "PlaceWithPicture",
            {
                "name": serializers.CharField(),
                "description": serializers.CharField(),
                "picture": serializers.DictField(allow_null=True),
            },
        )
    },
)


class PlacePictureView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "storyboards"
    parser_classes = [MultiPartParser]
    request_body = BodyKind.UPLOAD  # a picture: REQUEST_UPLOAD_MAX_BYTES

    @refuses(Refused, NoSuchPlace)
    @extend_schema(
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {"image": {"type": "string", "format": "binary"}},
            }
        },
        responses={200: PlaceBody},
        summary="Your own picture of the place, for the panels set there (PNG, JPEG or WebP)",
    )
    def put(self, request, pk: int, name: str):
        storyboard = owned_storyboard(request, pk)
        image = checked_reference(request.FILES.get("image"))
        place = services.set_picture(storyboard=storyboard, name=name, image=image)
        return Response({"place": selectors.as_json(Place.objects.get(pk=place.pk))})

    @refuses(NoSuchPlace)
    @extend_schema(request=None, responses={204: None}, summary="Remove the place's picture")
    def delete(self, request, pk: int, name: str):
        services.remove_picture(storyboard=owned_storyboard(request, pk), name=name)
        return Response(status=status.HTTP_204_NO_CONTENT)
