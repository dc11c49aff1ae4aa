"""Shared fixtures. PostgreSQL-only tests are marked `postgres` and run in CI."""

import itertools
import uuid

import pytest
from django.db import connection

_usernames = itertools.count(1)


def pytest_collection_modifyitems(config, items):
    if connection.vendor == "postgresql":
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL=postgres://…)")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def make_user(django_user_model):
    def make(username: str | None = None, password: str = "a-long-pass-123", **extra):
        username = username or f"person{next(_usernames)}"
        return django_user_model.objects.create_user(username=username, password=password, **extra)

    return make


@pytest.fixture
def user(make_user):
    return make_user("aiko")


@pytest.fixture
def person(client, user):
    """The test client, signed in as `user`."""
    client.force_login(user)
    return client


@pytest.fixture
def account(user):
    """The user's credits account with 10 credits (tests/support/factories.py for other amounts)."""
    from tests.support.factories import funded_account

    return funded_account(user)


@pytest.fixture
def board(request, user):
    """The user's storyboard: two plain panels, or the shape a test, class or module
    asks for with `pytest.mark.board(characters=[...], panels=[...], title=...)`
    (tests/support/factories.py's `storyboard`)."""
    from tests.support.factories import storyboard

    shape = request.node.get_closest_marker("board")
    return storyboard(user, **(shape.kwargs if shape else {}))


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def standin():
    """A local HTTP stand-in for an outside API; never the internet."""
    from tests.support.standin import serve

    fake, server = serve()
    yield fake
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _private_cache(settings):
    """Each test gets its own cache (rate-limit counters start at zero)."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": f"test-{uuid.uuid4()}",
        }
    }


@pytest.fixture(autouse=True)
def _interface_language_reset():
    """Each test starts in the default language: a request in Japanese through the test
    client leaves Japanese active in the test's thread, which the next test would inherit."""
    from django.utils import translation

    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _private_gpu_pool(settings):
    """Each test gets its own simulated GPU pool (containers, queues, heartbeats) in Redis."""
    settings.GPU_POOL_PREFIX = f"test:gpu:{uuid.uuid4()}"


@pytest.fixture
def race():
    """Runs calls at once: each in a thread of its own (so on PostgreSQL on a connection
    of its own, closed when it ends), all released together by a barrier. The one way
    the tests race callables.

    `race(calls, timeout=60)` returns each call's result, or the exception it raised,
    in the order of `calls`; `timeout` bounds the wait for each thread.
    """
    import threading

    from django.db import connections

    def run_all(calls, *, timeout: float = 60):
        barrier = threading.Barrier(len(calls))
        results = [None] * len(calls)

        def run(i, call):
            try:
                barrier.wait()
                results[i] = call()
            except Exception as exc:
                results[i] = exc
            finally:
                connections.close_all()

        threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=timeout)
        return results

    return run_all


@pytest.fixture
def instant_renders(settings, tmp_path):
    """No simulated GPU time, small images in a private media folder, no look-ahead,
    and an in-memory channel layer: the studio's state machine, fast. A module whose
    every test wants it says so once: `pytest.mark.usefixtures("instant_renders")` in
    its `pytestmark` (with "enqueued" where renders are recorded, not sent)."""
    settings.RENDER_COLD_START_SECONDS = 0
    settings.RENDER_SECONDS = 0
    settings.RENDER_WIDTH, settings.RENDER_HEIGHT = 160, 120
    settings.MEDIA_ROOT = tmp_path
    settings.SPECULATION_LOOKAHEAD = 0
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


@pytest.fixture
def enqueued(monkeypatch):
    """Records every render the studio enqueues as ((job, index, attempt), queue),
    instead of sending it to Redis; deadline tasks are dropped; a look-ahead
    sent to a worker is placed at once, as the worker would."""
    from mangagen.jobs import dispatch, services

    calls = []
    monkeypatch.setattr(
        dispatch, "send_render", lambda args, queue: calls.append((tuple(args), queue))
    )
    monkeypatch.setattr(dispatch, "send_expire", lambda args, eta: None)
    monkeypatch.setattr(
        dispatch, "send_lookahead", lambda args: services.queue_lookahead(job_id=args[0])
    )
    return calls


@pytest.fixture
def run(request, enqueued, django_capture_on_commit_callbacks):
    """Drives the studio as a person and a worker would, with the renders `enqueued`
    recorded: the one way a test takes a render off the queue (`take`, `render`) or a
    sheet off `sheet_queue` (`take_sheet`, `render_sheet`; the test asks for
    `sheet_queue` too), and runs what a commit would (`commits`)."""
    from mangagen.characters import services as sheets
    from mangagen.jobs import services
    from mangagen.jobs.models import JobState

    class Driver:
        def commits(self):
            """A block whose on-commit callbacks run, as after a real commit."""
            return django_capture_on_commit_callbacks(execute=True)

        def generate(self, user, board):
            with self.commits():
                return services.generate(user=user, storyboard=board)[0]

        def take(self) -> tuple[tuple[int, int, int], str]:
            """The oldest enqueued render, off the queue: ((job, index, attempt), queue)."""
            assert len(enqueued) > 0, "no render is enqueued"
            return enqueued.pop(0)

        def render(self) -> str:
            """Runs the oldest enqueued render, as a worker would; its outcome."""
            (job_id, index, attempt), _ = self.take()
            with self.commits():
                return services.perform_render(job_id=job_id, index=index, attempt=attempt)

        def render_all(self) -> None:
            """Runs every enqueued render, those enqueued meanwhile too."""
            while enqueued:
                self.render()

        def take_sheet(self) -> tuple[tuple[int], str]:
            """The oldest sheet sent to a worker, off the queue: ((sheet,), queue)."""
            queue = request.getfixturevalue("sheet_queue")
            assert len(queue) > 0, "no sheet is queued"
            return queue.pop(0)

        def render_sheet(self) -> str:
            """Runs the oldest queued sheet, as a worker would; its outcome."""
            (sheet_id,), _ = self.take_sheet()
            with self.commits():
                return sheets.perform_sheet_render(sheet_id=sheet_id)

        def take_rough(self) -> tuple[tuple[int], str]:
            """The oldest rough sent to a worker, off the queue: ((rough,), queue) (the
            test asks for `rough_queue` too)."""
            queue = request.getfixturevalue("rough_queue")
            assert len(queue) > 0, "no rough is queued"
            return queue.pop(0)

        def draw_rough(self) -> str:
            """Draws the oldest queued rough, as a worker would; its outcome."""
            from mangagen.render_kinds import worker
            from mangagen.roughs.kinds import ROUGH

            (rough_id,), _ = self.take_rough()
            with self.commits():
                return worker.perform(ROUGH, rough_id)

        def draw_roughs(self) -> list[str]:
            """Draws every queued rough, in the order they were asked for."""
            queue = request.getfixturevalue("rough_queue")
            return [self.draw_rough() for _ in range(len(queue))]

        def approve(self, job, index):
            with self.commits():
                return services.approve_panel(job=job, index=index)

        def finish(self, job):
            """Renders and approves every panel the job has to draw."""
            while True:
                job.refresh_from_db()
                if job.state == JobState.COMPLETED:
                    return job
                if enqueued:
                    self.render()
                job.refresh_from_db()
                self.approve(job, job.current_index)

        @property
        def queued(self):
            return [args for args, _ in enqueued]

    return Driver()


@pytest.fixture
def sheet_queue(monkeypatch):
    """Records every character sheet the studio sends to a worker as ((sheet_id,), queue),
    instead of sending it to Redis; a test runs one with perform_sheet_render."""
    from mangagen.characters import dispatch

    calls = []
    monkeypatch.setattr(
        dispatch, "send_render", lambda args, queue: calls.append((tuple(args), queue))
    )
    return calls


@pytest.fixture
def rough_queue(monkeypatch):
    """Records every rough the studio sends to a worker as ((rough_id,), queue), instead
    of sending it to Redis; the `run` driver draws them (`draw_rough`, `draw_roughs`)."""
    from mangagen.roughs import dispatch

    calls = []
    monkeypatch.setattr(
        dispatch, "send_rough", lambda args, queue: calls.append((tuple(args), queue))
    )
    return calls


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """A local S3-compatible server (moto's, over real HTTP) for the whole session."""
    from tests.support.s3 import S3Server

    with S3Server(log=tmp_path_factory.mktemp("s3") / "moto.log") as server:
        yield server


class Media:
    """The test's media storage: `backend` is "local" or "s3"."""

    def __init__(self, backend: str, root, server=None, bucket: str = ""):
        self.backend, self.root, self.server, self.bucket = backend, root, server, bucket

    def names(self, prefix: str = "") -> list[str]:
        """Every stored file's name under `prefix` (a folder, e.g. "pages/7"), sorted."""
        if self.server is not None:
            return self.server.keys(self.bucket, f"{prefix}/" if prefix else "")
        base = self.root / prefix if prefix else self.root
        return sorted(
            str(path.relative_to(self.root))
            for path in base.rglob("*")
            if path.is_file() and not path.name.startswith(".")
        )

    def local_files(self) -> list[str]:
        return sorted(str(p) for p in self.root.rglob("*") if p.is_file())


@pytest.fixture(params=["local", "s3"])
def media(request, settings, tmp_path):
    """The media storage, once on local disk (MEDIA_ROOT) and once in a bucket of the
    local S3 server; on s3 the test also proves nothing was written to MEDIA_ROOT.
    Request it after `instant_renders` (which picks its own MEDIA_ROOT)."""
    from mangagen.kernel.storage_config import storages

    root = tmp_path / "media-root"
    root.mkdir()
    settings.MEDIA_ROOT = root
    if request.param == "local":
        settings.STORAGES = storages(backend="local")
        yield Media("local", root)
        return
    server = request.getfixturevalue("s3_server")
    bucket = server.new_bucket()
    settings.STORAGES = server.storages(bucket)
    media = Media("s3", root, server, bucket)
    yield media
    assert media.local_files() == [], "with STORAGE_BACKEND=s3 nothing goes to MEDIA_ROOT"
