"""The job event stream at /ws/jobs/<id>/?after=N.

Join the group first, then replay the log after N, then forward live events
with a greater seq: no gap and no duplicate however late the client
attaches. A live event that jumps ahead (the channel layer dropped one) is
filled in from the log before it is sent.
"""

from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from mangagen.jobs.events import events_after, group_name
from mangagen.jobs.models import Job

FORBIDDEN = 4403


class JobEventsConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        self.job = await self._owned_job()
        if self.job is None:
            await self.accept()
            await self.close(code=FORBIDDEN)
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

    async def disconnect(self, code):
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def job_event(self, message):
        event = message["event"]
        if event["seq"] <= self.last_sent:
            return
        if event["seq"] > self.last_sent + 1:
            await self._catch_up()  # fills the gap from the log, this event included
            return
        await self.send_json(event)
        self.last_sent = event["seq"]

    async def receive_json(self, content, **kwargs):
        if content.get("type") == "ping":
            await self.send_json({"type": "pong", "seq": self.last_sent})

    async def _catch_up(self):
        for event in await self._events_after(self.last_sent):
            if event["seq"] > self.last_sent:
                await self.send_json(event)
                self.last_sent = event["seq"]

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
        return events_after(job=self.job, after=after)
