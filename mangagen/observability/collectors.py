"""Gauges of shared state, read when Prometheus scrapes (in the web process that answers).

Queue depth and the GPU pool live in Redis, shared by every process: one
reading at scrape time is the truth, where gauges pushed from each process
would disagree. A source that does not answer (Redis away) leaves its gauges
out and says so in `mangagen_metrics_source_up{source}`; the scrape itself
still succeeds, so the counters stay visible during an outage.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import redis
from django.conf import settings
from django.db import DatabaseError
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ledger.metrics import HoldsCollector
from mangagen.kernel.broker import holdings, quick_client
from mangagen.renderers.gpu_pool import GpuPool, PoolState

from . import metrics

logger = logging.getLogger(__name__)


def container_states(state: PoolState) -> dict[str, int]:
    """Containers by state: booting, rendering (busy and booted), warm (free, inside its
    idle window) or cold (free; its next render pays a cold start)."""
    counts = dict.fromkeys(("booting", "rendering", "warm", "cold"), 0)
    for container in state.containers:
        if container.booting:
            counts["booting"] += 1
        elif container.busy:
            counts["rendering"] += 1
        elif container.warm:
            counts["warm"] += 1
        else:
            counts["cold"] += 1
    return counts


def redis_gauges() -> list[GaugeMetricFamily]:
    """Celery queue depth and the GPU pool's containers and waiting renders, read from
    Redis now. Raises RedisError when Redis does not answer."""
    client = quick_client(settings.REDIS_URL)
    depth, unacked = holdings(client)
    pool = GpuPool()
    pool.client = client  # the pool's reads, without its own client's retries
    state = pool.state()
    queues = GaugeMetricFamily(
        metrics.QUEUE_DEPTH, "Celery messages waiting in each queue.", labels=["queue"]
    )
    for queue, count in depth.items():
        queues.add_metric([queue], count)
    containers = GaugeMetricFamily(
        metrics.GPU_POOL_CONTAINERS, "The GPU pool's containers by state.", labels=["state"]
    )
    for name, count in container_states(state).items():
        containers.add_metric([name], count)
    waiting = GaugeMetricFamily(
        metrics.GPU_POOL_WAITING,
        "Renders waiting for a container, by priority.",
        labels=["priority"],
    )
    waiting.add_metric(["confirmed"], state.waiting_confirmed)
    waiting.add_metric(["speculative"], state.waiting_speculative)
    waiting.add_metric(["rough"], state.waiting_rough)
    taken = GaugeMetricFamily(
        metrics.QUEUE_UNACKED, "Celery messages taken by a worker and not yet done.", value=unacked
    )
    return [queues, taken, containers, waiting]


class ScrapeTimeCollector(Collector):
    """The shared gauges: Redis's (queues, the GPU pool) and the ledger's open holds.

    A source that does not answer leaves its gauges out, and
    `mangagen_metrics_source_up{source}` says which one."""

    def describe(self) -> list:
        return []  # nothing to read at registration: every figure is read at scrape time

    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily(
            metrics.METRICS_SOURCE_UP,
            "Whether the source of the scrape-time gauges answered (1) or not (0).",
            labels=["source"],
        )
        found: list[GaugeMetricFamily] = []
        try:
            found += redis_gauges()
            up.add_metric(["redis"], 1)
        except redis.RedisError as exc:
            logger.warning("Metrics: Redis did not answer (%s)", exc)
            up.add_metric(["redis"], 0)
        try:
            found += list(HoldsCollector().collect())
            up.add_metric(["database"], 1)
        except DatabaseError as exc:
            logger.warning("Metrics: the database did not answer (%s)", exc)
            up.add_metric(["database"], 0)
        yield up
        yield from found
