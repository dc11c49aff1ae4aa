"""The storyboard endpoints. Another person's storyboard answers 404."""

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.schema import refuses
from mangagen.api.throttles import ScopedRateThrottle, WritesThrottle
from mangagen.jobs.quote import quote
from mangagen.kernel.quotas import Limit
from mangagen.orchestration import comic_deletion as deletion

from . import selectors, services
from .errors import EmptyStory
from .models import Storyboard
from .selectors import owned_storyboard
from .serializers import StoryboardSerializer, StoryboardWriteSerializer


def fresh_storyboard(storyboard: Storyboard) -> dict:
    """The storyboard as the API answers it, read again with its parts."""
    storyboard = (
        Storyboard.objects.select_related("series")
        .prefetch_related("characters", "panels", "places")
        .get(pk=storyboard.pk)
    )
    return StoryboardSerializer(storyboard).data


class StoryboardListView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "storyboards"

    @extend_schema(responses=StoryboardSerializer(many=True), summary="Your storyboards")
    def get(self, request):
        storyboards = (
            Storyboard.objects.filter(owner=request.user)
            .select_related("series")
            .prefetch_related("characters", "panels", "places")
        )
        return Response(StoryboardSerializer(storyboards, many=True).data)

    @refuses(Limit.STORYBOARDS)
    @extend_schema(
        request=StoryboardWriteSerializer,
        responses={201: StoryboardSerializer},
        summary="Start a storyboard",
    )
    def post(self, request):
        serializer = StoryboardWriteSerializer(data=request.data, partial=False)
        for optional in ("characters", "places", "panels"):
            serializer.fields[optional].required = False
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        storyboard = services.start_storyboard(
            owner=request.user,
            title=data["title"],
            story=data["story"],
            style=data["style"],
            language=data.get("language"),
            characters=data.get("characters"),
            places=data.get("places"),
            panels=data.get("panels"),
        )
        return Response(fresh_storyboard(storyboard), status=status.HTTP_201_CREATED)


class StoryboardDetailView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "storyboards"

    @extend_schema(responses=StoryboardSerializer, summary="One storyboard")
    def get(self, request, pk: int):
        return Response(StoryboardSerializer(owned_storyboard(request, pk)).data)

    @extend_schema(
        request=StoryboardWriteSerializer,
        responses=StoryboardSerializer,
        summary="Edit a storyboard (lists replace what was there)",
    )
    def patch(self, request, pk: int):
        storyboard = owned_storyboard(request, pk)
        serializer = StoryboardWriteSerializer(storyboard, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        services.update_storyboard(storyboard=storyboard, **serializer.validated_data)
        return Response(fresh_storyboard(storyboard))

    @extend_schema(
        responses={204: None}, summary="Delete a storyboard (its live jobs are cancelled)"
    )
    def delete(self, request, pk: int):
        deletion.delete_comic(storyboard=owned_storyboard(request, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DraftView(APIView):
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "draft"

    @refuses(EmptyStory, Limit.DRAFTS)
    @extend_schema(
        request=None,
        responses=StoryboardSerializer,
        summary="Draft the panels from the story (replaces the panels)",
    )
    def post(self, request, pk: int):
        storyboard, notice = services.draft_storyboard(storyboard=owned_storyboard(request, pk))
        data = fresh_storyboard(storyboard)
        data["notice"] = notice
        return Response(data)


class QuoteView(APIView):
    @extend_schema(
        summary="What Generate would render and charge now (kept panels cost nothing)",
        responses=inline_serializer(
            "Quote",
            {
                "render": serializers.ListField(child=serializers.IntegerField()),
                "kept": serializers.ListField(child=serializers.IntegerField()),
                "credits": serializers.IntegerField(),
                "available": serializers.IntegerField(),
                "sheets": serializers.ListField(
                    child=serializers.IntegerField(),
                    help_text="Panels drawn again only because a character's sheet changed.",
                ),
            },
        ),
    )
    def get(self, request, pk: int):
        storyboard = owned_storyboard(request, pk)
        return Response(quote(storyboard=storyboard, user=request.user).as_dict())


class TakesView(APIView):
    @extend_schema(
        summary="The kept takes of a panel's current picture, the one shown first",
        responses=inline_serializer(
            "Takes",
            {
                "takes": inline_serializer(
                    "Take",
                    {
                        "id": serializers.IntegerField(),
                        "current": serializers.BooleanField(),
                        "created_at": serializers.DateTimeField(),
                        "image_url": serializers.CharField(),
                    },
                    many=True,
                )
            },
        ),
    )
    def get(self, request, pk: int, index: int):
        storyboard = owned_storyboard(request, pk)
        panel = get_object_or_404(storyboard.panels, index=index)
        takes = selectors.takes_of(storyboard=storyboard, art_hash=panel.art_hash)
        return Response(
            {
                "takes": [
                    {
                        "id": t.pk,
                        "current": i == 0,
                        "created_at": t.created_at,
                        "image_url": reverse(
                            "render-image", args=[t.image.name.removeprefix("renders/")]
                        ),
                    }
                    for i, t in enumerate(takes)
                ]
            }
        )


class ChooseTakeView(APIView):
    @extend_schema(
        request=None, responses={204: None}, summary="Show an older take again (costs nothing)"
    )
    def post(self, request, pk: int, index: int, take: int):
        storyboard = owned_storyboard(request, pk)
        panel = get_object_or_404(storyboard.panels, index=index)
        if not any(
            t.pk == take for t in selectors.takes_of(storyboard=storyboard, art_hash=panel.art_hash)
        ):
            raise Http404("No such take of this panel's picture.")
        services.choose_take(storyboard=storyboard, take=take)
        return Response(status=status.HTTP_204_NO_CONTENT)
