"""A request through the ASGI handler enters a thread once (mangagen/web/asgi_handler.py)."""

from asgiref.sync import SyncToAsync, async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.core.handlers.asgi import ASGIHandler

from mangagen.web.asgi_handler import OneCrossingASGIHandler


def answer(handler, path: str, monkeypatch) -> tuple[int, dict, int]:
    """The status and headers of a GET through `handler`, as daphne calls it, and how
    many times the request entered a thread (asgiref's SyncToAsync)."""
    entered = []
    original = SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        entered.append(self.func)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counted)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }

    async def run():
        app = ApplicationCommunicator(handler, scope)
        await app.send_input({"type": "http.request", "body": b"", "more_body": False})
        start = await app.receive_output(timeout=10)
        await app.receive_output(timeout=10)  # the body
        await app.wait(timeout=10)
        return start

    start = async_to_sync(run)()
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, len(entered)


def test_the_chain_is_entered_once(monkeypatch):
    status, headers, ours = answer(OneCrossingASGIHandler(), "/accounts/login/", monkeypatch)
    assert status == 200
    # The whole chain ran: the request id, the frame and content-type headers, CSRF's cookie.
    assert headers["x-request-id"] and headers["x-frame-options"] == "DENY"
    assert "csrftoken=" in headers["set-cookie"]
    _, _, stock = answer(ASGIHandler(), "/accounts/login/", monkeypatch)
    # Django's own handler crosses at each middleware boundary and inside each
    # MiddlewareMixin run async; this one enters the chain once, beside the crossings
    # Django's ASGI handling makes around it (the request's signals, closing the answer).
    assert stock - ours >= 10


def test_a_not_found_page_answers_as_before(monkeypatch):
    ours = answer(OneCrossingASGIHandler(), "/no-such-page/", monkeypatch)
    stock = answer(ASGIHandler(), "/no-such-page/", monkeypatch)
    assert ours[0] == stock[0] == 404
