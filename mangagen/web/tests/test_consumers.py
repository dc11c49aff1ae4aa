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
from tests.support.waiting import wait_for

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


# What a slow machine may take to answer; each wait ends as soon as its answer comes.
PATIENCE = 10


class Communicator(WebsocketCommunicator):
    """Channels' test client, patient: its one-second defaults fail on a busy machine."""

    async def connect(self, timeout=PATIENCE):
        return await super().connect(timeout=timeout)

    async def receive_from(self, timeout=PATIENCE):
        return await super().receive_from(timeout=timeout)

    async def receive_json_from(self, timeout=PATIENCE):
        return await super().receive_json_from(timeout=timeout)

    async def receive_output(self, timeout=PATIENCE):
        return await super().receive_output(timeout=timeout)

    async def disconnect(self, code=1000, timeout=PATIENCE):
        return await super().disconnect(code=code, timeout=timeout)

    async def wait(self, timeout=PATIENCE):
        return await super().wait(timeout=timeout)


def communicator(job_id, cookie=b"", after=None, origin=b"http://testserver", batch=False):
    query = ([f"after={after}"] if after is not None else []) + (["batch=1"] if batch else [])
    path = f"/ws/jobs/{job_id}/" + (f"?{'&'.join(query)}" if query else "")
    headers = [(b"origin", origin)]
    if cookie:
        headers.append((b"cookie", cookie))
    return Communicator(application, path, headers=headers)


async def until_pong(comm) -> tuple[list[dict], dict]:
    """Pings, then reads until the pong: (every event sent before it, the pong).

    The consumer answers a ping after it has caught up with the log, and handles
    one message at a time, so whatever the stream was going to send of what the
    log held is sent before the pong; a duplicate or an extra event would show
    there. The pong is the marker that ends the wait, never a quiet spell.
    """
    await comm.send_json_to({"type": "ping"})
    got = []
    while True:
        message = await comm.receive_json_from()
        if message.get("type") == "pong":
            return got, message
        got.append(message)


async def events_until_pong(comm) -> list[dict]:
    return (await until_pong(comm))[0]


async def is_open(comm) -> bool:
    """The stream answers a ping (the proof that it is open is the answer)."""
    _, pong = await until_pong(comm)
    return pong["type"] == "pong"


def run(coro):
    return async_to_sync(coro)()


def replayed(job, cookie, *, after) -> list[dict]:
    """What a stream opened with `after` sends, up to the answer to a ping."""

    async def scenario():
        comm = communicator(job.pk, cookie, after=after)
        await comm.connect()
        got = await events_until_pong(comm)
        await comm.disconnect()
        return got

    return run(scenario)


def test_a_late_attach_gets_the_whole_log(client, user, job):
    cookie = cookie_for(client, user)

    async def scenario():
        comm = communicator(job.pk, cookie)
        connected, _ = await comm.connect()
        assert connected
        got = await events_until_pong(comm)
        await comm.disconnect()
        return got

    got = run(scenario)
    assert [e["seq"] for e in got] == [1, 2, 3, 4, 5]
    assert got[0]["type"] == "test.event" and got[0]["data"] == {"n": 1} and got[0]["at"]


def test_a_reconnect_with_after_gets_exactly_the_missing_events(client, user, job):
    assert [e["seq"] for e in replayed(job, cookie_for(client, user), after=3)] == [4, 5]


def test_live_events_follow_the_replay(client, user, job):
    cookie = cookie_for(client, user)

    async def scenario():
        from channels.db import database_sync_to_async

        comm = communicator(job.pk, cookie, after=5)
        await comm.connect()
        assert await events_until_pong(comm) == []  # caught up: nothing after 5 yet
        await database_sync_to_async(add_event)(job, 6)
        await database_sync_to_async(add_event)(job, 7)
        # Live, as published: no ping asks for them.
        got = [await comm.receive_json_from() for _ in range(2)]
        got += await events_until_pong(comm)  # and nothing else (no duplicate)
        await comm.disconnect()
        return got

    assert [e["seq"] for e in run(scenario)] == [6, 7]


def test_events_published_during_the_replay_are_neither_lost_nor_doubled(
    client, user, job, monkeypatch
):
    from mangagen.web import consumers

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
        # 6 and 7 come through the channel layer, which a ping does not wait for:
        # read the seven, then ping for anything more (a duplicate).
        got = [await comm.receive_json_from() for _ in range(7)]
        got += await events_until_pong(comm)
        await comm.disconnect()
        return got

    assert [e["seq"] for e in run(scenario)] == [1, 2, 3, 4, 5, 6, 7]


def test_a_dropped_live_event_is_filled_in_from_the_log(client, user, job):
    cookie = cookie_for(client, user)

    async def scenario():
        from channels.db import database_sync_to_async

        comm = communicator(job.pk, cookie, after=5)
        await comm.connect()
        assert await events_until_pong(comm) == []  # caught up before 6 is written
        await database_sync_to_async(add_event)(job, 6, False)  # lost on the layer
        await database_sync_to_async(add_event)(job, 7)
        # 7 arrives live and shows the gap: 6 is read from the log, before 7.
        got = [await comm.receive_json_from() for _ in range(2)]
        got += await events_until_pong(comm)
        await comm.disconnect()
        return got

    assert [e["seq"] for e in run(scenario)] == [6, 7]


# --- batch=1: what was missed in few messages --------------------------------------------------


def test_a_late_attach_that_asks_for_batches_gets_the_log_in_one_message(client, user, job):
    cookie = cookie_for(client, user)

    async def scenario():
        from channels.db import database_sync_to_async

        comm = communicator(job.pk, cookie, after=1, batch=True)
        await comm.connect()
        replay = await events_until_pong(comm)
        await database_sync_to_async(add_event)(job, 6)
        live = await comm.receive_json_from()
        after_live = await events_until_pong(comm)
        await comm.disconnect()
        return replay, live, after_live

    replay, live, after_live = run(scenario)
    (message,) = replay
    assert message["type"] == "events" and set(message) == {"type", "events"}
    assert [e["seq"] for e in message["events"]] == [2, 3, 4, 5]
    # The same events as a single-event client gets, field for field.
    assert message["events"] == replayed(job, cookie, after=1)[:4]
    assert live["seq"] == 6 and live["type"] == "test.event"  # live: one event, as ever
    assert after_live == []


def test_a_long_log_comes_in_messages_of_at_most_catch_up_batch_events(
    client, user, job, monkeypatch
):
    from mangagen.web import consumers

    monkeypatch.setattr(consumers, "CATCH_UP_BATCH", 2)
    cookie = cookie_for(client, user)

    async def scenario():
        comm = communicator(job.pk, cookie, after=0, batch=True)
        await comm.connect()
        got = await events_until_pong(comm)
        await comm.disconnect()
        return got

    messages = run(scenario)
    assert [[e["seq"] for e in m["events"]] for m in messages] == [[1, 2], [3, 4], [5]]


def test_a_gap_is_filled_in_one_message_when_batches_were_asked_for(client, user, job):
    cookie = cookie_for(client, user)

    async def scenario():
        from channels.db import database_sync_to_async

        comm = communicator(job.pk, cookie, after=5, batch=True)
        await comm.connect()
        assert await events_until_pong(comm) == []
        await database_sync_to_async(add_event)(job, 6, False)  # lost on the layer
        await database_sync_to_async(add_event)(job, 7, False)
        await database_sync_to_async(add_event)(job, 8)
        got = [await comm.receive_json_from()]
        got += await events_until_pong(comm)
        await comm.disconnect()
        return got

    (message,) = run(scenario)
    assert message["type"] == "events"
    assert [e["seq"] for e in message["events"]] == [6, 7, 8]


def test_events_after_reads_each_event_as_its_message(job):
    from mangagen.jobs.events import events_after

    assert events_after(job=job, after=2) == [e.as_message() for e in job.events.filter(seq__gt=2)]


@pytest.mark.parametrize("who", ["stranger", "anonymous"])
def test_only_the_owner_may_listen(client, job, make_user, who):
    cookie = cookie_for(client, make_user()) if who == "stranger" else b""

    async def scenario():
        comm = communicator(job.pk, cookie)
        connected, _ = await comm.connect()
        output = await comm.receive_output()
        await comm.disconnect()
        return connected, output

    _, output = run(scenario)
    assert output == {"type": "websocket.close", "code": 4403}


def test_a_missing_job_is_refused_the_same_way(client, user):
    cookie = cookie_for(client, user)

    async def scenario():
        comm = communicator(999999, cookie)
        await comm.connect()
        return await comm.receive_output()

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
        first = await until_pong(comm)
        second = await until_pong(comm)  # answered again: the stream stayed open
        await comm.disconnect()
        return first, second

    first, second = run(scenario)
    assert first == second == ([], {"type": "pong", "seq": 5})


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
        fourth_open = await is_open(fourth)
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
        still_open = await is_open(mine)
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
        nothing_sent, pong = await until_pong(comm)
        assert nothing_sent == []
        await comm.disconnect()
        again = communicator(job.pk, cookie, after=5)
        connected, _ = await again.connect()
        still_open = await is_open(again)
        await again.disconnect()
        return pong, connected and still_open

    pong, reconnected = run(scenario)
    assert pong == {"type": "pong", "seq": 5}
    assert reconnected


def test_a_ping_brings_a_dropped_last_event(client, user, job, monkeypatch):
    """A dropped event shows no gap until the next one: a quiet job's page
    pings (once a minute), and the answer comes after what the log holds."""
    from mangagen.web import consumers

    monkeypatch.setattr(consumers, "PING_LOG_READ_SECONDS", 0)
    cookie = cookie_for(client, user)

    async def scenario():
        from channels.db import database_sync_to_async

        comm = communicator(job.pk, cookie, after=5)
        await comm.connect()
        assert await until_pong(comm) == ([], {"type": "pong", "seq": 5})  # caught up
        await database_sync_to_async(add_event)(job, 6, False)  # lost on the layer
        got, pong = await until_pong(comm)
        await comm.disconnect()
        return got, pong

    got, pong = run(scenario)
    assert [(e["type"], e["seq"]) for e in got] == [("test.event", 6)]
    assert pong == {"type": "pong", "seq": 6}


def test_catching_up_reads_the_log_to_its_end(client, user, job, monkeypatch):
    from mangagen.web import consumers

    monkeypatch.setattr(consumers, "CATCH_UP_BATCH", 2)  # five events: three batches
    assert [e["seq"] for e in replayed(job, cookie_for(client, user), after=0)] == [1, 2, 3, 4, 5]


def test_pings_in_a_loop_read_the_log_at_most_once_a_while(client, user, job, monkeypatch):
    from mangagen.web import consumers

    reads = []
    original = consumers.events_after

    def counted(**kwargs):
        reads.append(kwargs["after"])
        return original(**kwargs)

    monkeypatch.setattr(consumers, "events_after", counted)
    monkeypatch.setattr(consumers, "PING_LOG_READ_SECONDS", 3600)
    cookie = cookie_for(client, user)

    async def scenario():
        comm = communicator(job.pk, cookie, after=5)
        await comm.connect()
        pongs = [(await until_pong(comm))[1] for _ in range(50)]
        await comm.disconnect()
        return pongs

    pongs = run(scenario)
    assert pongs == [{"type": "pong", "seq": 5}] * 50
    assert reads == [5]  # the connection's catch-up; no ping read the log again


def test_a_stream_keeps_its_slot_past_the_lease_while_it_is_open(
    client, user, job, settings, monkeypatch
):
    """The slot's lease is renewed while its stream is open: however long the
    stream lives, the person's cap holds (a counter's expiry once reset it)."""
    from mangagen.web import consumers

    settings.WS_MAX_CONNECTIONS_PER_PERSON = 1
    settings.WS_IDLE_SECONDS = 600
    monkeypatch.setattr(consumers, "SLOT_LEASE_SECONDS", 3.0)  # renewed every second
    renewals = []
    original = consumers.JobEventsConsumer._renew_slot

    async def counted(self):
        await original(self)
        renewals.append(self.slot_key)

    monkeypatch.setattr(consumers.JobEventsConsumer, "_renew_slot", counted)
    cookie = cookie_for(client, user)

    async def scenario():
        import asyncio

        first = communicator(job.pk, cookie, after=5)
        await first.connect()
        assert await is_open(first)
        # Three renewals, a third of a lease apart: a whole lease has passed since
        # the slot was taken, so without them it would have expired by now.
        await asyncio.to_thread(
            wait_for, lambda: len(renewals) >= 3, timeout=30, what="three renewals of the slot"
        )
        second = communicator(job.pk, cookie, after=5)
        await second.connect()
        refused = await second.receive_output()
        await first.disconnect()
        third = communicator(job.pk, cookie, after=5)
        await third.connect()
        third_open = await is_open(third)
        await third.disconnect()
        return refused, third_open

    refused, third_open = run(scenario)
    assert refused == {"type": "websocket.close", "code": 4429}
    assert third_open
