"""`{% balloon_styles %}`: the balloon styles, with their labels in the interface's
language, as the data every screen that lists them reads (a json_script element whose
id is `balloon-styles`): one list, defined in mangagen/lettering/styles.py."""

from django import template
from django.utils.html import json_script

from mangagen.lettering.styles import style_choices

register = template.Library()


@register.simple_tag
def balloon_styles() -> str:
    return json_script(style_choices(), "balloon-styles")
