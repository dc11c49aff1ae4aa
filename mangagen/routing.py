"""Websocket routes. The job event stream arrives with the jobs feature."""

websocket_urlpatterns: list = []
