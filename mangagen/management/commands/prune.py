"""`manage.py prune`: let go of records older than RETENTION_DAYS now (beat does it daily)."""

from django.core.management.base import BaseCommand

from mangagen.orchestration import pruning as retention


class Command(BaseCommand):
    help = "Prune event logs of long-ended jobs and fold old declined speculations into counts."

    def handle(self, *args, **options):
        self.stdout.write(f"Pruning what is older than {retention.cutoff():%Y-%m-%d %H:%M} UTC.")
        for pruner, count in retention.prune().items():
            self.stdout.write(self.style.SUCCESS(f"  {pruner}: {count}"))
