"""The job event stream: replay then live, no gap, no duplicate, owners only."""

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.db import transaction

from mangagen.asgi import application
from mangagen.jobs.events import emit, group_name
from mangagen.jobs.models import Job
from mangagen.storyboards import services as storyboards

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def in_memory_layer(settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    import channels.layers

    channels.layers.channel_layers.backends.clear()
    yield
    channels.layers.channel_layers.backends.clear()


@pytest.fixture
def job(user):
    board = storyboards.create_storyboard(owner=user, title="t")
    job = Job.objects.create(owner=user, storyboard=board, version="v", style="manga")
    for n in range(1, 6):
        add_event(job, n)
    return job


def add_event(job, n, publish=True):
    with transaction.atomic():
        locked = Job.objects.select_for_update().get(pk=job.pk)
        if publish:
            emit(job=locked, type="test.event", data={"n": n})
        else:  # written to the log, lost by the channel layer
            from mangagen.jobs.models import JobEvent

            locked.last_seq += 1
            locked.save(update_fields=["last_seq"])
            JobEvent.objects.create(
                job=locked, seq=locked.last_seq, type="test.event", data={"n": n}
            )


def cookie_for(client, user) -> bytes:
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def communicator(job_id, cookie=b"", after=None, origin=b"http://testserver"):
    path = f"/ws/jobs/{job_id}/" + (f"?after={after}" if after is not None else "")
    headers = [(b"origin", origin)]
    if cookie:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, path, headers=headers)


async def receive_all(comm, timeout=0.5):
    got = []
    while not await comm.receive_nothing(timeout=timeout):
        got.append(await comm.receive_json_from())
    return got


def run(coro):
    return async_to_sync(coro)()


def replayed(job, cookie, *, after, count) -> list[dict]:
    """The first `count` messages a stream opened with `after` sends, then
    whatever else it sends before falling quiet (a duplicate would show)."""

    async def scenario():
        comm = communicator(job.pk, cookie, after=after)
        await comm.connect()
        got = [await comm.receive_json_from(timeout=10) for _ in range(count)]
        got += await receive_all(comm, timeout=0.2)
        await comm.disconnect()
        return got

    return run(scenario)


def test_a_late_attach_gets_the_whole_log(client, user, job):
    cookie = cookie_for(client, user)

    async def scenario():
        comm = communicator(job.pk, cookie)
        connected, _ = await comm.connect()
        assert connected
        got = await receive_all(comm)
        await comm.disconnect()
        return got

    got = run(scenario)
    assert [e["seq"] for e in got] == [1, 2, 3, 4, 5]
    assert got[0]["type"] == "test.event" and got[0]["data"] == {"n": 1} and got[0]["at"]


def test_a_reconnect_with_after_gets_exactly_the_missing_events(client, user, job):
    assert [e["seq"] for e in replayed(job, cookie_for(client, user), after=3, count=2)] == [4, 5]


def test_live_events_follow_the_replay(client, user, job):
    cookie = cookie_for(client, user)

    async def scenario():
        from channels.db import database_sync_to_async

        comm = communicator(job.pk, cookie, after=5)
        await comm.connect()
        await database_sync_to_async(add_event)(job, 6)
        await database_sync_to_async(add_event)(job, 7)
        got = await receive_all(comm)
        await comm.disconnect()
        return got

    assert [e["seq"] for e in run(scenario)] == [6, 7]


def test_events_published_during_the_replay_are_neither_lost_nor_doubled(
    client, user, job, monkeypatch
):
    from mangagen import consumers

    cookie = cookie_for(client, user)
    original = consumers.events_after
    calls = []

    def replay_while_new_events_land(*, job, after, limit):
        snapshot = original(job=job, after=after, limit=limit)
        if not calls:
            calls.append(after)
            add_event(job, 6)  # committed and published mid-replay
            add_event(job, 7)
        return snapshot

    monkeypatch.setattr(consumers, "events_after", replay_while_new_events_land)

    async def scenario():
        comm = communicator(job.pk, cookie)
        await comm.connect()
        got = await receive_all(comm)
        await comm.disconnect()
        return got

    assert [e["seq"] for e in run(scenario)] == [1, 2, 3, 4, 5, 6, 7]


def test_a_dropped_live_event_is_filled_in_from_the_log(client, user, job):
    cookie = cookie_for(client, user)

    async def scenario():
        from channels.db import database_sync_to_async

        comm = communicator(job.pk, cookie, after=5)
        await comm.connect()
        await database_sync_to_async(add_event)(job, 6, False)  # lost on the layer
        await database_sync_to_async(add_event)(job, 7)
        got = await receive_all(comm)
        await comm.disconnect()
        return got

    assert [e["seq"] for e in run(scenario)] == [6, 7]


@pytest.mark.parametrize("who", ["stranger", "anonymous"])
def test_only_the_owner_may_listen(client, job, make_user, who):
    cookie = cookie_for(client, make_user()) if who == "stranger" else b""

    async def scenario():
        comm = communicator(job.pk, cookie)
        connected, _ = await comm.connect()
        output = await comm.receive_output(timeout=1)
        await comm.wait()
        return connected, output

    _, output = run(scenario)
    assert output == {"type": "websocket.close", "code": 4403}


def test_a_missing_job_is_refused_the_same_way(client, user):
    cookie = cookie_for(client, user)

    async def scenario():
        comm = communicator(999999, cookie)
        await comm.connect()
        return await comm.receive_output(timeout=1)

    assert run(scenario) == {"type": "websocket.close", "code": 4403}


def test_foreign_origins_are_refused(client, user, job):
    cookie = cookie_for(client, user)

    async def scenario():
        comm = communicator(job.pk, cookie, origin=b"https://evil.example")
        connected, _ = await comm.connect()
        return connected

    assert run(scenario) is False


def test_group_messages_are_per_job(user, job):
    assert group_name(job.pk) == f"job-{job.pk}"
    assert get_channel_layer() is not None


# --- bounds: idle streams and streams per person ---------------------------------------


def test_an_idle_stream_is_closed_with_its_own_code(client, user, job, settings):
    settings.WS_IDLE_SECONDS = 0  # idle the moment the replay is sent
    cookie = cookie_for(client, user)

    async def scenario():
        comm = communicator(job.pk, cookie)
        connected, _ = await comm.connect()
        assert connected
        replayed = [(await comm.receive_json_from())["seq"] for _ in range(5)]
        closed = await comm.receive_output()
        await comm.disconnect()
        return replayed, closed

    replayed, closed = run(scenario)
    assert replayed == [1, 2, 3, 4, 5]
    assert closed == {"type": "websocket.close", "code": 4408}


def test_a_stream_in_use_stays_open(client, user, job, settings):
    settings.WS_IDLE_SECONDS = 60
    cookie = cookie_for(client, user)

    async def scenario():
        comm = communicator(job.pk, cookie, after=5)
        await comm.connect()
        await comm.send_json_to({"type": "ping"})
        pong = await comm.receive_json_from(timeout=10)
        still_open = await comm.receive_nothing(timeout=0.2)
        await comm.disconnect()
        return pong, still_open

    pong, still_open = run(scenario)
    assert pong == {"type": "pong", "seq": 5} and still_open


def test_a_person_may_hold_only_so_many_streams(client, user, job, settings):
    settings.WS_MAX_CONNECTIONS_PER_PERSON = 2
    settings.WS_IDLE_SECONDS = 60
    cookie = cookie_for(client, user)

    async def scenario():
        first, second, third = (communicator(job.pk, cookie, after=5) for _ in range(3))
        assert (await first.connect())[0] and (await second.connect())[0]
        await third.connect()
        refused = await third.receive_output()
        await first.disconnect()  # gives its slot back
        fourth = communicator(job.pk, cookie, after=5)
        await fourth.connect()
        fourth_open = await fourth.receive_nothing(timeout=0.2)
        for comm in (second, third, fourth):
            await comm.disconnect()
        return refused, fourth_open

    refused, fourth_open = run(scenario)
    assert refused == {"type": "websocket.close", "code": 4429}
    assert fourth_open


def test_a_refused_stream_takes_no_slot(client, user, job, make_user, settings):
    settings.WS_MAX_CONNECTIONS_PER_PERSON = 1
    stranger_cookie = cookie_for(client, make_user())
    cookie = cookie_for(client, user)

    async def scenario():
        strangers = [communicator(job.pk, stranger_cookie) for _ in range(3)]
        for comm in strangers:
            await comm.connect()
            assert (await comm.receive_output())["code"] == 4403
        mine = communicator(job.pk, cookie, after=5)
        connected, _ = await mine.connect()
        still_open = await mine.receive_nothing(timeout=0.2)
        await mine.disconnect()
        return connected and still_open

    assert run(scenario)


def test_frames_that_mean_nothing_are_ignored_and_the_slot_is_given_back(
    client, user, job, settings
):
    """Only {"type": "ping"} means anything; a frame the consumer cannot read
    must not crash it (a crashed consumer never gives its stream slot back)."""
    settings.WS_MAX_CONNECTIONS_PER_PERSON = 1
    cookie = cookie_for(client, user)

    async def scenario():
        comm = communicator(job.pk, cookie, after=5)
        await comm.connect()
        for frame in ("[1]", '"ping"', "not json", "{"):
            await comm.send_to(text_data=frame)
        await comm.send_to(bytes_data=b"\x00\x01")
        await comm.send_json_to({"type": "ping"})
        pong = await comm.receive_json_from()
        await comm.disconnect()
        again = communicator(job.pk, cookie, after=5)
        connected, _ = await again.connect()
        still_open = await again.receive_nothing(timeout=0.2)
        await again.disconnect()
        return pong, connected and still_open

    pong, reconnected = run(scenario)
    assert pong == {"type": "pong", "seq": 5}
    assert reconnected


def test_a_ping_brings_a_dropped_last_event(client, user, job):
    """A dropped event shows no gap until the next one: a quiet job's page
    pings, and the answer comes after what the log holds."""
    cookie = cookie_for(client, user)

    async def scenario():
        from channels.db import database_sync_to_async

        comm = communicator(job.pk, cookie, after=5)
        await comm.connect()
        await database_sync_to_async(add_event)(job, 6, False)  # lost on the layer
        assert await comm.receive_nothing(timeout=0.2)
        await comm.send_json_to({"type": "ping"})
        got = [await comm.receive_json_from(timeout=10) for _ in range(2)]
        got += await receive_all(comm, timeout=0.2)
        await comm.disconnect()
        return got

    got = run(scenario)
    assert [(e.get("type"), e["seq"]) for e in got] == [("test.event", 6), ("pong", 6)]


def test_catching_up_reads_the_log_to_its_end(client, user, job, monkeypatch):
    from mangagen import consumers

    monkeypatch.setattr(consumers, "CATCH_UP_BATCH", 2)  # five events: three batches
    assert [e["seq"] for e in replayed(job, cookie_for(client, user), after=0, count=5)] == [
        1,
        2,
        3,
        4,
        5,
    ]
