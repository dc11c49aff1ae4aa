"""JSON in and out for storyboards (docs/api.md, "Storyboards"), with every limit."""

from __future__ import annotations

import re

from rest_framework import serializers

from mangagen.characters.selectors import sheets_json
from mangagen.drafting.rules import find_names
from mangagen.lettering import languages, one_line

from . import limits
from .models import PageFormat, PageTemplate, ReadingDirection, Shot, Storyboard, Style

# A page's key in `templates`: its first panel's index as the layout writes it.
PANEL_INDEX = re.compile(r"[1-9][0-9]*")


class OneLineField(serializers.CharField):
    """Text that is lettered or shown on one line (a title, a name, a balloon):
    line breaks, tabs and control characters become single spaces, as the
    lettering would draw them."""

    def to_internal_value(self, data):
        text = one_line(super().to_internal_value(data))
        if not text and not self.allow_blank:
            self.fail("blank")
        return text


class WholeItem(serializers.Serializer):
    """An item of a list, validated whole even inside a PATCH: `partial` says
    which top-level fields a request replaces, never that an item may lack a
    field (DRF passes it down to every nested serializer)."""

    def run_validation(self, data=serializers.empty):
        if self.parent is None:  # the item's own root, below: validate as usual
            return super().run_validation(data)
        item = type(self)(data=data)
        item.is_valid(raise_exception=True)
        return item.validated_data


class DialogueLineSerializer(WholeItem):
    speaker = OneLineField(max_length=limits.MAX_NAME, allow_blank=True, default="")
    text = OneLineField(max_length=limits.MAX_DIALOGUE_TEXT)


class CharacterSerializer(WholeItem):
    name = OneLineField(max_length=limits.MAX_NAME)
    description = serializers.CharField(
        max_length=limits.MAX_CHARACTER_DESCRIPTION, allow_blank=True, default=""
    )


class PanelSerializer(WholeItem):
    index = serializers.IntegerField(required=False, help_text="Ignored on input: order counts.")
    description = serializers.CharField(
        max_length=limits.MAX_PANEL_DESCRIPTION, allow_blank=True, default=""
    )
    shot = serializers.ChoiceField(choices=Shot.choices, default=Shot.MEDIUM)
    characters = serializers.ListField(
        child=OneLineField(max_length=limits.MAX_NAME),
        max_length=limits.MAX_CHARACTERS,
        default=list,
    )
    dialogue = serializers.ListField(
        child=DialogueLineSerializer(), max_length=limits.MAX_DIALOGUE_LINES, default=list
    )
    caption = OneLineField(max_length=limits.MAX_CAPTION, allow_blank=True, default="")
    art_hash = serializers.CharField(read_only=True, help_text="What the picture depends on.")
    content_hash = serializers.CharField(read_only=True)


class LayoutSerializer(serializers.Serializer):
    """How the kept panels are set on pages; each key given replaces what was there."""

    direction = serializers.ChoiceField(
        choices=ReadingDirection.choices, required=False, help_text="rtl or ltr."
    )
    format = serializers.ChoiceField(choices=PageFormat.choices, required=False)
    breaks = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=limits.MAX_PANELS),
        max_length=limits.MAX_PANELS,
        required=False,
        help_text="The panel indices that start a page; [] lets the layout engine choose.",
    )
    templates = serializers.DictField(
        child=serializers.ChoiceField(choices=PageTemplate.choices),
        required=False,
        help_text='{"<first panel index of a page>": "<template>"}',
    )

    def validate_breaks(self, breaks):
        return sorted(set(breaks))

    def validate_templates(self, templates):
        if len(templates) > limits.MAX_PANELS or not all(
            PANEL_INDEX.fullmatch(k) for k in templates
        ):
            raise serializers.ValidationError("Keys are the first panel index of a page.")
        return templates


class StoryboardWriteSerializer(serializers.Serializer):
    """Validates a create or a PATCH; lists replace what was there."""

    title = OneLineField(max_length=limits.MAX_TITLE)
    story = serializers.CharField(
        max_length=limits.MAX_STORY, allow_blank=True, trim_whitespace=False, default=""
    )
    style = serializers.ChoiceField(choices=Style.choices, default=Style.MANGA)
    language = serializers.CharField(
        max_length=16, required=False, help_text="The original's language (`en`, `ja`, …)."
    )
    characters = serializers.ListField(
        child=CharacterSerializer(), max_length=limits.MAX_CHARACTERS
    )
    panels = serializers.ListField(child=PanelSerializer(), max_length=limits.MAX_PANELS)
    layout = LayoutSerializer(required=False)

    def validate_language(self, language):
        code = languages.normalise(language)
        if code is None:
            raise serializers.ValidationError(
                f"Not a language the lettering can set; use one of {', '.join(languages.CODES)}."
            )
        # The related name: a translation may not be in the original's own language.
        if self.instance is not None and self.instance.translations.filter(language=code).exists():
            raise serializers.ValidationError(
                f"This comic has a {languages.name(code)} translation; delete it first."
            )
        return code

    def validate_characters(self, characters):
        seen = set()
        for character in characters:
            character["name"] = character["name"].strip()
            key = character["name"].casefold()
            if key in seen:
                raise serializers.ValidationError(
                    f"Two characters are named {character['name']!r}; names must differ."
                )
            seen.add(key)
        return characters

    def validate(self, attrs):
        if "characters" in attrs:
            names = {c["name"] for c in attrs["characters"]}
        elif self.instance is not None:
            names = set(self.instance.characters.values_list("name", flat=True))
        else:
            names = set()
        for number, panel in enumerate(attrs.get("panels", []), start=1):
            # Partial updates skip defaults, so a panel may lack these keys.
            unknown = [n for n in panel.get("characters", []) if n not in names]
            unknown += [
                d.get("speaker")
                for d in panel.get("dialogue", [])
                if d.get("speaker") and d["speaker"] not in names
            ]
            if unknown:
                raise serializers.ValidationError(
                    {
                        "panels": f"Panel {number} names {unknown[0]!r}, who is not among the "
                        "characters. Add the character first, or remove the name."
                    }
                )
        return attrs


class StoryboardSerializer(serializers.ModelSerializer):
    characters = CharacterSerializer(many=True, read_only=True)
    panels = PanelSerializer(many=True, read_only=True)
    complete = serializers.BooleanField(read_only=True)
    layout = serializers.SerializerMethodField(help_text="Pages: direction, format, breaks.")
    suggested_characters = serializers.SerializerMethodField(
        help_text="Names found in the story that are not characters yet."
    )

    class Meta:
        model = Storyboard
        fields = [
            "id",
            "title",
            "story",
            "style",
            "language",
            "characters",
            "panels",
            "version",
            "complete",
            "layout",
            "suggested_characters",
            "created_at",
            "updated_at",
        ]

    def to_representation(self, instance):
        data = super().to_representation(instance)
        # Each character's sheet (docs/api.md, "Character sheets"), one query a storyboard.
        sheets = sheets_json(storyboard=instance)
        for character in data["characters"]:
            character["sheet"] = sheets.get(character["name"])
        return data

    def get_layout(self, obj) -> dict:
        return {
            "direction": obj.reading_direction,
            "format": obj.page_format,
            "breaks": obj.page_breaks,
            "templates": obj.page_templates,
        }

    def get_suggested_characters(self, obj) -> list[str]:
        taken = {c.name.casefold() for c in obj.characters.all()}
        found = [n for n in find_names(obj.story) if n.casefold() not in taken]
        return found[: limits.MAX_CHARACTERS]
