"""ASGI entry point: HTTP through Django (reading links' page images ahead of it),
websockets through Channels."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangagen.settings")
django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application does

from mangagen.web.asgi_handler import OneCrossingASGIHandler  # noqa: E402

# Django's ASGI handler, its middleware chain entered once per request (asgi_handler.py).
django_asgi_app = OneCrossingASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from mangagen.publishing.pages_asgi import with_reading_pages  # noqa: E402
from mangagen.routing import ThreadPerConnection, websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        # A reading link's page images without Django's request path (publishing/serving.py).
        "http": with_reading_pages(django_asgi_app),
        "websocket": ThreadPerConnection(
            AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
        ),
    }
)
