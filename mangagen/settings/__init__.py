"""Settings for Mangagen, read once from the environment (see `.env.example`), a module
per concern: each reads `env` from `environment.py` and what it needs of the others.
`DJANGO_SETTINGS_MODULE` names this package; docs/settings.md lists every variable."""

from mangagen.settings.accounts import *  # noqa: F403
from mangagen.settings.bounds import *  # noqa: F403
from mangagen.settings.environment import *  # noqa: F403
from mangagen.settings.files import *  # noqa: F403
from mangagen.settings.money import *  # noqa: F403
from mangagen.settings.operations import *  # noqa: F403
from mangagen.settings.providers import *  # noqa: F403
from mangagen.settings.rendering import *  # noqa: F403
from mangagen.settings.security import *  # noqa: F403
from mangagen.settings.stores import *  # noqa: F403
from mangagen.settings.web import *  # noqa: F403
from mangagen.settings.workers import *  # noqa: F403
