"""JSON in and out for storyboards (docs/api.md, "Storyboards"), with every limit."""

from __future__ import annotations

import re

from django.utils.translation import gettext
from rest_framework import serializers

from mangagen.characters.selectors import sheets_json
from mangagen.drafting.rules import find_names
from mangagen.lettering import languages, one_line
from mangagen.places.selectors import as_json as place_json

from . import limits
from .models import (
    BalloonStyle,
    PageFormat,
    PageTemplate,
    Position,
    ReadingDirection,
    Shot,
    Storyboard,
    Style,
)

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
        is_empty, data = self.validate_empty_values(data)  # null where allowed, absent
        if is_empty:
            return data
        item = type(self)(data=data)
        item.is_valid(raise_exception=True)
        return item.validated_data


def fraction(**kwargs) -> serializers.FloatField:
    """A coordinate as a fraction 0–1 of the panel (from its top left)."""
    return serializers.FloatField(min_value=0, max_value=1, **kwargs)


class PointSerializer(WholeItem):
    x = fraction()
    y = fraction()


class BalloonPlaceSerializer(WholeItem):
    x = fraction(help_text="The balloon's centre, a fraction of the panel's width.")
    y = fraction(help_text="The balloon's centre, a fraction of the panel's height.")
    tail = PointSerializer(
        required=False, allow_null=True, help_text="The point the tail aims at (optional)."
    )


class DialogueLineSerializer(WholeItem):
    speaker = OneLineField(max_length=limits.MAX_NAME, allow_blank=True, default="")
    text = OneLineField(max_length=limits.MAX_DIALOGUE_TEXT)
    style = serializers.ChoiceField(
        choices=BalloonStyle.choices,
        default=BalloonStyle.SPEECH,
        help_text="How its balloon is drawn: speech, thought, shout or whisper.",
    )
    place = BalloonPlaceSerializer(
        allow_null=True,
        default=None,
        help_text='null: placed by the lettering; {"x", "y", "tail"?}: where the person put it.',
    )


class SoundEffectSerializer(WholeItem):
    text = OneLineField(max_length=limits.MAX_SFX_TEXT)
    x = fraction(help_text="Its centre, a fraction of the panel's width.")
    y = fraction(help_text="Its centre, a fraction of the panel's height.")
    size = serializers.FloatField(
        min_value=limits.MIN_SFX_SIZE,
        max_value=limits.MAX_SFX_SIZE,
        default=limits.DEFAULT_SFX_SIZE,
        help_text="The height of its letters, a fraction of the panel's shorter side.",
    )
    angle = serializers.FloatField(
        min_value=-180, max_value=180, default=0, help_text="Degrees, counter-clockwise."
    )


class OutfitSerializer(WholeItem):
    name = OneLineField(max_length=limits.MAX_NAME)
    description = serializers.CharField(
        max_length=limits.MAX_CHARACTER_DESCRIPTION, allow_blank=True, default=""
    )


class CharacterSerializer(WholeItem):
    name = OneLineField(max_length=limits.MAX_NAME)
    description = serializers.CharField(
        max_length=limits.MAX_CHARACTER_DESCRIPTION, allow_blank=True, default=""
    )
    outfits = serializers.ListField(
        child=OutfitSerializer(),
        max_length=limits.MAX_OUTFITS,
        default=list,
        help_text="Named outfits (a description each); a panel says which one is worn.",
    )

    def validate_outfits(self, outfits):
        return unique_names(
            outfits, what=gettext("Two outfits are named %(name)r; names must differ.")
        )


class PlaceSerializer(WholeItem):
    name = OneLineField(max_length=limits.MAX_NAME)
    description = serializers.CharField(
        max_length=limits.MAX_PLACE_DESCRIPTION, allow_blank=True, default=""
    )


def unique_names(items: list[dict], *, what: str) -> list[dict]:
    """Names stripped, and different ignoring case (400 otherwise, saying `what` with
    %(name)s filled)."""
    seen = set()
    for item in items:
        item["name"] = item["name"].strip()
        key = item["name"].casefold()
        if key in seen:
            raise serializers.ValidationError(what % {"name": item["name"]})
        seen.add(key)
    return items


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
    sfx = serializers.ListField(
        child=SoundEffectSerializer(),
        max_length=limits.MAX_SFX_PER_PANEL,
        default=list,
        help_text="Sound effects lettered into the art (large, outlined).",
    )
    place = OneLineField(
        max_length=limits.MAX_NAME,
        allow_blank=True,
        default="",
        help_text="The name of one of the comic's places, or empty.",
    )
    outfits = serializers.DictField(
        child=OneLineField(max_length=limits.MAX_NAME),
        default=dict,
        help_text='{"<character present>": "<one of their outfits>"}',
    )
    blocking = serializers.DictField(
        child=serializers.ChoiceField(choices=Position.choices),
        default=dict,
        help_text='{"<character present>": "left" | "center" | "right"}',
    )
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
            raise serializers.ValidationError(gettext("Keys are the first panel index of a page."))
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
    places = serializers.ListField(
        child=PlaceSerializer(),
        max_length=limits.MAX_PLACES,
        help_text="Where the panels happen; a place keeping its name keeps its picture.",
    )
    panels = serializers.ListField(child=PanelSerializer(), max_length=limits.MAX_PANELS)
    layout = LayoutSerializer(required=False)

    def validate_language(self, language):
        code = languages.normalise(language)
        if code is None:
            raise serializers.ValidationError(
                gettext("Not a language the lettering can set; use one of %(codes)s.")
                % {"codes": ", ".join(languages.CODES)}
            )
        # The related name: a translation may not be in the original's own language.
        if self.instance is not None and self.instance.translations.filter(language=code).exists():
            raise serializers.ValidationError(
                gettext("This comic has a %(language)s translation; delete it first.")
                % {"language": languages.display_name(code)}
            )
        return code

    def validate_characters(self, characters):
        return unique_names(
            characters, what=gettext("Two characters are named %(name)r; names must differ.")
        )

    def validate_places(self, places):
        return unique_names(
            places, what=gettext("Two places are named %(name)r; names must differ.")
        )

    def validate(self, attrs):
        if "characters" in attrs:
            wardrobe = {c["name"]: {o["name"] for o in c["outfits"]} for c in attrs["characters"]}
        elif self.instance is not None:
            wardrobe = {
                c.name: {o["name"] for o in c.outfits} for c in self.instance.characters.all()
            }
        else:
            wardrobe = {}
        if "places" in attrs:
            places = {p["name"] for p in attrs["places"]}
        elif self.instance is not None:
            places = set(self.instance.places.values_list("name", flat=True))
        else:
            places = set()
        for number, panel in enumerate(attrs.get("panels", []), start=1):
            problem = panel_problem(panel, number=number, wardrobe=wardrobe, places=places)
            if problem:
                raise serializers.ValidationError({"panels": problem})
        return attrs


def panel_problem(
    panel: dict, *, number: int, wardrobe: dict[str, set[str]], places: set[str]
) -> str:
    """What is wrong with panel `number`'s names ("Panel 3 names 'Aiko', who …"), or ""
    when each names what the comic has."""
    unknown = [n for n in panel["characters"] if n not in wardrobe]
    unknown += [d["speaker"] for d in panel["dialogue"] if d["speaker"] not in (*wardrobe, "")]
    if unknown:
        return gettext(
            "Panel %(number)s names %(name)r, who is not among the characters. "
            "Add the character first, or remove the name."
        ) % {"number": number, "name": unknown[0]}
    if panel["place"] and panel["place"] not in places:
        return gettext(
            "Panel %(number)s is set in %(place)r, which is not among the places. Add it first."
        ) % {"number": number, "place": panel["place"]}
    wears = gettext(
        "Panel %(number)s says where %(name)r wears an outfit, who is not in the panel."
    )
    stands = gettext("Panel %(number)s says where %(name)r stands, who is not in the panel.")
    for message, chosen in ((wears, panel["outfits"]), (stands, panel["blocking"])):
        absent = [n for n in chosen if n not in panel["characters"]]
        if absent:
            return message % {"number": number, "name": absent[0]}
    for name, outfit in panel["outfits"].items():
        if outfit not in wardrobe[name]:
            return gettext(
                "Panel %(number)s dresses %(name)r in %(outfit)r, "
                "which is not one of their outfits."
            ) % {"number": number, "name": name, "outfit": outfit}
    return ""


class StoryboardSerializer(serializers.ModelSerializer):
    characters = CharacterSerializer(many=True, read_only=True)
    places = serializers.SerializerMethodField(
        help_text='[{"name", "description", "picture": null | {"image_url", "hash"}}]'
    )
    panels = PanelSerializer(many=True, read_only=True)
    series = serializers.SerializerMethodField(
        help_text='{"id", "title", "chapter"} for a chapter of a series; null otherwise.'
    )
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
            "places",
            "panels",
            "version",
            "complete",
            "layout",
            "suggested_characters",
            "series",
            "created_at",
            "updated_at",
        ]

    def to_representation(self, instance):
        data = super().to_representation(instance)
        # Each character's sheet (docs/api.md, "Character sheets"), one query a storyboard.
        sheets = sheets_json(storyboard=instance)
        for character in data["characters"]:
            character["sheet"] = sheets.get((character["name"], ""))
            for outfit in character["outfits"]:
                outfit["sheet"] = sheets.get((character["name"], outfit["name"]))
        return data

    def get_places(self, obj) -> list[dict]:
        # Prefetched by the list and detail views (one query for every comic listed).
        return [place_json(place) for place in sorted(obj.places.all(), key=lambda p: p.position)]

    def get_series(self, obj) -> dict | None:
        if obj.series_id is None:
            return None
        return {"id": obj.series_id, "title": obj.series.title, "chapter": obj.chapter}

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
