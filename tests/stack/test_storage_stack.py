"""Web and workers on different machines share nothing but the bucket (issue #28).

The web process (bin/web, daphne) and a render worker (Celery, as the Procfile
runs it) start with STORAGE_BACKEND=s3 against the local S3 server and each
with a MEDIA_ROOT of its own, empty. A person signs up, generates a comic, reads
its pages, downloads the PDF and uploads a sheet, all over HTTP; the worker's
renders are served by the web process from the bucket, and nothing is written
to either MEDIA_ROOT.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import requests
from PIL import Image

from tests.support.stack import ROOT, free_port, fresh_database_url, own_redis_url, stop
from tests.support.waiting import wait_for


def files_under(root: Path) -> list[str]:
    return sorted(str(path) for path in root.rglob("*") if path.is_file())


@pytest.fixture
def machines(tmp_path, s3_server):
    """The web process and a render worker as if on two machines: one database, one
    Redis, one bucket, and a MEDIA_ROOT each."""
    if not os.environ.get("REDIS_URL"):
        pytest.skip("needs REDIS_URL (make test starts an embedded Redis)")
    bucket = s3_server.new_bucket()
    port = free_port()
    common = {
        **os.environ,
        **s3_server.env(bucket),
        "DJANGO_SETTINGS_MODULE": "mangagen.settings",
        "DATABASE_URL": fresh_database_url("storage_stack"),
        "REDIS_URL": own_redis_url(),
        "DEBUG": "on",
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "SIGNUP_PER_ADDRESS_PER_HOUR": "1000",
        "RENDER_COLD_START_SECONDS": "0",
        "RENDER_SECONDS": "0.1",
        "RENDER_WIDTH": "320",
        "RENDER_HEIGHT": "240",
        "SPECULATION_ENABLED": "off",
        "SPECULATION_LOOKAHEAD": "0",
        "GPU_POOL_PREFIX": f"test:gpu:{uuid.uuid4()}",
        "PYTHONUNBUFFERED": "1",
        # bin/web starts the daphne next to this interpreter, as runstack does.
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    roots = {name: tmp_path / f"{name}-media" for name in ("web", "worker")}
    for root in roots.values():
        root.mkdir()
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--verbosity", "0"],
        cwd=ROOT,
        env=common,
        check=True,
        timeout=300,
    )
    subprocess.run(
        [sys.executable, "-m", "celery", "-A", "mangagen", "purge", "-f"],
        cwd=ROOT,
        env=common,
        check=True,
        capture_output=True,
        timeout=120,
    )
    commands = {
        "web": [sys.executable, "bin/web"],
        "worker": [
            sys.executable, "-m", "celery", "-A", "mangagen", "worker", "-Q", "render,speculative",
            "-P", "threads", "-c", "8", "-n", f"storage-{uuid.uuid4().hex[:8]}@%h",
            "--without-gossip", "--without-mingle", "--loglevel", "INFO",
        ],
    }  # fmt: skip
    started, logs = [], {name: tmp_path / f"{name}.log" for name in commands}
    try:
        for name, command in commands.items():
            with logs[name].open("w") as out:
                started.append(
                    subprocess.Popen(
                        command,
                        cwd=ROOT,
                        env={**common, "MEDIA_ROOT": str(roots[name])},
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
        base = f"http://127.0.0.1:{port}"
        wait_for(
            lambda: (
                _up(started, logs) and "ready." in logs["worker"].read_text() and _answers(base)
            ),
            timeout=90,
            every=0.2,
            what="the web process and the worker to start",
        )
        yield base, roots, s3_server, bucket
    finally:
        for process in started:
            stop(process)
        for name, log in logs.items():
            print(f"--- {name} log (end) ---\n{log.read_text()[-3000:]}")


def _up(started: list[subprocess.Popen], logs: dict[str, Path]) -> bool:
    for process, (name, log) in zip(started, logs.items(), strict=True):
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited:\n{log.read_text()[-3000:]}")
    return True


def _answers(base: str) -> bool:
    try:
        return requests.get(f"{base}/accounts/login/", timeout=2).status_code == 200
    except requests.ConnectionError:
        return False


def signed_up(base: str, username: str) -> requests.Session:
    """A browser-like session of a person who just signed up through the form."""
    session = requests.Session()
    session.get(f"{base}/accounts/signup/", timeout=10)
    answer = session.post(
        f"{base}/accounts/signup/",
        data={
            "username": username,
            "password1": "a-long-pass-123",
            "password2": "a-long-pass-123",
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        headers={"Referer": f"{base}/accounts/signup/"},
        allow_redirects=False,
        timeout=10,
    )
    assert answer.status_code == 302, answer.text[:500]
    return session


def test_sign_up_generate_pages_pdf_and_a_sheet_with_nothing_on_either_machines_disk(machines):
    base, roots, s3, bucket = machines
    web = signed_up(base, "storage-walker")
    csrf = {"X-CSRFToken": web.cookies["csrftoken"], "Referer": f"{base}/"}
    assert web.post(f"{base}/credits/demo/", headers=csrf, timeout=10).ok

    board = web.post(
        f"{base}/api/storyboards/",
        json={
            "title": "Two machines",
            "characters": [{"name": "Aiko", "description": "red scarf"}],
            "panels": [
                {"description": "Aiko on a rooftop.", "shot": "wide", "characters": ["Aiko"]},
                {
                    "description": "Aiko smiles.",
                    "shot": "close-up",
                    "characters": ["Aiko"],
                    "dialogue": [{"speaker": "Aiko", "text": "Same bucket!"}],
                },
            ],
        },
        headers=csrf,
        timeout=10,
    ).json()
    generated = web.post(
        f"{base}/api/storyboards/{board['id']}/generate/", headers=csrf, timeout=10
    )
    assert generated.status_code == 201, generated.text
    job_url = f"{base}/api/jobs/{generated.json()['job']}/"

    def delivered(index: int) -> dict | None:
        panel = web.get(job_url, timeout=10).json()["panels"][index - 1]
        return panel if panel["state"] == "delivered" else None

    for index in (1, 2):
        panel = wait_for(lambda i=index: delivered(i), timeout=60, what=f"panel {index}")
        # Rendered by the worker, served by the web process from the bucket, lettered.
        image = web.get(base + panel["image_url"], timeout=10)
        assert image.status_code == 200 and image.headers["Content-Type"] == "image/png"
        assert "private" in image.headers["Cache-Control"]
        approve = f"{job_url}panels/{index}/approve/"
        assert web.post(approve, headers=csrf, timeout=10).status_code == 200
    assert web.get(job_url, timeout=10).json()["state"] == "completed"

    pages = web.get(f"{base}/api/storyboards/{board['id']}/pages/", timeout=10).json()
    page = web.get(base + pages["pages"][0]["image_url"], timeout=30)
    assert page.status_code == 200 and Image.open(io.BytesIO(page.content)).width > 0
    pdf = web.get(f"{base}/api/storyboards/{board['id']}/export/?format=pdf", timeout=60)
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")

    picture = io.BytesIO()
    Image.effect_noise((200, 260), 50).convert("RGB").save(picture, format="PNG")
    uploaded = web.put(
        f"{base}/api/storyboards/{board['id']}/characters/Aiko/sheet/",
        files={"image": ("aiko.png", picture.getvalue(), "image/png")},
        headers=csrf,
        timeout=30,
    )
    assert uploaded.status_code == 200, uploaded.text
    sheet = web.get(base + uploaded.json()["sheet"]["image_url"], timeout=10)
    assert sheet.status_code == 200 and sheet.content.startswith(b"\x89PNG")

    # Someone else sees none of it.
    stranger = signed_up(base, "storage-stranger")
    for url in (panel["image_url"], pages["pages"][0]["image_url"]):
        assert stranger.get(base + url, timeout=10).status_code == 404

    keys = s3.keys(bucket)
    for where in (r"renders/\d+/", r"renders/kept/", r"pages/", r"sheets/"):
        assert any(re.match(where, key) for key in keys), (where, keys)
    assert files_under(roots["web"]) == [] and files_under(roots["worker"]) == []
