"""`python -m mangagen.web.daphne_server`: daphne, with every request body left to Django,
and bodies past their route's bound refused before any of it is kept.

Twisted's HTTP request, under daphne's, parses each POST form body into
`request.args` before daphne sees it, which daphne never reads: it hands the
raw body to Django. A multipart body Twisted cannot parse (one with no parts, a
field name it will not decode) is answered 400 with no body at all, before
Django, so a client never gets the API's error shape for it; and every upload
is parsed twice. This runs daphne's own command line with that parsing off
(Twisted's `parsePOSTFormSubmission=False`), so Django and DRF parse every body
and answer every refusal. `bin/web` starts daphne through it.

Twisted also keeps a whole body, of any size, in a temporary file (past 100 KB,
on disk) before daphne is handed the request: a 300 MiB body took 300 MiB of disk
before anything looked at it. Here the bound of the route the request is for
(mangagen/web/body_limits.py) is known once its headers are: a body whose
`Content-Length` passes it is read and dropped as it arrives, never kept, and one
sent without a length is dropped from the moment it passes the bound; either is
answered 413 `too_large` once it has arrived (a client reads no answer while it
is still sending), on the same connection.

Before serving, it says in the log what the release step (`bin/release`) has not
done yet, if anything: a process started before it serves no CSS or JS.
"""

from __future__ import annotations

import io
import os
import time

from daphne import http_protocol
from daphne.cli import CommandLineInterface

from . import body_limits


class BodyLeftToDjango(http_protocol.WebRequest):
    def __init__(self, *args, **kwargs):
        kwargs["parsePOSTFormSubmission"] = False
        super().__init__(*args, **kwargs)
        self.body_limit: int | None = None
        self.body_seen = 0
        self.body_refused = False

    def gotLength(self, length):
        """The headers are in: the route's bound is known before a byte of the body."""
        path = getattr(self.channel, "_path", b"/").split(b"?", 1)[0]
        self.body_limit = body_limits.limit_for(path.decode("latin-1"))
        if length is not None and length > self.body_limit:
            self.body_refused = True
            self.content = io.BytesIO()  # nothing is written to it: the body is dropped
            return
        super().gotLength(length)

    def handleContentChunk(self, data):
        if self.body_refused:
            return
        self.body_seen += len(data)
        if self.body_limit is not None and self.body_seen > self.body_limit:
            self.body_refused = True  # sent without a length, and past it: drop it all
            self.content.close()
            self.content = io.BytesIO()
            return
        super().handleContentChunk(data)

    def process(self):
        if not self.body_refused:
            return super().process()
        self.request_start = time.time()
        if hasattr(self.client, "host"):
            self.client_addr = [str(self.client.host), self.client.port]
        response = body_limits.refusal(
            limit=self.body_limit or 0,
            accept_language=_header(self, b"accept-language"),
            cookie=_header(self, b"cookie"),
        )
        self.handle_reply(
            {
                "type": "http.response.start",
                "status": response.status_code,
                "headers": [
                    (name.encode("latin-1"), value.encode("latin-1"))
                    for name, value in response.items()
                ],
            }
        )
        self.handle_reply({"type": "http.response.body", "body": response.content})
        return None


def _header(request: http_protocol.WebRequest, name: bytes) -> str:
    values = request.requestHeaders.getRawHeaders(name) or [b""]
    return values[0].decode("latin-1")


def say_what_the_release_left() -> None:
    """Logs what `bin/release` has not done (migrations, static files), at start."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangagen.settings")
    django.setup(set_prefix=False)
    from django.db import connections

    from mangagen.observability.health import log_unreleased

    log_unreleased(f"The web process {os.getpid()}", serves_static=True)
    connections.close_all()


def main() -> None:
    # daphne's HTTPFactory.buildProtocol reads this module global for each connection.
    http_protocol.WebRequest = BodyLeftToDjango  # type: ignore[misc]
    say_what_the_release_left()
    CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
