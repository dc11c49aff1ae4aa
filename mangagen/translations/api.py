"""The translation endpoints (docs/api.md, "Translations"). Another person's comic: 404."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiTypes,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.schema import refuses
from mangagen.api.throttles import ScopedRateThrottle, WritesThrottle
from mangagen.kernel.quotas import Limit
from mangagen.lettering import one_line
from mangagen.storyboards import limits
from mangagen.storyboards.selectors import owned_storyboard

from . import selectors, services
from .errors import NoSuchTranslation, NoTranslator, TranslationRefused, TranslatorFailed
from .matching import Edit


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string"},
            {
                "type": "object",
                "properties": {"text": {"type": "string"}, "stale": {"type": "boolean"}},
            },
        ]
    }
)
class LineField(serializers.Field):
    """A translated line: its text, or `{"text", "stale": false}` to say it translates
    the original as it is now (a stale line confirmed as it stands)."""

    default_error_messages = {
        "invalid": 'A line is its text, or {{"text": "…", "stale": false}}.',
        "max_length": "At most {max_length} characters.",
    }

    def __init__(self, *, max_length: int, **kwargs):
        self.max_length = max_length
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> Edit:
        current = False
        if isinstance(data, dict):
            current = data.get("stale") is False
            data = data.get("text", "")
        if not isinstance(data, str):
            self.fail("invalid")
        text = one_line(data)
        if len(text) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return Edit(text, current)

    def to_representation(self, value):
        return value.text


class PanelLinesSerializer(serializers.Serializer):
    index = serializers.IntegerField(min_value=1, help_text="The panel's index.")
    dialogue = serializers.ListField(
        child=LineField(max_length=limits.MAX_DIALOGUE_TEXT),
        max_length=limits.MAX_DIALOGUE_LINES,
        required=False,
        help_text="By position in the panel's dialogue; a line left out is untranslated.",
    )
    caption = LineField(max_length=limits.MAX_CAPTION, required=False)
    sfx = serializers.ListField(
        child=LineField(max_length=limits.MAX_SFX_TEXT),
        max_length=limits.MAX_SFX_PER_PANEL,
        required=False,
        help_text="By position in the panel's sound effects; left out: kept as they are.",
    )


class TranslationWriteSerializer(serializers.Serializer):
    title = LineField(max_length=limits.MAX_TITLE, required=False)
    panels = serializers.ListField(
        child=PanelLinesSerializer(), max_length=limits.MAX_PANELS, required=False
    )


class TranslationsView(APIView):
    @extend_schema(
        summary="The comic's original language and its translations",
        responses=OpenApiTypes.OBJECT,
        operation_id="storyboards_translations_list",
    )
    def get(self, request, pk: int):
        storyboard = owned_storyboard(request, pk)
        return Response(selectors.summaries(storyboard=storyboard))


class TranslationView(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "storyboards"

    @refuses(NoSuchTranslation)
    @extend_schema(summary="One translation beside the original", responses=OpenApiTypes.OBJECT)
    def get(self, request, pk: int, lang: str):
        storyboard = owned_storyboard(request, pk)
        translation = selectors.find(storyboard=storyboard, language=lang)
        return Response(selectors.translation_json(storyboard=storyboard, translation=translation))

    @refuses(TranslationRefused)
    @extend_schema(
        request=TranslationWriteSerializer,
        responses=OpenApiTypes.OBJECT,
        summary="Set a translation's lines (creates it)",
    )
    def put(self, request, pk: int, lang: str):
        storyboard = owned_storyboard(request, pk)
        serializer = TranslationWriteSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        translation = services.save_translation(
            storyboard=storyboard, language=lang, **serializer.validated_data
        )
        return Response(selectors.translation_json(storyboard=storyboard, translation=translation))

    @refuses(NoSuchTranslation)
    @extend_schema(responses={204: None}, summary="Delete a translation")
    def delete(self, request, pk: int, lang: str):
        services.delete_translation(storyboard=owned_storyboard(request, pk), language=lang)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TranslationDraftView(APIView):
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "draft"

    @refuses(NoTranslator, TranslatorFailed, TranslationRefused, Limit.DRAFTS)
    @extend_schema(
        request=None,
        responses=inline_serializer("TranslationDraft", {"notice": serializers.CharField()}),
        summary="Draft the missing lines with the chat model (TRANSLATOR=openai)",
    )
    def post(self, request, pk: int, lang: str):
        storyboard = owned_storyboard(request, pk)
        translation, notice = services.draft_translation(
            storyboard=storyboard, language=lang, user=request.user
        )
        body = selectors.translation_json(storyboard=storyboard, translation=translation)
        return Response(body | {"notice": notice})
