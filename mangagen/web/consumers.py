"""The job event stream at /ws/jobs/<id>/?after=N, and a comic's stream of its roughs at
/ws/storyboards/<id>/ (`StoryboardStreamConsumer`).

Join the group first, then replay the log after N, then forward live events
with a greater seq: no gap and no duplicate however late the client
attaches. A live event that jumps ahead (the channel layer dropped one) is
filled in from the log before it is sent.

A client that asks with `batch=1` gets what it missed — the replay, a gap
filled, what a ping finds — as `{"type": "events", "events": [...]}`
messages, up to CATCH_UP_BATCH events each, instead of one frame per event:
a late attach to a long job is a few frames, not hundreds. Live events are
single events either way, and a client that does not ask gets single events
only (the contract every client was written against).

Bounded: a stream with no message either way for WS_IDLE_SECONDS is closed
(the page reconnects when the person comes back), and a person may hold at
most WS_MAX_CONNECTIONS_PER_PERSON streams at once: each open stream holds
one of the person's numbered slots in the cache, leased for
SLOT_LEASE_SECONDS and renewed while the stream is open, so a process that
dies without disconnecting frees its slots when their leases run out, and no
lease runs out under a stream that is still open. Each refusal has its own
close code. A ping reads the log at most once every PING_LOG_READ_SECONDS
(the page pings once a minute): a client that pings in a loop costs no
database query per frame.
"""

import asyncio
import contextlib
import json
import time
from enum import IntEnum
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.core.cache import cache

from mangagen.jobs.events import events_after, group_name
from mangagen.jobs.models import Job
from mangagen.roughs.push import group_name as rough_group
from mangagen.roughs.selectors import roughs_body
from mangagen.storyboards.models import Storyboard


class CloseCode(IntEnum):
    """Why the server closed a stream (docs/api.md, "Close codes")."""

    FORBIDDEN = 4403  # not signed in, or not the job's owner
    IDLE = 4408  # nothing sent either way for WS_IDLE_SECONDS
    TOO_MANY = 4429  # the person already holds WS_MAX_CONNECTIONS_PER_PERSON streams


# A stream's slot is leased this long and renewed every third of it while the stream
# is open; a process that dies without disconnecting leaks its slots this long at most.
SLOT_LEASE_SECONDS = 120.0

# A ping reads the log (one query) at most this often per stream; one in between is
# answered with what the stream has sent.
PING_LOG_READ_SECONDS = 10.0

# Events read from the log at a time when catching up (until a batch is short); with
# `batch=1`, also the most events one `events` message holds.
CATCH_UP_BATCH = 1000

# The message that carries many events to a client that asked with `batch=1`.
EVENTS_MESSAGE = "events"


class BoundedStream(AsyncJsonWebsocketConsumer):
    """What every stream of the studio shares: a person's numbered slot (at most
    WS_MAX_CONNECTIONS_PER_PERSON streams at once), closed after WS_IDLE_SECONDS with
    nothing sent either way, and its close codes sent as plain ints."""

    slot_key = None
    slot_keeper = None
    idle_watch = None
    activity = None

    async def close(self, code=None, reason=None):
        """Closes the stream with `code` sent as a plain int: daphne's websocket server
        (autobahn) refuses any other type, an IntEnum member included, and would end
        the stream with 1011 (internal error) instead of our code."""
        await super().close(code=None if code is None else int(code), reason=reason)

    async def _join(self, owned, group_of) -> bool:
        """Accepts the stream into `group_of(owned.pk)`, holding one of the owner's
        slots; or accepts and closes it, with 4403 when `owned` is None (not signed in,
        or not the owner's) and 4429 when the owner holds all their slots. Whether it
        joined."""
        if owned is None:
            await self.accept()
            await self.close(code=CloseCode.FORBIDDEN)
            return False
        if not await self._take_slot(owned.owner_id):
            await self.accept()
            await self.close(code=CloseCode.TOO_MANY)
            return False
        self.group = group_of(owned.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        return True

    async def disconnect(self, code):
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)
        await self._stop_watching()

    def _owned(self, model, url_kwarg: str):
        """The signed-in person's `model` row that the URL's `url_kwarg` names, or None
        (not signed in, not a number, someone else's or none). Runs in a thread."""
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            return None
        try:
            pk = int(self.scope["url_route"]["kwargs"][url_kwarg])
        except (KeyError, ValueError):
            return None
        return model.objects.filter(pk=pk, owner=user).first()

    def _is_ping(self, text_data) -> bool:
        """Whether a frame from the client is {"type": "ping"}, the only one that means
        anything (the stream is active either way). Any other frame (binary, not JSON,
        not an object) is ignored: a consumer that raised would be closed without
        `disconnect`, and the person's stream slot would stay taken."""
        self._mark_active()
        try:
            content = json.loads(text_data) if text_data is not None else None
        except ValueError:
            return False
        return isinstance(content, dict) and content.get("type") == "ping"

    async def send_json(self, content, close=False):
        self._mark_active()
        await super().send_json(content, close=close)

    def _mark_active(self):
        if self.activity is not None:
            self.activity.set()

    def _watch_idleness(self):
        self.activity = asyncio.Event()
        self.idle_watch = asyncio.get_running_loop().create_task(self._close_when_idle())

    async def _stop_watching(self):
        if self.idle_watch is not None:
            self.idle_watch.cancel()
        await self._give_slot_back()

    async def _close_when_idle(self):
        while True:
            self.activity.clear()
            try:
                await asyncio.wait_for(self.activity.wait(), timeout=settings.WS_IDLE_SECONDS)
            except TimeoutError:
                await self.close(code=CloseCode.IDLE)
                return

    async def _take_slot(self, user_id: int) -> bool:
        """Takes a free one of the person's slots (nothing taken when none is free)."""
        for number in range(1, settings.WS_MAX_CONNECTIONS_PER_PERSON + 1):
            key = f"ws-slot:{user_id}:{number}"
            if await cache.aadd(key, self.channel_name, timeout=SLOT_LEASE_SECONDS):
                self.slot_key = key
                self.slot_keeper = asyncio.get_running_loop().create_task(self._keep_slot())
                return True
        return False

    async def _keep_slot(self):
        """Renews the slot's lease while the stream is open (cancelled when it closes)."""
        while True:
            await asyncio.sleep(SLOT_LEASE_SECONDS / 3)
            with contextlib.suppress(Exception):  # the next renewal tries again
                await self._renew_slot()

    async def _renew_slot(self):
        if await cache.aget(self.slot_key) == self.channel_name:
            await cache.atouch(self.slot_key, SLOT_LEASE_SECONDS)
        else:  # lost (Redis was emptied): taken back if still free
            await cache.aadd(self.slot_key, self.channel_name, SLOT_LEASE_SECONDS)

    async def _give_slot_back(self):
        if self.slot_keeper is not None:
            self.slot_keeper.cancel()
        if self.slot_key is not None:
            if await cache.aget(self.slot_key) == self.channel_name:
                await cache.adelete(self.slot_key)
            self.slot_key = None


class JobEventsConsumer(BoundedStream):
    last_log_read = float("-inf")
    batched = False

    async def connect(self):
        self.job = await self._owned_job()
        if not await self._join(self.job, group_name):
            return
        query = parse_qs(self.scope.get("query_string", b"").decode())
        try:
            self.last_sent = max(0, int(query.get("after", ["0"])[0]))
        except ValueError:
            self.last_sent = 0
        self.batched = query.get("batch", ["0"])[0] == "1"
        await self._catch_up()
        self._watch_idleness()

    async def job_event(self, message):
        event = message["event"]
        if event["seq"] <= self.last_sent:
            return
        if event["seq"] > self.last_sent + 1:
            await self._catch_up()  # fills the gap from the log, this event included
            return
        await self.send_json(event)
        self.last_sent = event["seq"]

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        """Only {"type": "ping"} means anything; any other frame is ignored (`_is_ping`)."""
        if self._is_ping(text_data):
            # A last event the channel layer dropped shows no gap until the
            # next one: the ping is when the page gets it from the log.
            if time.monotonic() - self.last_log_read >= PING_LOG_READ_SECONDS:
                await self._catch_up()
            await self.send_json({"type": "pong", "seq": self.last_sent})

    async def _catch_up(self):
        self.last_log_read = time.monotonic()
        while True:
            events = await self._events_after(self.last_sent)
            missed = [event for event in events if event["seq"] > self.last_sent]
            if missed and self.batched:
                await self.send_json({"type": EVENTS_MESSAGE, "events": missed})
                self.last_sent = missed[-1]["seq"]
            else:
                for event in missed:
                    await self.send_json(event)
                    self.last_sent = event["seq"]
            if len(events) < CATCH_UP_BATCH:
                return

    @database_sync_to_async
    def _owned_job(self):
        return self._owned(Job, "job_id")

    @database_sync_to_async
    def _events_after(self, after: int):
        return events_after(job=self.job, after=after, limit=CATCH_UP_BATCH)


class StoryboardStreamConsumer(BoundedStream):
    """The comic's stream at /ws/storyboards/<id>/: its roughs as each changes.

    Only the comic's owner (others are closed with 4403). On connect the server sends
    `{"type": "roughs", "data": <GET …/roughs/>}`, then `{"type": "rough", "data":
    <one rough>}` each time a rough is drawn, ready or failed. The channel layer may
    lose one: a ping is answered with the whole list again (at most every
    PING_LOG_READ_SECONDS; a `pong` otherwise), as the page's polling fallback reads
    it (docs/api.md, "The comic's stream")."""

    last_read = float("-inf")

    async def connect(self):
        self.storyboard = await self._owned_storyboard()
        if not await self._join(self.storyboard, rough_group):
            return
        await self._send_all()
        self._watch_idleness()

    async def storyboard_rough(self, message):
        await self.send_json({"type": "rough", "data": message["rough"]})

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        """Only {"type": "ping"} means anything; any other frame is ignored."""
        if self._is_ping(text_data):
            if time.monotonic() - self.last_read >= PING_LOG_READ_SECONDS:
                await self._send_all()
            else:
                await self.send_json({"type": "pong"})

    async def _send_all(self):
        self.last_read = time.monotonic()
        await self.send_json({"type": "roughs", "data": await self._roughs()})

    @database_sync_to_async
    def _owned_storyboard(self):
        return self._owned(Storyboard, "storyboard_id")

    @database_sync_to_async
    def _roughs(self):
        return roughs_body(storyboard=self.storyboard)
