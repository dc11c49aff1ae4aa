"""`manage.py runstack`: migrate, make the demo logins, then run every Procfile process.

The processes (daphne, the `render` and `speculative` Celery workers, and one
beat) run under honcho, exactly as the Procfile describes them for production.
Every process writes its metrics to one folder (PROMETHEUS_MULTIPROC_DIR,
emptied here) that /metrics sums. Both workers take both queues on threads:
a render mostly waits (for a GPU container, for the provider's answer), so
the provider's capacity, kept in the GPU pool with confirmed work first, is
the limit, not the process count.
"""

import os
import sys
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from honcho.environ import parse_procfile
from honcho.manager import Manager

from ledger import services as ledger

DEMO_ADMIN = ("admin", "admin-pass-1234")


class Command(BaseCommand):
    help = "Migrate, create the demo logins, and run daphne, the Celery workers and beat."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8000)))
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--no-demo", action="store_true", help="Skip the demo logins.")

    def handle(self, *args, port, host, no_demo, **options):
        Path(settings.BASE_DIR, "var").mkdir(exist_ok=True)
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write(self.style.SUCCESS("Database migrated."))
        if settings.DEMO_MODE and not no_demo:
            self._demo_logins()
        elif not no_demo:
            self.stdout.write("No demo logins: DEMO_MODE is off (DEBUG off, or not loopback).")
        procfile = Path(settings.BASE_DIR, "Procfile").read_text()
        # The Procfile names bare executables (daphne, python): the ones of the
        # interpreter running this command (its virtualenv) come first on PATH.
        bin_dir = str(Path(sys.executable).parent)
        path = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
        env = {
            **os.environ,
            "PATH": path,
            "PORT": str(port),
            "HOST": host,
            "PYTHONUNBUFFERED": "1",
            "PROMETHEUS_MULTIPROC_DIR": str(self._metrics_dir(port)),
        }
        manager = Manager()
        for name, command in parse_procfile(procfile).processes.items():
            manager.add_process(name, command, env=env, cwd=str(settings.BASE_DIR))
        self.stdout.write(
            self.style.SUCCESS(f"Starting Mangagen on http://{host}:{port}/ (Ctrl-C stops it).")
        )
        manager.loop()
        sys.exit(manager.returncode)

    def _metrics_dir(self, port: int) -> Path:
        """The folder where every process started here writes its metrics, emptied now.

        It is emptied only here, as every process that writes to it starts: the
        counters of a process that dies and is restarted stay in it (bin/web and
        bin/keep-running mark it dead), since a counter's sum must never go down.
        """
        folder = Path(
            os.environ.get("PROMETHEUS_MULTIPROC_DIR")
            or Path(settings.BASE_DIR, "var", "metrics", str(port))
        )
        folder.mkdir(parents=True, exist_ok=True)
        for leftover in folder.glob("*.db"):  # prometheus_client's files, nothing else
            leftover.unlink()
        return folder

    def _demo_logins(self) -> None:
        User = get_user_model()
        username, password = settings.DEMO_USERNAME, settings.DEMO_PASSWORD
        demo, created = User.objects.get_or_create(username=username)
        if created:
            demo.set_password(password)
            demo.save()
        ledger.grant(
            account=ledger.account_for(demo),
            amount=settings.DEMO_CREDITS,
            key=f"demo-welcome:{demo.pk}",
            reason="Demo credits for the local run command",
        )
        admin, created = User.objects.get_or_create(
            username=DEMO_ADMIN[0], defaults={"is_staff": True, "is_superuser": True}
        )
        if created:
            admin.set_password(DEMO_ADMIN[1])
            admin.save()
        if not admin.is_superuser:
            raise CommandError(f"A non-admin user named {DEMO_ADMIN[0]!r} already exists.")
        self.stdout.write(
            "\n".join(
                [
                    "",
                    "  Demo login:  "
                    + f"{username} / {password}"
                    + f"  ({ledger.account_for(demo).available} credits)",
                    "  Admin login: " + f"{DEMO_ADMIN[0]} / {DEMO_ADMIN[1]}  (/admin/)",
                    "",
                ]
            )
        )
