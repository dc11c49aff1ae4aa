"""A person over real HTTP and websockets, as a browser or an outside client is."""

from __future__ import annotations

import functools
import struct
import uuid

import requests
import websocket

PASSWORD = "a-person-pass-1234"


class Visitor:
    """Signs up through the sign-up form (a new username each time) and sends what a
    browser sends: the session cookie, and the CSRF token as `X-CSRFToken`."""

    def __init__(self, base_url: str, *, sign_up: bool = True):
        self.base_url = base_url
        self.http = requests.Session()
        self.http.request = functools.partial(self.http.request, timeout=60)  # never hang
        self.username = f"p{uuid.uuid4().hex[:12]}"
        self.http.get(f"{base_url}/accounts/login/").raise_for_status()
        if sign_up:
            answer = self.http.post(
                f"{base_url}/accounts/signup/",
                data={
                    "username": self.username,
                    "password1": PASSWORD,
                    "password2": PASSWORD,
                    "csrfmiddlewaretoken": self.csrf,
                },
                headers={"Referer": f"{base_url}/accounts/signup/"},
                allow_redirects=False,
            )
            assert answer.status_code == 302, answer.text[:500]

    @property
    def csrf(self) -> str:
        return self.http.cookies["csrftoken"]

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        headers = {
            "X-CSRFToken": self.csrf,
            "Referer": self.base_url + "/",
            **kwargs.pop("headers", {}),
        }
        return self.http.request(method, f"{self.base_url}{path}", headers=headers, **kwargs)

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, body: dict | None = None, **kwargs) -> requests.Response:
        return self.request("POST", path, json={} if body is None else body, **kwargs)

    def websocket(self, path: str, *, timeout: float = 30) -> websocket.WebSocket:
        """A websocket to `path` with this person's cookies, from the site's own origin."""
        return websocket.create_connection(
            self.base_url.replace("http", "ws", 1) + path,
            cookie="; ".join(f"{k}={v}" for k, v in self.http.cookies.items()),
            origin=self.base_url,
            timeout=timeout,
        )


def close_code(socket: websocket.WebSocket) -> int:
    """Reads frames until the server's close frame and returns its status code (a
    frame without one reads as 1005, as RFC 6455 says)."""
    while True:
        opcode, data = socket.recv_data(control_frame=True)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            return struct.unpack("!H", data[:2])[0] if len(data) >= 2 else 1005
