"""Websocket routes, and the thread each connection's synchronous work runs in."""

from asgiref.sync import ThreadSensitiveContext
from django.urls import path

from mangagen.web.consumers import JobEventsConsumer, StoryboardStreamConsumer

websocket_urlpatterns = [
    path("ws/jobs/<int:job_id>/", JobEventsConsumer.as_asgi()),
    path("ws/storyboards/<int:storyboard_id>/", StoryboardStreamConsumer.as_asgi()),
]


class ThreadPerConnection:
    """Runs each websocket connection in a thread-sensitive context of its own.

    Channels' database calls (the session, the user, the job and its log) are
    thread-sensitive: without a context they all run on one thread shared by
    every connection of the process, so under load each connect queued behind
    everyone else's. Django gives each HTTP request its own context the same
    way; here a connection's calls share a thread, and connections run side by
    side."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        async with ThreadSensitiveContext():
            return await self.app(scope, receive, send)
