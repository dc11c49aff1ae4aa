"""The interface's languages, static files and the media storage."""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from mangagen.kernel import storage_config
from mangagen.settings.environment import BASE_DIR, DEBUG, env

# The interface's languages (not the comics' lettering: mangagen/lettering/languages.py).
# Catalogs live in locale/<code>/LC_MESSAGES (django.po for Python and templates,
# djangojs.po for the scripts), committed compiled; docs/features.md "Languages of the interface".
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ja", "日本語")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# English dates keep the app's own formats; other languages take Django's (mangagen/formats/).
FORMAT_MODULE_PATH = ["mangagen.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Where `bin/release` collects the static files (hashed names, compressed) that the web
# process serves without DEBUG; the proxy may serve them from there too (deploy/nginx.conf).
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
WHITENOISE_USE_FINDERS = DEBUG
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(BASE_DIR / "media")))
MEDIA_URL = "media/"

# Every render, kept take, sheet, page build and export goes through Django's
# default storage (mangagen/kernel/storage.py): MEDIA_ROOT on this machine, or a bucket
# of any S3-compatible service that every web process and worker shares. Never
# served directly: the views check the owner and stream the bytes.
STORAGE_BACKEND = env.str("STORAGE_BACKEND", default="local")
try:
    STORAGES = storage_config.storages(
        backend=STORAGE_BACKEND,
        bucket=env.str("S3_BUCKET", default=""),
        endpoint_url=env.str("S3_ENDPOINT_URL", default=""),
        access_key=env.str("S3_ACCESS_KEY_ID", default=""),
        secret_key=env.str("S3_SECRET_ACCESS_KEY", default=""),
        region=env.str("S3_REGION", default="us-east-1"),
        hashed_static=not DEBUG,
    )
except ValueError as refused:
    raise ImproperlyConfigured(str(refused)) from refused

# Reading links' page images, served ahead of Django (mangagen/publishing/serving.py,
# docs/reading-links.md). After Stop sharing (or the comic's deletion) nothing of a link
# is served to anyone later than READ_REVOKE_SECONDS, caches included: each process keeps
# a link for a quarter of it, caches keep a page for a quarter, a signed URL lives a
# quarter; at 4 s or more each quarter is a whole second.
READ_REVOKE_SECONDS = env.int("READ_REVOKE_SECONDS", default=60)
if READ_REVOKE_SECONDS < 4:
    raise ImproperlyConfigured(
        f"READ_REVOKE_SECONDS is {READ_REVOKE_SECONDS}; it must be at least 4 (each layer "
        "keeps a reading link's page a quarter of it, a whole second at least)."
    )
# Page images each web process keeps in memory (the newest read stay), in MiB; 0: none.
READ_CACHE_MB = env.int("READ_CACHE_MB", default=64)
# With STORAGE_BACKEND=s3: a page image answers a redirect to a short-lived signed URL of
# the bucket (readers' browsers must reach its endpoint), instead of its bytes.
READ_FROM_STORAGE = env.bool("READ_FROM_STORAGE", default=False)
