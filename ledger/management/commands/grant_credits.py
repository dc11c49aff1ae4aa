"""`manage.py grant_credits <username> <amount> --reason "..."`: an audited grant."""

import uuid

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from ledger import errors, services
from ledger.models import Transfer

# Marks the journal line as an operator's (mangagen/kernel/credit_history.py hides its words).
REASON_PREFIX = "manage.py grant_credits: "


class Command(BaseCommand):
    help = "Grant credits to a user through the ledger (an audited adjustment)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("amount", type=int)
        parser.add_argument("--reason", required=True, help="Why; kept in the journal.")
        parser.add_argument(
            "--key",
            help="Idempotency key; repeating a command with the same key grants once.",
        )

    def handle(self, *args, username, amount, reason, key=None, **options):
        User = get_user_model()
        try:
            user = User.objects.get(username=username)
        except User.DoesNotExist as exc:
            raise CommandError(f"No user named {username!r}.") from exc
        if not reason.strip():
            raise CommandError("--reason must say why.")
        room = Transfer._meta.get_field("reason").max_length - len(REASON_PREFIX)
        if len(reason) > room:
            raise CommandError(f"--reason is too long: at most {room} characters.")
        account = services.account_for(user)
        try:
            transfer = services.grant(
                account=account,
                amount=amount,
                key=key or f"cli-grant:{uuid.uuid4()}",
                reason=REASON_PREFIX + reason,
            )
        except errors.LedgerError as exc:
            raise CommandError(str(exc)) from exc
        account.refresh_from_db()
        self.stdout.write(
            self.style.SUCCESS(
                f"Granted {transfer.amount} credit(s) to {username} (transfer #{transfer.pk}); "
                f"available now {account.available}."
            )
        )
