"""What the environment says: the `.env` file read once, `DEBUG`, the secret key, the
hosts, and the local demo's switch. Every other settings module reads `env` from here."""

import ipaddress
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parents[2]

env = environ.Env()
# The environment wins over the file, whatever sets it.
ENV_FILE = Path(env.str("ENV_FILE", default=str(BASE_DIR / ".env")))
if ENV_FILE.exists():
    environ.Env.read_env(ENV_FILE, overwrite=False)

# Off unless asked for. `make run` sets LOCAL_RUN, which only changes DEBUG's default:
# a DEBUG of the environment or of the .env file is kept as it is.
DEBUG = env.bool("DEBUG", default=env.bool("LOCAL_RUN", default=False))

_DEV_SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
SECRET_KEY = env.str("SECRET_KEY", default="")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[])
if not DEBUG:
    # Production must be configured on purpose, never by accident.
    if not SECRET_KEY or SECRET_KEY == _DEV_SECRET_KEY:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off.")
else:
    SECRET_KEY = SECRET_KEY or _DEV_SECRET_KEY
    ALLOWED_HOSTS = ALLOWED_HOSTS or ["localhost", "127.0.0.1", "[::1]", "testserver"]

CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])


def loopback(host: str) -> bool:
    """Whether `host` (a name in ALLOWED_HOSTS, or the address the app binds) reaches this
    machine alone: `localhost` and its subdomains, the test client's name, or an address
    `ipaddress` says is loopback (127.0.0.0/8, ::1). A name that merely starts with
    "127." (`127.attacker.example`) is a name like any other."""
    host = host.strip().lower().lstrip(".").rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host in {"localhost", "testserver"} or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# The local demo's free things (the demo logins `make run` makes, the Credits page's
# demo credits) only where no one else can reach them: DEBUG on, and the app serving
# and answering loopback names alone; DEMO_MODE=off says so explicitly. DEMO_MODE=on
# where others could reach the demo's well-known logins (DEBUG off, a host in
# ALLOWED_HOSTS that is not loopback, or a bind address, HOST, that is not: 0.0.0.0
# listens on every interface) refuses to start.
BIND_HOST = env.str("HOST", default="127.0.0.1")
DEMO_MODE = env.bool(
    "DEMO_MODE",
    default=DEBUG and all(loopback(h) for h in ALLOWED_HOSTS) and loopback(BIND_HOST),
)
if DEMO_MODE and not DEBUG:
    raise ImproperlyConfigured(
        "DEMO_MODE is on with DEBUG off: the demo's logins and free credits are for a "
        "local run only. Turn DEMO_MODE off (or DEBUG on, on a loopback host)."
    )
if DEMO_MODE and not loopback(BIND_HOST):
    raise ImproperlyConfigured(
        f"DEMO_MODE is on with HOST {BIND_HOST}, not a loopback address: the demo's "
        "logins and free credits are for a local run only. Turn DEMO_MODE off, or bind "
        "to 127.0.0.1."
    )
if DEMO_MODE and (public := [h for h in ALLOWED_HOSTS if not loopback(h)]):
    raise ImproperlyConfigured(
        f"DEMO_MODE is on with ALLOWED_HOSTS naming {', '.join(public)}, not loopback: "
        "the demo's logins and free credits are for a local run only. Turn DEMO_MODE off."
    )
