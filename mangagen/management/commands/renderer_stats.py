"""`manage.py renderer_stats`: what was observed of the configured provider, one JSON line."""

import json

from django.core.management.base import BaseCommand

from mangagen.renderers import get_renderer, observed


class Command(BaseCommand):
    help = (
        "Print what was observed of the configured renderer (RENDERER) as one JSON line: "
        "its cold start and render time (medians of recent renders; the settings until "
        "there are enough), which the GPU pool predicts finish times from."
    )

    def handle(self, *args, **options):
        renderer = get_renderer()
        stats = observed.observed(renderer=renderer.name, model=renderer.model)
        self.stdout.write(json.dumps(stats.line()))
