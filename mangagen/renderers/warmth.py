"""The simulated GPU pool's warmth, shared by every worker process through Redis.

Like a provider that deallocates idle instances: if nothing rendered for
`idle_seconds`, the next render first waits `cold_start_seconds`; renders that
arrive while the pool is booting wait for the same boot, not a new one.
"""

from __future__ import annotations

import time

import redis
from django.conf import settings

# Atomically: how long must this render wait for the pool, and was it cold?
# KEYS[1] = ready_at (when the pool is or will be warm), KEYS[2] = last_used.
# ARGV = now, idle_seconds, cold_start_seconds. Returns {wait_ms, cold}.
_CLAIM = """
local now = tonumber(ARGV[1])
local idle = tonumber(ARGV[2])
local boot = tonumber(ARGV[3])
local ready_at = tonumber(redis.call('GET', KEYS[1]) or '0')
local last_used = tonumber(redis.call('GET', KEYS[2]) or '0')
if ready_at > now then
  redis.call('SET', KEYS[2], tostring(ready_at))
  return {math.floor((ready_at - now) * 1000), 1}
end
if last_used > 0 and now - last_used <= idle then
  redis.call('SET', KEYS[2], tostring(now))
  return {0, 0}
end
redis.call('SET', KEYS[1], tostring(now + boot))
redis.call('SET', KEYS[2], tostring(now + boot))
return {math.floor(boot * 1000), 1}
"""


class GpuPool:
    def __init__(self, *, url: str | None = None, prefix: str = "mangagen:gpu"):
        self.client = redis.Redis.from_url(url or settings.REDIS_URL)
        self.keys = [f"{prefix}:ready_at", f"{prefix}:last_used"]
        self._claim = self.client.register_script(_CLAIM)

    def claim(self, *, idle_seconds: float, cold_start_seconds: float) -> tuple[float, bool]:
        """Returns (seconds to wait before rendering, whether the pool was cold)."""
        wait_ms, cold = self._claim(
            keys=self.keys, args=[time.time(), idle_seconds, cold_start_seconds]
        )
        return wait_ms / 1000, bool(cold)

    def expected_wait(self, *, idle_seconds: float, cold_start_seconds: float) -> float:
        """Without claiming anything: how long a render starting now would wait."""
        ready_at, last_used = (float(v or 0) for v in self.client.mget(self.keys))
        now = time.time()
        if ready_at > now:
            return ready_at - now
        if last_used and now - last_used <= idle_seconds:
            return 0.0
        return cold_start_seconds

    def touch(self) -> None:
        """Marks the pool as used now (at the end of a render)."""
        self.client.set(self.keys[1], str(time.time()))

    def reset(self) -> None:
        self.client.delete(*self.keys)
