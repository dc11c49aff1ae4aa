"""JSON in for series and chapters (docs/api.md, "Series, cast and places")."""

from rest_framework import serializers

from mangagen.storyboards import limits
from mangagen.storyboards.models import Style
from mangagen.storyboards.serializers import OneLineField


class SeriesWriteSerializer(serializers.Serializer):
    title = OneLineField(max_length=limits.MAX_TITLE)
    style = serializers.ChoiceField(
        choices=Style.choices, default=Style.MANGA, help_text="What each new chapter starts in."
    )


class ChapterWriteSerializer(serializers.Serializer):
    title = OneLineField(
        max_length=limits.MAX_TITLE,
        allow_blank=True,
        default="",
        help_text='Empty: "<series title> — Chapter <n>".',
    )
    story = serializers.CharField(
        max_length=limits.MAX_STORY, allow_blank=True, trim_whitespace=False, default=""
    )
