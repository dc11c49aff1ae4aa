"""The test suite's settings: the project's own, with DEBUG turned on explicitly
(as the local demo has it) unless the environment says otherwise."""

import os

os.environ.setdefault("DEBUG", "on")

from mangagen.settings import *  # noqa: F403

# No connection pool in the test process: pytest-django creates and drops the
# test database, which a pool's idle connections would keep open. (The stacks
# the browser tests start run the project's settings, pool included.)
DATABASES["default"].get("OPTIONS", {}).pop("pool", None)  # noqa: F405
