"""The machine's one metrics folder (mangagen/observability/metrics_folder.py): given to a
Procfile process when PROMETHEUS_MULTIPROC_DIR is unset, created, emptied by the first
process of a run (none that joined it before is alive) and only then; left alone when
the variable is set. tests/stack/test_procfile_metrics.py runs the Procfile itself."""

import subprocess
import sys

import pytest

from mangagen.observability import metrics_folder
from mangagen.observability.metrics_folder import VARIABLE, join


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "var" / "metrics" / "machine"


@pytest.fixture
def sleeper():
    """Another process, alive until the test ends."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    yield process
    process.kill()
    process.wait()


def leftover(folder, name="counter_999999.db"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(b"counts of the run before")
    return folder / name


def test_unset_it_is_the_machines_folder_created_and_given_to_what_starts(folder):
    environ = {}
    assert join(environ, folder=folder) == folder
    assert environ[VARIABLE] == str(folder) and folder.is_dir()


def test_the_first_process_of_a_run_empties_it(folder):
    stale = leftover(folder)
    dead_member = folder / "member-999999"  # a process of the run before, gone
    dead_member.write_text("1")
    join({}, folder=folder)
    assert not stale.exists() and not dead_member.exists()


def test_a_process_joining_a_run_under_way_keeps_its_counts(folder, sleeper):
    join({}, folder=folder, pid=sleeper.pid)  # the run's first process, still running
    counts = leftover(folder, f"counter_{sleeper.pid}.db")
    join({}, folder=folder)  # a worker restarted while the others run
    assert counts.exists()


def test_a_new_process_given_a_dead_ones_number_is_no_member(folder, sleeper):
    # A member file naming a live process, written when another process had its number.
    folder.mkdir(parents=True)
    (folder / f"member-{sleeper.pid}").write_text("12345")
    stale = leftover(folder)
    join({}, folder=folder)
    assert not stale.exists()


def test_set_it_is_left_to_whoever_set_it(folder, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    kept = leftover(mine)
    environ = {VARIABLE: str(mine)}
    assert join(environ, folder=folder) is None
    assert environ[VARIABLE] == str(mine) and kept.exists() and not folder.exists()


def test_the_default_is_under_the_checkouts_var():
    assert metrics_folder.DEFAULT.parts[-3:] == ("var", "metrics", "machine")
