"""A TCP proxy in front of a test's own server that can cut connections off.

For a service the app reaches over the network (the S3 bucket), as a network
that drops connections does: while `dropping` is above zero each new
connection is closed as soon as it is accepted, before any answer, and the
count goes down by one; every other connection is relayed both ways to the
server. Loopback only.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class TcpProxy:
    """Listens on a free loopback port (`port`) and relays to `target` (host, port);
    use as a context manager."""

    def __init__(self, target: tuple[str, int], *, dropping: int = 0):
        self.target = target
        self.dropping = dropping
        self.dropped = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open: list[socket.socket] = []

    def __enter__(self) -> TcpProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._listener.close()
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                drop = self.dropping > 0
                if drop:
                    self.dropping -= 1
                    self.dropped += 1
            if drop:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:  # the server is away: so is this connection
                client.close()
                continue
            with self._lock:
                self._open += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._relay, args=(source, sink), daemon=True).start()

    @staticmethod
    def _relay(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
