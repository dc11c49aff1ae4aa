"""Job events reach a shared (Redis) channel layer from one loop per process, in order."""

import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels_redis.core import RedisChannelLayer
from django.conf import settings

from mangagen.jobs import publisher


@pytest.fixture
def layer():
    return RedisChannelLayer(hosts=[settings.REDIS_URL], prefix=f"test-publisher-{id(object())}")


def receive(layer, channel, count):
    async def go():
        return [
            (await asyncio.wait_for(layer.receive(channel), 20))["event"]["seq"]
            for _ in range(count)
        ]

    return async_to_sync(go)()


def test_messages_reach_the_group_in_the_order_they_were_handed_over(layer):
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)("job-1", channel)
    sender = publisher.Publisher(layer)
    try:
        for seq in range(1, 41):
            sender.send("job-1", {"type": "job.event", "event": {"seq": seq}})
        assert receive(layer, channel, 40) == list(range(1, 41))
    finally:
        sender.stop()


def test_a_failed_send_is_logged_and_the_next_one_still_goes(layer, caplog):
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)("job-2", channel)
    sender = publisher.Publisher(layer)
    try:
        sender.send("an invalid group name!", {"type": "job.event", "event": {"seq": 0}})
        sender.send("job-2", {"type": "job.event", "event": {"seq": 1}})
        assert receive(layer, channel, 1) == [1]
        assert "Could not publish" in caplog.text
    finally:
        sender.stop()


def test_one_publisher_per_process_and_layer(layer):
    first = publisher.publisher_for(layer)
    assert publisher.publisher_for(layer) is first
    assert publisher.serves(layer)
