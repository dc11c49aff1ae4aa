"""What the Celery broker (Redis) holds: the messages waiting in each queue, and those
workers have taken and not yet finished. Kombu keeps a queue's messages of each
priority step in a list of its own (`<queue>\\x06\\x16<step>`; step 0 is the queue's own
name) and every taken message in one hash until it is acknowledged."""

from __future__ import annotations

from functools import cache

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from mangagen.kernel.queues import Queue

PRIORITY_SEPARATOR = "\x06\x16"
PRIORITY_STEPS = (0, 3, 6, 9)
UNACKED_KEY = "unacked"


@cache
def quick_client(url: str) -> redis.Redis:
    """A client that answers in a second or raises: for reads that must not wait on retries
    (a scrape, a probe, a sweep)."""
    return redis.Redis.from_url(
        url, socket_timeout=1, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
    )


def holdings(client: redis.Redis) -> tuple[dict[str, int], int]:
    """(messages waiting in each queue, messages taken by workers and not yet done).
    Raises RedisError."""
    pipe = client.pipeline(transaction=False)
    for queue in Queue:
        for step in PRIORITY_STEPS:
            pipe.llen(f"{queue}{PRIORITY_SEPARATOR}{step}" if step else str(queue))
    pipe.hlen(UNACKED_KEY)
    *lengths, unacked = pipe.execute()
    steps = len(PRIORITY_STEPS)
    waiting = {
        str(queue): sum(lengths[n * steps : (n + 1) * steps]) for n, queue in enumerate(Queue)
    }
    return waiting, int(unacked)
