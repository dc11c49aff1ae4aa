"""A Checkout Session is recorded before Stripe is asked: `session_id` may be empty for
a while, and each record has its own `reference` (sent to Stripe in the metadata)."""

import uuid

from django.db import migrations, models


def give_references(apps, schema_editor):
    CheckoutSession = apps.get_model("mangagen", "CheckoutSession")
    for record in CheckoutSession.objects.filter(reference__isnull=True).only("pk"):
        CheckoutSession.objects.filter(pk=record.pk).update(reference=uuid.uuid4())


class Migration(migrations.Migration):
    dependencies = [("mangagen", "0010_page_templates_help_text")]

    operations = [
        migrations.AlterField(
            model_name="checkoutsession",
            name="session_id",
            field=models.CharField(blank=True, max_length=255, null=True, unique=True),
        ),
        migrations.AddField(
            model_name="checkoutsession",
            name="reference",
            field=models.UUIDField(editable=False, null=True),
        ),
        migrations.RunPython(give_references, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="checkoutsession",
            name="reference",
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True),
        ),
    ]
