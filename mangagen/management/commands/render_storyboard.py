"""`manage.py render_storyboard <id> <folder>`: render every panel to PNG files."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from mangagen.renderers import PanelSpec, RenderError, get_renderer
from mangagen.storyboards.models import Storyboard


class Command(BaseCommand):
    help = "Render a storyboard's panels to a folder, to look at the renderer's output."

    def add_arguments(self, parser):
        parser.add_argument("storyboard", type=int)
        parser.add_argument("folder", type=Path)
        parser.add_argument(
            "--renderer",
            help="Override RENDERER (procedural, openai, replicate, runpod, comfyui, a1111).",
        )
        parser.add_argument("--seed", type=int, help="One seed for every panel.")
        parser.add_argument(
            "--instant",
            action="store_true",
            help="Procedural only: skip the simulated cold start and render time.",
        )

    def handle(self, *args, storyboard, folder, renderer=None, seed=None, instant=False, **opts):
        try:
            board = Storyboard.objects.prefetch_related("characters", "panels").get(pk=storyboard)
        except Storyboard.DoesNotExist as exc:
            raise CommandError(f"No storyboard #{storyboard}.") from exc
        panels = list(board.panels.all())
        if not panels:
            raise CommandError("That storyboard has no panels yet; draft it first.")
        engine = get_renderer(renderer)
        if instant and hasattr(engine, "render_seconds"):
            engine.cold_start_seconds = engine.render_seconds = 0
        folder.mkdir(parents=True, exist_ok=True)
        cast = {c.name: c.description for c in board.characters.all()}
        for panel in panels:
            spec = PanelSpec.from_panel(panel, style=board.style, cast=cast)
            try:
                result = engine.render(spec, seed if seed is not None else spec.default_seed())
            except RenderError as exc:
                raise CommandError(f"Panel {panel.index}: {exc}") from exc
            extension = "png" if result.content_type == "image/png" else "img"
            path = folder / f"panel-{panel.index:02d}.{extension}"
            path.write_bytes(result.image)
            cold = " (cold start)" if result.cold else ""
            self.stdout.write(
                f"{path}  {result.width}×{result.height}  {result.seconds:.1f}s{cold}"
            )
        self.stdout.write(self.style.SUCCESS(f"{len(panels)} panel(s) in {folder}"))
