"""Renders delivered before art was kept on the comic become its kept art.

Each delivered or approved job panel's art hash is computed from what the
job drew it from (its spec, the job's cast and style), the panel row learns
it, and a KeptArt row points at the same image file (no copy), so comics
made before this change read and export their delivered panels, and a new
Generate does not charge for them again.
"""

from django.db import migrations

SHOWN = ("delivered", "approved")


def keep_delivered(apps, schema_editor):
    from mangagen.storyboards.hashing import art_hash

    JobPanel = apps.get_model("mangagen", "JobPanel")
    KeptArt = apps.get_model("mangagen", "KeptArt")
    shown = (
        JobPanel.objects.filter(state__in=SHOWN, job__confirmed=True)
        .exclude(image="")
        .select_related("job")
        .order_by("delivered_at", "pk")
    )
    for panel in shown.iterator():
        if not panel.art_hash:
            spec = panel.spec
            panel.art_hash = art_hash(
                style=panel.job.style,
                description=spec.get("description", ""),
                shot=spec.get("shot", "medium"),
                characters=list(spec.get("characters", [])),
                character_descriptions=panel.job.cast or {},
            )
            panel.save(update_fields=["art_hash"])
        if panel.image.name.startswith("renders/kept/"):
            continue  # already a kept take, shown in a later job
        if KeptArt.objects.filter(source=panel, attempt=panel.attempts).exists():
            continue
        KeptArt.objects.create(
            storyboard_id=panel.job.storyboard_id,
            art_hash=panel.art_hash,
            image=panel.image.name,
            faces=panel.faces or {},
            source=panel,
            attempt=panel.attempts,
            chosen_at=panel.delivered_at or panel.rendered_at or panel.job.created_at,
        )


class Migration(migrations.Migration):
    dependencies = [("mangagen", "0006_payments_crosschecks")]

    operations = [migrations.RunPython(keep_delivered, migrations.RunPython.noop)]
