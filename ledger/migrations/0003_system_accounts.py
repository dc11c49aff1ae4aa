"""The operator's system accounts exist from the start."""

from django.db import migrations

CODES = ["grants", "purchases", "revenue", "refunds"]


def create(apps, schema_editor):
    Account = apps.get_model("ledger", "Account")
    for code in CODES:
        Account.objects.get_or_create(code=code, defaults={"kind": "system"})


class Migration(migrations.Migration):
    dependencies = [("ledger", "0002_append_only_journal")]

    operations = [migrations.RunPython(create, migrations.RunPython.noop)]
