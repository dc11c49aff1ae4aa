"""The job event stream at /ws/jobs/<id>/?after=N.

Join the group first, then replay the log after N, then forward live events
with a greater seq: no gap and no duplicate however late the client
attaches. A live event that jumps ahead (the channel layer dropped one) is
filled in from the log before it is sent.

Bounded: a stream with no message either way for WS_IDLE_SECONDS is closed
(the page reconnects when the person comes back), and a person may hold at
most WS_MAX_CONNECTIONS_PER_PERSON streams at once. Each refusal has its own
close code.
"""

import asyncio
import json
from enum import IntEnum
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.core.cache import cache

from mangagen.jobs.events import events_after, group_name
from mangagen.jobs.models import Job


class CloseCode(IntEnum):
    """Why the server closed a stream (docs/api.md, "Close codes")."""

    FORBIDDEN = 4403  # not signed in, or not the job's owner
    IDLE = 4408  # nothing sent either way for WS_IDLE_SECONDS
    TOO_MANY = 4429  # the person already holds WS_MAX_CONNECTIONS_PER_PERSON streams


# A process that dies without disconnecting leaks its count; the counter expires
# this long after a person's first stream, so a leak never outlives it.
OPEN_COUNT_TTL_SECONDS = 6 * 60 * 60

# Events read from the log at a time when catching up (until a batch is short).
CATCH_UP_BATCH = 1000


class JobEventsConsumer(AsyncJsonWebsocketConsumer):
    counted_user = None
    idle_watch = None
    activity = None

    async def connect(self):
        self.job = await self._owned_job()
        if self.job is None:
            await self.accept()
            await self.close(code=CloseCode.FORBIDDEN)
            return
        if not await self._count_in(self.job.owner_id):
            await self.accept()
            await self.close(code=CloseCode.TOO_MANY)
            return
        self.group = group_name(self.job.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        query = parse_qs(self.scope.get("query_string", b"").decode())
        try:
            self.last_sent = max(0, int(query.get("after", ["0"])[0]))
        except ValueError:
            self.last_sent = 0
        await self._catch_up()
        self.activity = asyncio.Event()
        self.idle_watch = asyncio.get_running_loop().create_task(self._close_when_idle())

    async def disconnect(self, code):
        if self.idle_watch is not None:
            self.idle_watch.cancel()
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)
        await self._count_out()

    async def send_json(self, content, close=False):
        self._mark_active()
        await super().send_json(content, close=close)

    def _mark_active(self):
        if self.activity is not None:
            self.activity.set()

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
        """A frame from the client: only {"type": "ping"} means anything. Any
        other frame (binary, not JSON, not an object) is ignored: a consumer
        that raised would be closed without `disconnect`, and the person's
        stream slot would stay taken."""
        self._mark_active()
        try:
            content = json.loads(text_data) if text_data is not None else None
        except ValueError:
            return
        if isinstance(content, dict) and content.get("type") == "ping":
            # A last event the channel layer dropped shows no gap until the
            # next one: the ping is when the page gets it from the log.
            await self._catch_up()
            await self.send_json({"type": "pong", "seq": self.last_sent})

    async def _catch_up(self):
        while True:
            events = await self._events_after(self.last_sent)
            for event in events:
                if event["seq"] > self.last_sent:
                    await self.send_json(event)
                    self.last_sent = event["seq"]
            if len(events) < CATCH_UP_BATCH:
                return

    async def _close_when_idle(self):
        while True:
            self.activity.clear()
            try:
                await asyncio.wait_for(self.activity.wait(), timeout=settings.WS_IDLE_SECONDS)
            except TimeoutError:
                await self.close(code=CloseCode.IDLE)
                return

    async def _count_in(self, user_id: int) -> bool:
        """Takes one of the person's stream slots; False (nothing taken) when none is free."""
        key = f"ws-open:{user_id}"
        if await cache.aadd(key, 1, timeout=OPEN_COUNT_TTL_SECONDS):
            opened = 1
        else:
            try:
                opened = await cache.aincr(key)
            except ValueError:  # expired just now
                await cache.aadd(key, 1, timeout=OPEN_COUNT_TTL_SECONDS)
                opened = 1
        if opened > settings.WS_MAX_CONNECTIONS_PER_PERSON:
            await self._decrement(key)
            return False
        self.counted_user = user_id
        return True

    async def _count_out(self):
        if self.counted_user is not None:
            await self._decrement(f"ws-open:{self.counted_user}")
            self.counted_user = None

    @staticmethod
    async def _decrement(key: str) -> None:
        try:
            if await cache.adecr(key) <= 0:
                await cache.adelete(key)
        except ValueError:
            pass  # expired: nothing left to give back

    @database_sync_to_async
    def _owned_job(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            return None
        try:
            job_id = int(self.scope["url_route"]["kwargs"]["job_id"])
        except (KeyError, ValueError):
            return None
        return Job.objects.filter(pk=job_id, owner=user).first()

    @database_sync_to_async
    def _events_after(self, after: int):
        return events_after(job=self.job, after=after, limit=CATCH_UP_BATCH)
