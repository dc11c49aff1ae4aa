"""WSGI entry point (HTTP only; production serves through daphne and asgi.py)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangagen.settings")
application = get_wsgi_application()
