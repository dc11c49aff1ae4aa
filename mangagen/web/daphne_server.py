"""`python -m mangagen.web.daphne_server`: daphne, with every request body left to Django.

Twisted's HTTP request, under daphne's, parses each POST form body into
`request.args` before daphne sees it, which daphne never reads: it hands the
raw body to Django. A multipart body Twisted cannot parse (one with no parts, a
field name it will not decode) is answered 400 with no body at all, before
Django, so a client never gets the API's error shape for it; and every upload
is parsed twice. This runs daphne's own command line with that parsing off
(Twisted's `parsePOSTFormSubmission=False`), so Django and DRF parse every body
and answer every refusal. `bin/web` starts daphne through it.
"""

from daphne import http_protocol
from daphne.cli import CommandLineInterface


class BodyLeftToDjango(http_protocol.WebRequest):
    def __init__(self, *args, **kwargs):
        kwargs["parsePOSTFormSubmission"] = False
        super().__init__(*args, **kwargs)


def main() -> None:
    # daphne's HTTPFactory.buildProtocol reads this module global for each connection.
    http_protocol.WebRequest = BodyLeftToDjango  # type: ignore[misc]
    CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
