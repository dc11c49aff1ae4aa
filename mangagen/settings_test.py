"""The test suite's settings: the project's own, with DEBUG turned on explicitly
(as the local demo has it) unless the environment says otherwise."""

import os

os.environ.setdefault("DEBUG", "on")

from mangagen.settings import *  # noqa: F403
