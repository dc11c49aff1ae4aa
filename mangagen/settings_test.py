"""The test suite's settings: the project's own, with DEBUG turned on explicitly
(as the local demo has it) unless the environment says otherwise."""

import os
import tempfile
from pathlib import Path

os.environ.setdefault("DEBUG", "on")

from mangagen.settings import *  # noqa: F403

# No connection pool in the test process: pytest-django creates and drops the
# test database, which a pool's idle connections would keep open. (The stacks
# the browser tests start run the project's settings, pool included.)
DATABASES["default"].get("OPTIONS", {}).pop("pool", None)  # noqa: F405

# Files go to a folder of this test session's own, never to a developer's media/ (a test
# that prunes or deletes files works on what its own database knows). Tests that need
# their own pick one (conftest's `instant_renders`, `media`).
MEDIA_ROOT = Path(tempfile.mkdtemp(prefix="mangagen-test-media-"))
