"""System accounts keep their balance in shard rows; their own row holds zero.

Moves each system account's cached balance into its shard 0. The CHECK that
keeps it there comes in 0006: PostgreSQL refuses to alter a table with
deferred foreign-key checks still pending from this migration's inserts.
"""

import django.db.models.deletion
from django.db import migrations, models


def move_balances_into_shards(apps, schema_editor):
    Account = apps.get_model("ledger", "Account")
    BalanceShard = apps.get_model("ledger", "BalanceShard")
    for account in Account.objects.filter(kind="system"):
        BalanceShard.objects.create(account=account, shard=0, available=account.available)
    Account.objects.filter(kind="system").update(available=0, held=0)


def move_balances_back(apps, schema_editor):
    Account = apps.get_model("ledger", "Account")
    BalanceShard = apps.get_model("ledger", "BalanceShard")
    for account in Account.objects.filter(kind="system"):
        total = sum(s.available for s in BalanceShard.objects.filter(account=account))
        Account.objects.filter(pk=account.pk).update(available=total)
    BalanceShard.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("ledger", "0004_account_flags")]

    operations = [
        migrations.CreateModel(
            name="BalanceShard",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("shard", models.PositiveSmallIntegerField()),
                ("available", models.BigIntegerField(default=0)),
                ("account", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="shards", to="ledger.account")),
            ],
            options={"ordering": ["account", "shard"]},
        ),
        migrations.AddConstraint(
            model_name="balanceshard",
            constraint=models.UniqueConstraint(fields=("account", "shard"), name="ledger_shard_once"),
        ),
        migrations.RunPython(move_balances_into_shards, move_balances_back),
    ]
