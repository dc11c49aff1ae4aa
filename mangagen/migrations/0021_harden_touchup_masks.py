"""Touch-up masks move into their job's folder (issue #45, item 3), and their sizes are
kept for PICTURE_BYTES_PER_PERSON.

They were stored under renders/touchups/<job>/, which neither the ended-job prune
(it walks renders/<job>/) nor a comic's deletion visited: they outlived everything.
Each mask a row names is moved to renders/<job>/touchup-<panel>-<token>.png and its
size kept; one whose file is gone keeps no name. What is left under
renders/touchups/ then belongs to no row (its comic was deleted) and goes.
"""

import secrets

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import migrations, models

OLD_ROOT = "renders/touchups"


def move_masks(apps, schema_editor):
    TouchUp = apps.get_model("mangagen", "TouchUp")
    old = TouchUp.objects.filter(mask__startswith=f"{OLD_ROOT}/").select_related("attempt")
    for touch in old.iterator():
        name = touch.mask.name
        try:
            with default_storage.open(name, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            TouchUp.objects.filter(pk=touch.pk).update(mask="", mask_bytes=0)
            continue
        attempt = touch.attempt
        token = secrets.token_hex(8)
        new = f"renders/{attempt.job_id}/touchup-{attempt.index:02d}-{token}.png"
        new = default_storage.save(new, ContentFile(data))
        TouchUp.objects.filter(pk=touch.pk).update(mask=new, mask_bytes=len(data))
        default_storage.delete(name)
    _delete_folder(OLD_ROOT)


def _delete_folder(prefix: str) -> None:
    """Every file under `prefix`, however deep, and (on a disk) the folders."""
    try:
        folders, files = default_storage.listdir(prefix)
    except FileNotFoundError:
        return
    for name in files:
        default_storage.delete(f"{prefix}/{name}")
    for folder in folders:
        _delete_folder(f"{prefix}/{folder}")
    if hasattr(default_storage, "path"):
        try:
            import os

            os.rmdir(default_storage.path(prefix))
        except (OSError, NotImplementedError):
            pass


class Migration(migrations.Migration):
    dependencies = [
        ("mangagen", "0020_judge_check"),
    ]

    operations = [
        migrations.AddField(
            model_name="touchup",
            name="mask_bytes",
            field=models.PositiveIntegerField(
                default=0, help_text="The stored mask's size: PICTURE_BYTES_PER_PERSON counts it."
            ),
        ),
        migrations.RunPython(move_masks, migrations.RunPython.noop),
    ]
