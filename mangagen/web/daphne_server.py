"""`python -m mangagen.web.daphne_server`: daphne, with every request body left to Django.

Twisted's HTTP request, under daphne's, parses each POST form body into
`request.args` before daphne sees it, which daphne never reads: it hands the
raw body to Django. A multipart body Twisted cannot parse (one with no parts, a
field name it will not decode) is answered 400 with no body at all, before
Django, so a client never gets the API's error shape for it; and every upload
is parsed twice. This runs daphne's own command line with that parsing off
(Twisted's `parsePOSTFormSubmission=False`), so Django and DRF parse every body
and answer every refusal. `bin/web` starts daphne through it.

Before serving, it says in the log what the release step (`bin/release`) has not
done yet, if anything: a process started before it serves no CSS or JS.
"""

import os

from daphne import http_protocol
from daphne.cli import CommandLineInterface


class BodyLeftToDjango(http_protocol.WebRequest):
    def __init__(self, *args, **kwargs):
        kwargs["parsePOSTFormSubmission"] = False
        super().__init__(*args, **kwargs)


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
