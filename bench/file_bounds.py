"""What one account can make the service hold and spend on files and drawing (#23 §2).

Runs the studio in this process on a fresh database (renders instant, files in
a temporary MEDIA_ROOT, the cache on the real Redis) and replays the hardening
issue's measurements as one person would, through the views:

- 300 dialogue edits of one kept panel, each followed by viewing the panel:
  the Redis bytes of the lettered-panel cache, beside what one entry per text
  (the old scheme) would hold for the same drawings;
- 40 title edits, each followed by viewing the pages: the bytes of page builds
  kept for the comic, beside the bytes built in all, and the CPU per build;
- 30 sheet uploads for one character: the pictures and bytes kept;
- edits and page views as fast as one thread goes, from the start of a
  minute: the CPU spent drawing before the drawing budget answers 429.

Not a test; run it with

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mangagen REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/file_bounds.py
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.stack import fresh_database_url

# One page: an establishing shot, then Aiko (who speaks) and Kenji side by side.
PANELS = [
    {"description": "A station in the rain.", "shot": "establishing", "caption": "Platform 9."},
    {
        "description": "Aiko looks up.",
        "shot": "medium",
        "characters": ["Aiko"],
        "dialogue": [{"speaker": "Aiko", "text": "Late again."}],
    },
    {"description": "Kenji shrugs.", "shot": "medium", "characters": ["Kenji"]},
]


def setup_django() -> None:
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "mangagen.settings",
            "DEBUG": "on",
            "DATABASE_URL": fresh_database_url("bench_files"),
            "MEDIA_ROOT": tempfile.mkdtemp(prefix="mangagen-bench-files-"),
            "RENDER_COLD_START_SECONDS": "0",
            "RENDER_SECONDS": "0",
            "SPECULATION_LOOKAHEAD": "0",
            "GPU_POOL_PREFIX": f"bench:gpu:{uuid.uuid4()}",
            # Sheet writes count against Generate's rate; 30 uploads in a minute would
            # wait out THROTTLE_GENERATE, which bounds their rate, not what is kept.
            "THROTTLE_GENERATE": "1000/min",
        }
    )
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.CACHES["default"]["KEY_PREFIX"] = f"bench-files-{uuid.uuid4().hex[:8]}"
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.ALLOWED_HOSTS = ["testserver"]
    call_command("migrate", verbosity=0)
    from mangagen.jobs import dispatch, services

    # The worker's part, inline: each render runs as its task would, once queued.
    dispatch.send_render = lambda args, queue: services.perform_render(
        job_id=args[0], index=args[1], attempt=args[2]
    )
    dispatch.send_expire = lambda args, eta: None


def finished_comic(user):
    from mangagen.jobs import services
    from mangagen.jobs.models import JobState
    from tests.support import factories

    board = factories.storyboard(
        user, characters=[{"name": "Aiko"}, {"name": "Kenji"}], panels=PANELS
    )
    job, _ = services.generate(user=user, storyboard=board)
    while True:
        job.refresh_from_db()
        if job.state == JobState.COMPLETED:
            return board, job
        services.approve_panel(job=job, index=job.current_index)


def person(name: str):
    from django.contrib.auth import get_user_model
    from django.test import Client

    from tests.support import factories

    user = get_user_model().objects.create_user(username=name, password="bench-pass-1234")
    factories.funded_account(user, 100, key=f"bench-{name}")
    client = Client()
    client.force_login(user)
    return user, client


def lettered_cache(edits: int) -> None:
    import redis
    from django.conf import settings

    from mangagen.jobs import selectors
    from mangagen.storyboards import services as storyboards

    user, client = person("lettering")
    board, job = finished_comic(user)
    url = selectors.image_url(job.panels.get(index=2), job)
    sizes = []
    for n in range(edits):
        panels = [dict(p) for p in PANELS]
        panels[1]["dialogue"] = [{"speaker": "Aiko", "text": f"Who is there? ({n})"}]
        storyboards.update_storyboard(storyboard=board, panels=panels)
        response = client.get(url)
        assert response.status_code == 200, response.status_code
        sizes.append(len(response.content))
    r = redis.Redis.from_url(settings.REDIS_URL)
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    keys = [k for k in r.scan_iter(f"{prefix}:*") if b"lettered-panel" in k]
    held = sum(r.memory_usage(k) for k in keys)
    per_text = sum(sizes) + 2 * sizes[0]  # one entry per text: every drawing, plus two panels
    print(f"lettered-panel cache after {edits} dialogue edits, each viewed (one account):")
    print(f"  entries {len(keys)} (3 panels), Redis bytes {held:,} ({held / 1e6:.2f} MB)")
    print(
        f"  one entry per text would hold {per_text:,} bytes ({per_text / 1e6:.1f} MB): "
        f"{per_text / held:.0f}x this; a lettered panel is {sizes[-1]:,} bytes"
    )
    for key in r.scan_iter(f"{prefix}:*"):
        r.delete(key)


def page_builds(edits: int) -> None:
    from django.core.files.storage import default_storage

    from mangagen.storyboards import services as storyboards

    user, client = person("pages")
    board, _ = finished_comic(user)
    built_bytes, cpu = 0, []
    for n in range(edits):
        board = storyboards.update_storyboard(storyboard=board, title=f"Rooftops {n}")
        started = time.thread_time()
        pages = client.get(f"/api/storyboards/{board.pk}/pages/").json()["pages"]
        for page in pages:
            response = client.get(page["image_url"])
            assert response.status_code == 200, response.status_code
            built_bytes += len(b"".join(response.streaming_content))
        cpu.append(time.thread_time() - started)
    kept = folder_bytes(f"pages/{board.pk}")
    pdf = client.get(f"/api/storyboards/{board.pk}/export/?format=pdf")
    assert pdf.status_code == 200
    with_pdf = folder_bytes(f"pages/{board.pk}")
    versions = len(default_storage.listdir(f"pages/{board.pk}")[0])
    cpu.sort()
    print(f"page builds after {edits} title edits, each followed by viewing the pages:")
    print(
        f"  kept {kept:,} bytes in {versions} versions ({with_pdf:,} with this version's PDF); "
        f"built {built_bytes:,} in all: {built_bytes / kept:.0f}x what is kept"
    )
    print(
        f"  CPU per edit + view ({len(pages)} page): median {cpu[len(cpu) // 2]:.3f} s, "
        f"max {cpu[-1]:.3f} s"
    )


def folder_bytes(prefix: str) -> int:
    from django.core.files.storage import default_storage

    try:
        folders, files = default_storage.listdir(prefix)
    except FileNotFoundError:
        return 0
    total = sum(default_storage.size(f"{prefix}/{name}") for name in files)
    return total + sum(folder_bytes(f"{prefix}/{folder}") for folder in folders)


def sheet_uploads(uploads: int) -> None:
    from django.conf import settings
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
    from PIL import Image

    from mangagen.characters.models import CharacterSheet
    from tests.support import factories

    user, client = person("sheets")
    board = factories.storyboard(user, characters=[{"name": "Aiko"}], panels=PANELS[:1])
    sent = 0
    for n in range(uploads):
        buffer = io.BytesIO()
        Image.effect_noise((1024, 1024), 30 + n).convert("RGB").save(buffer, format="JPEG")
        sent += len(buffer.getvalue())
        image = SimpleUploadedFile("me.jpg", buffer.getvalue(), content_type="image/jpeg")
        response = client.put(
            f"/api/storyboards/{board.pk}/characters/Aiko/sheet/",
            data=encode_multipart(BOUNDARY, {"image": image}),
            content_type=MULTIPART_CONTENT,
        )
        assert response.status_code == 200, response.content
    files = folder_bytes(f"sheets/{board.pk}")
    count = len(CharacterSheet.objects.filter(storyboard=board).exclude(image=""))
    cap = settings.PICTURE_BYTES_PER_PERSON
    print(f"sheet uploads: {uploads} for one character ({sent:,} bytes sent):")
    print(
        f"  kept {count} pictures, {files:,} bytes; a person's pictures capped at {cap:,} bytes "
        f"(about {cap // (files // max(count, 1))} such pictures)"
    )


def drawing_budget() -> None:
    from django.conf import settings

    from mangagen.storyboards import services as storyboards

    user, client = person("drawing")
    board, _ = finished_comic(user)
    began = time.time()  # the budget is a rolling minute: a new person starts with all of it
    started, drawn, refused = time.thread_time(), 0, None
    while refused is None and time.time() - began < 60:
        board = storyboards.update_storyboard(storyboard=board, title=f"Loop {drawn}")
        pages = client.get(f"/api/storyboards/{board.pk}/pages/").json()["pages"]
        response = client.get(pages[0]["image_url"])
        if response.status_code == 429:
            refused = response
        else:
            drawn += 1
    spent = time.thread_time() - started
    budget = settings.DRAWING_CPU_SECONDS_PER_MINUTE
    print(f"drawing budget {budget:g} CPU s a minute, one person editing and viewing in a loop:")
    if refused is None:
        print(f"  {drawn} builds, {spent:.1f} CPU s (this thread): the minute ended first")
    else:
        print(
            f"  {drawn} builds, then 429 (Retry-After {refused['Retry-After']} s) after "
            f"{spent:.1f} CPU s of this thread (drawing and the rest): {spent / budget:.2f}x budget"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=300)
    parser.add_argument("--titles", type=int, default=40)
    parser.add_argument("--uploads", type=int, default=30)
    parser.add_argument("--no-budget", action="store_true", help="skip the minute-long run")
    args = parser.parse_args()
    setup_django()
    lettered_cache(args.edits)
    page_builds(args.titles)
    sheet_uploads(args.uploads)
    if not args.no_budget:
        drawing_budget()


if __name__ == "__main__":
    main()
