"""The test suite's settings: the project's own, with DEBUG turned on explicitly
(as the local demo has it) unless the environment says otherwise."""

import os
import tempfile

os.environ.setdefault("DEBUG", "on")
# Files go to a folder of this test session's own, never to a developer's media/ (a test
# that prunes or deletes files works on what its own database knows); the processes a
# test starts inherit it. Tests that need their own pick one (`instant_renders`, `media`).
if not os.environ.get("MEDIA_ROOT"):
    os.environ["MEDIA_ROOT"] = tempfile.mkdtemp(prefix="mangagen-test-media-")

from mangagen.settings import *  # noqa: F403

# No connection pool in the test process: pytest-django creates and drops the
# test database, which a pool's idle connections would keep open. (The stacks
# the browser tests start run the project's settings, pool included.)
DATABASES["default"].get("OPTIONS", {}).pop("pool", None)  # noqa: F405
