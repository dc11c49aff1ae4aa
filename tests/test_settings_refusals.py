"""Settings that cannot work refuse to start, in every process that loads them:
manage.py, a Celery worker, daphne's application. Each refusal names what is
accepted, so an operator's typo is a clear error at deploy time rather than every
panel failing later."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROCESSES = {
    "manage.py": [sys.executable, "manage.py", "check"],
    "celery": [sys.executable, "-m", "celery", "-A", "mangagen", "report"],
    "daphne's application": [sys.executable, "-c", "import mangagen.asgi"],
}


def start(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        command,
        cwd=ROOT,
        env={**os.environ, "DEBUG": "on", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("process", PROCESSES)
@pytest.mark.parametrize(
    "env, complaint",
    [
        (
            {"RENDERER": "crayons"},
            "RENDERER='crayons' is not one of: procedural, openai, replicate, runpod, "
            "comfyui, a1111.",
        ),
        ({"DRAFTER": "magic"}, "DRAFTER='magic' is not one of: rules, openai."),
        (
            {"IMAGES_SERVER": "dalle"},
            "IMAGES_SERVER='dalle' is not one of: openai, localai, sdcpp.",
        ),
        ({"RENDERER": "replicate", "REPLICATE_API_TOKEN": ""}, "needs REPLICATE_API_TOKEN"),
        (
            {"REPLICATE_INPUT": '{"prompt": "{{promt}}"}'},
            "REPLICATE_INPUT names {{promt}}, not a placeholder",
        ),
        ({"REPLICATE_INPUT": "{not json"}, "REPLICATE_INPUT is not valid JSON"),
        (
            {
                "RENDERER": "comfyui",
                "COMFYUI_INPAINT_WORKFLOW": "mangagen/renderers/workflows/sdxl_txt2img.json",
            },
            "does not name {{image}} and {{mask}}",
        ),
        # The demo's well-known logins and free credits, where others could reach them.
        (
            {
                "DEMO_MODE": "on",
                "DEBUG": "off",
                "SECRET_KEY": "a-real-secret-of-some-length",
                "ALLOWED_HOSTS": "localhost",
            },
            "DEMO_MODE is on with DEBUG off",
        ),
        (
            {"DEMO_MODE": "on", "ALLOWED_HOSTS": "localhost,comics.example"},
            "DEMO_MODE is on with ALLOWED_HOSTS naming comics.example, not loopback",
        ),
        (
            {"DEMO_MODE": "on", "HOST": "0.0.0.0"},
            "DEMO_MODE is on with HOST 0.0.0.0, not a loopback address",
        ),
        (
            {"DEMO_MODE": "on", "ALLOWED_HOSTS": "127.attacker.example"},
            "DEMO_MODE is on with ALLOWED_HOSTS naming 127.attacker.example, not loopback",
        ),
        ({"JUDGE": "vision"}, "JUDGE is 'vision'; use one of: none, openai."),
        ({"JUDGE_MIN_SCORE": "6"}, "JUDGE_MIN_SCORE is 6.0; it is a score from 0 to 1."),
        ({"READ_REVOKE_SECONDS": "2"}, "READ_REVOKE_SECONDS is 2; it must be at least 4"),
    ],
    ids=[
        "renderer",
        "drafter",
        "images-server",
        "replicate-token",
        "placeholder",
        "json",
        "inpaint-workflow",
        "demo-debug-off",
        "demo-public-host",
        "demo-public-bind-address",
        "demo-name-like-an-address",
        "judge",
        "judge-min-score",
        "read-revoke-seconds",
    ],
)
def test_a_setting_that_cannot_work_refuses_to_start(process, env, complaint):
    done = start(PROCESSES[process], env)
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr and complaint in done.stderr


def test_the_defaults_start():
    done = start(PROCESSES["manage.py"], {})
    assert done.returncode == 0, done.stderr


def test_the_local_demo_starts():
    """`make run` on a laptop (LOCAL_RUN, loopback names and address) is still the demo."""
    unset = {"DEBUG", "DEMO_MODE", "ALLOWED_HOSTS", "HOST", "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "--verbosity", "0", "-c",
         "from django.conf import settings; print(settings.DEBUG, settings.DEMO_MODE)"],
        cwd=ROOT,
        env={**{k: v for k, v in os.environ.items() if k not in unset}, "LOCAL_RUN": "on",
             "ENV_FILE": "/nonexistent/.env"},
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]


@pytest.mark.parametrize(
    "host, expected",
    [
        ("localhost", True),
        (".localhost", True),
        ("studio.localhost", True),
        ("127.0.0.1", True),
        ("127.5.6.7", True),
        ("::1", True),
        ("[::1]", True),
        ("testserver", True),
        ("0.0.0.0", False),
        ("::", False),
        ("127.attacker.example", False),
        ("127.0.0.1.nip.io", False),
        ("comics.example", False),
        ("*", False),
        ("10.0.0.5", False),
    ],
)
def test_loopback_is_an_address_ipaddress_calls_loopback_or_localhost(host, expected):
    from mangagen.settings.environment import loopback

    assert loopback(host) is expected
