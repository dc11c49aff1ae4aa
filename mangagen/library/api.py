"""The library endpoints (docs/api.md, "Series, cast and places"): the person's cast and
places, saved from one comic and added to another. Anyone else's entry or comic: 404."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiTypes, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.schema import refuses
from mangagen.api.throttles import WritesThrottle
from mangagen.characters.errors import NoSuchCharacter
from mangagen.characters.models import UploadProblem
from mangagen.kernel.errors import NotFound
from mangagen.kernel.quotas import Limit
from mangagen.places.errors import NoSuchPlace
from mangagen.storyboards import limits
from mangagen.storyboards.api import fresh_storyboard
from mangagen.storyboards.errors import ListFull, NameTaken
from mangagen.storyboards.selectors import owned_storyboard

from . import selectors, services
from .models import CastMember, SavedPlace

LIST_OF_OBJECTS = {"type": "array", "items": {"type": "object"}}

SaveBody = inline_serializer(
    "LibrarySave",
    {
        "storyboard": serializers.IntegerField(help_text="The comic to save it from."),
        "name": serializers.CharField(help_text="Its name in that comic."),
    },
)


class SaveSerializer(serializers.Serializer):
    storyboard = serializers.IntegerField()
    name = serializers.CharField(max_length=limits.MAX_NAME)


class AddSerializer(serializers.Serializer):
    cast = serializers.IntegerField(required=False, help_text="A cast member's id.")
    place = serializers.IntegerField(required=False, help_text="A saved place's id.")


class LibraryView(APIView):
    """A list of the library (the cast, or places): read it, or save one from a comic."""

    throttle_classes = [WritesThrottle]
    throttle_scope = "storyboards"
    kind = "cast"

    @extend_schema(responses={200: LIST_OF_OBJECTS}, summary="Your cast, or your places")
    def get(self, request):
        if self.kind == "cast":
            return Response([selectors.cast_json(m) for m in selectors.cast_of(owner=request.user)])
        return Response([selectors.place_json(p) for p in selectors.places_of(owner=request.user)])

    # NotFound: the comic; UPLOADS_FULL: the copies would pass PICTURE_BYTES_PER_PERSON.
    @refuses(NotFound, NoSuchCharacter, NoSuchPlace, Limit.LIBRARY, UploadProblem.UPLOADS_FULL)
    @extend_schema(
        request=SaveBody,
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT},
        summary="Keep a comic's character (or place) in your library (200: it replaced one)",
    )
    def post(self, request):
        serializer = SaveSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        storyboard = owned_storyboard(request, serializer.validated_data["storyboard"])
        name = serializer.validated_data["name"]
        if self.kind == "cast":
            member, created = services.save_character(
                owner=request.user, storyboard=storyboard, name=name
            )
            body = selectors.cast_json(
                CastMember.objects.prefetch_related("sheets").get(pk=member.pk)
            )
        else:
            saved, created = services.save_place(
                owner=request.user, storyboard=storyboard, name=name
            )
            body = selectors.place_json(saved)
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class LibraryEntryView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "storyboards"
    model: type[CastMember] | type[SavedPlace] = CastMember

    @extend_schema(request=None, responses={204: None}, summary="Remove one from your library")
    def delete(self, request, pk: int):
        services.forget(entry=get_object_or_404(self.model, pk=pk, owner=request.user))
        return Response(status=status.HTTP_204_NO_CONTENT)


class AddToComicView(APIView):
    """`POST …/characters/ {"cast"}` and `POST …/places/ {"place"}`: one from the library."""

    throttle_classes = [WritesThrottle]
    throttle_scope = "storyboards"
    field = "cast"

    @refuses(NameTaken, ListFull, UploadProblem.UPLOADS_FULL)
    @extend_schema(
        request=AddSerializer,
        responses={201: OpenApiTypes.OBJECT},
        summary="Add one from your library to the comic, with its sheets or picture (no credit)",
    )
    def post(self, request, pk: int):
        storyboard = owned_storyboard(request, pk)
        serializer = AddSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        entry_id = serializer.validated_data.get(self.field)
        if entry_id is None:
            raise serializers.ValidationError({self.field: ["This field is required."]})
        if self.field == "cast":
            member = get_object_or_404(CastMember, pk=entry_id, owner=request.user)
            added = services.add_character_to(storyboard=storyboard, member=member)
            listed = fresh_storyboard(storyboard)["characters"]
        else:
            saved = get_object_or_404(SavedPlace, pk=entry_id, owner=request.user)
            added = services.add_place_to(storyboard=storyboard, saved=saved)
            listed = fresh_storyboard(storyboard)["places"]
        body = next(item for item in listed if item["name"] == added.name)
        return Response(body, status=status.HTTP_201_CREATED)
