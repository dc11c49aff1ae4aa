"""The comic's stream: its roughs, the whole list on connect, then each as it changes."""

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from mangagen.asgi import application
from mangagen.roughs.push import push
from mangagen.storyboards import services as storyboards

pytestmark = pytest.mark.django_db(transaction=True)

PATIENCE = 10  # what a slow machine may take to answer; each wait ends with its answer


@pytest.fixture(autouse=True)
def in_memory_layer(settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    import channels.layers

    channels.layers.channel_layers.backends.clear()
    yield
    channels.layers.channel_layers.backends.clear()


def stream(storyboard_id, cookie=b""):
    headers = [(b"origin", b"http://testserver")]
    if cookie:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, f"/ws/storyboards/{storyboard_id}/", headers=headers)


def cookie_for(client, user) -> bytes:
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def test_the_owner_gets_the_list_then_each_rough(client, user):
    board = storyboards.create_storyboard(owner=user, title="t")
    cookie = cookie_for(client, user)
    rough = {"index": 1, "art_hash": "a", "state": "ready", "image_url": "/x", "seconds": 0.2}

    async def scenario():
        comm = stream(board.pk, cookie)
        connected, _ = await comm.connect(timeout=PATIENCE)
        assert connected
        first = await comm.receive_json_from(timeout=PATIENCE)
        await database_sync_to_async(push)(board.pk, rough)
        second = await comm.receive_json_from(timeout=PATIENCE)
        await comm.send_json_to({"type": "ping"})
        third = await comm.receive_json_from(timeout=PATIENCE)  # read again within 10 s
        await comm.disconnect()
        return first, second, third

    first, second, third = async_to_sync(scenario)()
    assert first == {"type": "roughs", "data": {"roughs": [], "budget": {"used": 0, "limit": 60}}}
    assert second == {"type": "rough", "data": rough}
    assert third == {"type": "pong"}


def test_anyone_else_is_closed_with_4403(client, user, make_user):
    board = storyboards.create_storyboard(owner=user, title="t")
    cookie = cookie_for(client, make_user())

    async def scenario():
        comm = stream(board.pk, cookie)
        await comm.connect(timeout=PATIENCE)
        closed = await comm.receive_output(timeout=PATIENCE)
        await comm.wait(timeout=PATIENCE)
        return closed

    assert async_to_sync(scenario)() == {"type": "websocket.close", "code": 4403}
