"""The web edge that is not a page view: the websocket consumer, the ASGI handler and
the daphne server that runs them (pages and images: mangagen/views/, the API:
mangagen/api/ and each area's api.py)."""
