"""The GPU provider's pool of containers, shared by every worker process through Redis.

It behaves like a serverless GPU provider: `size` containers, each of which
scales to zero after `idle_seconds` without work and then pays its own
`cold_start_seconds` before its next render. A render waits for a free
container; while it waits it holds a *ticket* in one of three queues:

- `confirmed` — work a person is waiting for; always served first;
- `speculative` — work started early; it gets a container only when more are
  free than confirmed renders are waiting for, so it never takes a container
  a confirmed render wants. A waiting speculative ticket can be *promoted*
  (its person clicked Generate): it becomes confirmed work at once;
- `rough` — a panel's free draft: it gets a container only when more are free
  than confirmed and speculative renders are waiting for, so it never takes
  one a final wants.

Everything that decides (who gets which container) is one Lua script, so
any number of worker processes and threads agree. A holder renews its
container's lease while it renders (`renew`); a worker that dies stops
renewing and its container is free again after `lease_seconds`. A waiter
that stops asking (its worker died) leaves the queue after `stale_seconds`.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum

import redis
from django.conf import settings


class Priority(StrEnum):
    """The queues of the pool, first served first (the contract between the studio and
    the pool)."""

    CONFIRMED = "confirmed"
    SPECULATIVE = "speculative"
    ROUGH = "rough"  # a free draft: below every final, confirmed or speculative


class Withdrawn(Exception):
    """The render was withdrawn (its job ended) while it waited for a container, for
    its container's boot, or for a remote provider.

    `cancelled_at_provider` is true when a remote render had reached the provider and
    was cancelled there; `phases` is what its phases had taken by then and `state`
    where it stood (a ProviderState value), from which what cancelling saved is
    estimated."""

    def __init__(
        self,
        ticket: str,
        *,
        cancelled_at_provider: bool = False,
        phases: dict | None = None,
        state: str = "",
    ):
        super().__init__(ticket)
        self.ticket = ticket
        self.cancelled_at_provider = cancelled_at_provider
        self.phases = phases or {}
        self.state = state


# KEYS: none (the prefix is ARGV[1]; the keys below are built from it).
# ARGV: prefix, size, now, idle, boot, lease, ticket, priority, stale
# Returns {index, ready_at*1000, cold} when a container was given, {-1} when
# the ticket was withdrawn, {0, rank} while it must wait.
_ACQUIRE = """
local p, size, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local idle, boot, lease = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local ticket, priority, stale = ARGV[7], ARGV[8], tonumber(ARGV[9])
local qc, qs, qr = p .. ':q:confirmed', p .. ':q:speculative', p .. ':q:rough'
local seen = p .. ':seen'
if redis.call('EXISTS', p .. ':gone:' .. ticket) == 1 then
  redis.call('ZREM', qc, ticket); redis.call('ZREM', qs, ticket); redis.call('ZREM', qr, ticket)
  redis.call('HDEL', seen, ticket)
  return {-1}
end
-- Waiters that stopped asking (their worker died) leave the queues, once a second.
local cleaned = tonumber(redis.call('GET', p .. ':cleaned') or '0')
if now - cleaned >= 1 then
  redis.call('SET', p .. ':cleaned', tostring(now))
  for _, q in ipairs({qc, qs, qr}) do
    for _, t in ipairs(redis.call('ZRANGE', q, 0, -1)) do
      local last = tonumber(redis.call('HGET', seen, t) or '0')
      if now - last > stale then redis.call('ZREM', q, t); redis.call('HDEL', seen, t) end
    end
  end
end
if not redis.call('ZSCORE', qc, ticket) and not redis.call('ZSCORE', qs, ticket)
   and not redis.call('ZSCORE', qr, ticket) then
  local q = qs
  if priority == 'confirmed' then q = qc elseif priority == 'rough' then q = qr end
  redis.call('ZADD', q, redis.call('INCR', p .. ':seq'), ticket)
end
redis.call('HSET', seen, ticket, tostring(now))
-- A free container is warm (used within `idle`), booting (given back before its
-- boot ended: `last_used` is when that boot ends) or cold.
local free, warm, booting, booting_until = {}, {}, nil, nil
for i = 1, size do
  local c = p .. ':c:' .. i
  local holder = redis.call('HGET', c, 'holder')
  local lease_until = tonumber(redis.call('HGET', c, 'lease_until') or '0')
  if (not holder) or holder == '' or lease_until < now then
    table.insert(free, i)
    local last = tonumber(redis.call('HGET', c, 'last_used') or '0')
    if last > now then
      if (not booting_until) or last < booting_until then booting, booting_until = i, last end
    elseif last > 0 and now - last <= idle then
      table.insert(warm, i)
    end
  end
end
local waiting_confirmed = redis.call('ZCARD', qc)
local rank = redis.call('ZRANK', qc, ticket)
local room = #free
if not rank then
  rank = redis.call('ZRANK', qs, ticket)
  room = #free - waiting_confirmed
end
if not rank then  -- a rough: after every final waiting, confirmed or speculative
  rank = redis.call('ZRANK', qr, ticket)
  room = #free - waiting_confirmed - redis.call('ZCARD', qs)
end
if rank >= room then return {0, rank} end
local index = warm[1] or booting or free[1]
local c = p .. ':c:' .. index
local last = tonumber(redis.call('HGET', c, 'last_used') or '0')
local ready_at, cold = now, 0
if last > now then
  ready_at, cold = last, 1  -- the rest of a boot someone else started
elseif not (last > 0 and now - last <= idle) then
  ready_at, cold = now + boot, 1
end
redis.call('HSET', c, 'holder', ticket, 'lease_until', tostring(ready_at + lease),
           'ready_at', tostring(ready_at), 'since', tostring(now))
redis.call('ZREM', qc, ticket); redis.call('ZREM', qs, ticket); redis.call('ZREM', qr, ticket)
redis.call('HDEL', seen, ticket)
return {index, math.floor(ready_at * 1000), cold}
"""

# ARGV: prefix, index, ticket, now, lease. Renews the lease if the ticket still holds it.
_RENEW = """
local c = ARGV[1] .. ':c:' .. ARGV[2]
if redis.call('HGET', c, 'holder') ~= ARGV[3] then return 0 end
local ready_at = tonumber(redis.call('HGET', c, 'ready_at') or '0')
local now = tonumber(ARGV[4])
redis.call('HSET', c, 'lease_until', tostring(math.max(now, ready_at) + tonumber(ARGV[5])))
return 1
"""

# ARGV: prefix, index, ticket, now. Frees the container; it stays warm from now, or,
# given back while it still boots (its render was withdrawn), from when that boot
# ends: a provider's container does not boot faster for being let go.
_RELEASE = """
local c = ARGV[1] .. ':c:' .. ARGV[2]
if redis.call('HGET', c, 'holder') ~= ARGV[3] then return 0 end
local ready_at = tonumber(redis.call('HGET', c, 'ready_at') or '0')
local last = math.max(tonumber(ARGV[4]), ready_at)
redis.call('HSET', c, 'holder', '', 'lease_until', '0', 'last_used', tostring(last))
return 1
"""

# ARGV: prefix, ticket, from, to. A waiting ticket moves from queue `from` up to queue `to`
# (a speculative one becomes confirmed work, a rough becomes speculative), keeping its place.
_MOVE_UP = """
local from, to = ARGV[1] .. ':q:' .. ARGV[3], ARGV[1] .. ':q:' .. ARGV[4]
local score = redis.call('ZSCORE', from, ARGV[2])
if not score then return 0 end
redis.call('ZREM', from, ARGV[2])
redis.call('ZADD', to, score, ARGV[2])
return 1
"""


@dataclass(frozen=True)
class Slot:
    """A container given to one render."""

    index: int
    ticket: str
    ready_at: float  # when its boot ends (now, if it was warm)
    cold: bool
    queued_seconds: float  # how long the render waited for a container
    joined: bool = False  # it took over the rest of someone else's boot, not a whole one


@dataclass(frozen=True)
class Container:
    index: int
    busy: bool
    warm: bool  # free and inside its idle window, or booting/rendering
    booting: bool
    free_at: float  # when it is expected to be free and booted (now, if warm and free)


@dataclass(frozen=True)
class PoolState:
    size: int
    containers: tuple[Container, ...]
    waiting_confirmed: int
    waiting_speculative: int
    waiting_rough: int = 0

    @property
    def busy(self) -> int:
        return sum(c.busy for c in self.containers)

    @property
    def warm(self) -> int:
        return sum(c.warm for c in self.containers)


class GpuPool:
    def __init__(
        self,
        *,
        url: str | None = None,
        prefix: str | None = None,
        size: int | None = None,
        idle_seconds: float | None = None,
        cold_start_seconds: float | None = None,
        lease_seconds: float = 15.0,
        stale_seconds: float = 10.0,
        poll_seconds: float = 0.02,
        boot_check_seconds: float = 0.1,
    ):
        self.client = redis.Redis.from_url(url or settings.REDIS_URL)
        self.prefix = prefix or settings.GPU_POOL_PREFIX
        self.size = settings.GPU_POOL_SIZE if size is None else size
        self.idle_seconds = settings.RENDER_IDLE_SECONDS if idle_seconds is None else idle_seconds
        self.cold_start_seconds = (
            settings.RENDER_COLD_START_SECONDS if cold_start_seconds is None else cold_start_seconds
        )
        self.lease_seconds = lease_seconds
        self.stale_seconds = stale_seconds
        self.poll_seconds = poll_seconds
        self.boot_check_seconds = boot_check_seconds
        self._acquire = self.client.register_script(_ACQUIRE)
        self._renew = self.client.register_script(_RENEW)
        self._release = self.client.register_script(_RELEASE)
        self._move_up_script = self.client.register_script(_MOVE_UP)

    # --- taking and giving back a container ------------------------------------------------

    def try_acquire(
        self,
        *,
        ticket: str,
        priority: Priority,
        cold_start_seconds: float | None = None,
        idle_seconds: float | None = None,
    ) -> Slot | None:
        """One attempt: a container for `ticket`, or None while it must wait (it keeps its
        place in the queue as long as it keeps asking). Raises Withdrawn."""
        return self._ask(
            ticket=ticket,
            priority=priority,
            cold_start_seconds=cold_start_seconds,
            idle_seconds=idle_seconds,
        )[0]

    def _ask(
        self,
        *,
        ticket: str,
        priority: Priority,
        cold_start_seconds: float | None,
        idle_seconds: float | None,
    ) -> tuple[Slot | None, int]:
        """(the slot or None, the ticket's place in its queue)."""
        boot = self.cold_start_seconds if cold_start_seconds is None else cold_start_seconds
        answer = self._acquire(
            args=[
                self.prefix,
                self.size,
                time.time(),
                self.idle_seconds if idle_seconds is None else idle_seconds,
                boot,
                self.lease_seconds,
                ticket,
                str(Priority(priority)),
                self.stale_seconds,
            ]
        )
        if answer[0] == -1:
            raise Withdrawn(ticket)
        if answer[0] == 0:
            return None, int(answer[1])
        ready_at, cold = int(answer[1]) / 1000, bool(answer[2])
        return Slot(
            index=int(answer[0]),
            ticket=ticket,
            ready_at=ready_at,
            cold=cold,
            queued_seconds=0.0,
            joined=cold and ready_at < time.time() + boot - 0.05,
        ), 0

    def acquire(
        self,
        *,
        ticket: str,
        priority: Priority,
        cold_start_seconds: float | None = None,
        idle_seconds: float | None = None,
        while_waiting: Callable[[], None] | None = None,
    ) -> Slot:
        """Waits (asking every `poll_seconds`) until `ticket` is given a container.

        `while_waiting` is called about once a second (a heartbeat). Raises Withdrawn.
        """
        started = time.monotonic()
        beat = started
        while True:
            slot, rank = self._ask(
                ticket=ticket,
                priority=priority,
                cold_start_seconds=cold_start_seconds,
                idle_seconds=idle_seconds,
            )
            if slot is not None:
                return Slot(**{**slot.__dict__, "queued_seconds": time.monotonic() - started})
            if while_waiting is not None and time.monotonic() - beat >= 1:
                beat = time.monotonic()
                while_waiting()
            # The head of the queue asks often; those far back, less (each ask is a
            # script run in Redis: a hundred waiters must not become the load).
            time.sleep(min(0.5, self.poll_seconds * (1 + rank)))

    def renew(self, slot: Slot) -> bool:
        """Keeps the container while its render runs; False if the lease was lost."""
        return bool(
            self._renew(
                args=[self.prefix, slot.index, slot.ticket, time.time(), self.lease_seconds]
            )
        )

    def release(self, slot: Slot) -> None:
        """Gives the container back; it stays warm for `idle_seconds` from now."""
        self._release(args=[self.prefix, slot.index, slot.ticket, time.time()])

    @contextmanager
    def container(
        self,
        *,
        ticket: str | None = None,
        priority: Priority = Priority.CONFIRMED,
        cold_start_seconds: float | None = None,
        idle_seconds: float | None = None,
        while_waiting: Callable[[], None] | None = None,
    ) -> Iterator[Slot]:
        """A container for the body of the `with`, booted (the cold start is waited here)."""
        slot = self.acquire(
            ticket=ticket or f"anonymous:{uuid.uuid4()}",
            priority=priority,
            cold_start_seconds=cold_start_seconds,
            idle_seconds=idle_seconds,
            while_waiting=while_waiting,
        )
        done = threading.Event()
        keeper = threading.Thread(target=self._keep, args=(slot, done), daemon=True)
        keeper.start()
        try:
            self._boot(slot, while_waiting)
            yield slot
        finally:
            done.set()
            keeper.join(timeout=5)
            self.release(slot)

    def _boot(self, slot: Slot, while_waiting: Callable[[], None] | None) -> None:
        """Waits out the container's boot. A render withdrawn meanwhile (its person
        left) raises Withdrawn: the container is given back still booting, and the
        next render waits only for the rest of that boot instead of for this one's
        boot and render (see _RELEASE)."""
        beat = time.monotonic()
        while (left := slot.ready_at - time.time()) > 0:
            time.sleep(min(left, self.boot_check_seconds))
            if self.withdrawn(slot.ticket):
                raise Withdrawn(slot.ticket)
            if while_waiting is not None and time.monotonic() - beat >= 1:
                beat = time.monotonic()
                while_waiting()

    def _keep(self, slot: Slot, done: threading.Event) -> None:
        """Renews the lease while the render runs (a dead worker stops renewing)."""
        while not done.wait(self.lease_seconds / 3):
            # Renewed at the next beat, or lost (then the render is requeued).
            with contextlib.suppress(redis.RedisError):
                self.renew(slot)

    # --- the studio's controls ----------------------------------------------------------------

    def promote(self, ticket: str) -> bool:
        """A waiting speculative render becomes confirmed work now (its person clicked
        Generate). False if it is not waiting (already on a container, or not yet asked)."""
        return self._move_up(Priority.SPECULATIVE, Priority.CONFIRMED, ticket)

    def hasten(self, ticket: str) -> bool:
        """A waiting rough a final waits for moves up to the speculative queue (ahead of
        the other roughs, still behind every final waiting). False if it is not waiting."""
        return self._move_up(Priority.ROUGH, Priority.SPECULATIVE, ticket)

    def _move_up(self, queue: Priority, to: Priority, ticket: str) -> bool:
        """Whether the ticket was waiting in `queue`: moved to `to`, keeping its place."""
        return bool(self._move_up_script(args=[self.prefix, ticket, str(queue), str(to)]))

    def withdraw(self, ticket: str) -> None:
        """A render whose job ended stops: waiting (it leaves the queue now, so those
        behind it move up at once) or booting its container (it gives the container
        back); either raises Withdrawn in its worker. A render already drawing finishes."""
        pipe = self.client.pipeline()  # MULTI: no one sees the ticket half gone
        pipe.set(self._gone(ticket), "1", ex=3600)
        pipe.zrem(f"{self.prefix}:q:confirmed", ticket)
        pipe.zrem(f"{self.prefix}:q:speculative", ticket)
        pipe.zrem(f"{self.prefix}:q:rough", ticket)
        pipe.hdel(f"{self.prefix}:seen", ticket)
        pipe.execute()

    def withdrawn(self, ticket: str) -> bool:
        """Whether `ticket` was withdrawn (a remote render asks this while it waits on
        the provider, to cancel there at once)."""
        return bool(self.client.exists(self._gone(ticket)))

    def _gone(self, ticket: str) -> str:
        """The key that marks `ticket` withdrawn (the acquire script reads it too)."""
        return f"{self.prefix}:gone:{ticket}"

    # --- reading the pool ---------------------------------------------------------------------

    def state(self, *, render_seconds: float | None = None) -> PoolState:
        """The containers and queues now; a busy container is expected free
        `render_seconds` (RENDER_SECONDS unless told) after its boot ended."""
        render_seconds = settings.RENDER_SECONDS if render_seconds is None else render_seconds
        now = time.time()
        pipe = self.client.pipeline()
        for i in range(1, self.size + 1):
            pipe.hgetall(f"{self.prefix}:c:{i}")
        pipe.zcard(f"{self.prefix}:q:confirmed")
        pipe.zcard(f"{self.prefix}:q:speculative")
        pipe.zcard(f"{self.prefix}:q:rough")
        *rows, waiting_confirmed, waiting_speculative, waiting_rough = pipe.execute()
        containers = []
        for i, row in enumerate(rows, start=1):
            row = {k.decode(): v.decode() for k, v in row.items()}
            lease_until = float(row.get("lease_until") or 0)
            busy = bool(row.get("holder")) and lease_until >= now
            last_used = float(row.get("last_used") or 0)
            ready_at = float(row.get("ready_at") or 0)
            # Given back before its boot ended: free, and usable when that boot ends.
            booting_free = not busy and last_used > now
            warm_idle = last_used > 0 and now - last_used <= self.idle_seconds
            busy_until = ready_at + render_seconds
            free_at = max(now, busy_until if busy else last_used)
            containers.append(
                Container(
                    index=i,
                    busy=busy,
                    warm=busy or warm_idle,
                    booting=(busy and ready_at > now) or booting_free,
                    free_at=free_at,
                )
            )
        return PoolState(
            size=self.size,
            containers=tuple(containers),
            waiting_confirmed=int(waiting_confirmed),
            waiting_speculative=int(waiting_speculative),
            waiting_rough=int(waiting_rough),
        )

    def predict_finish(
        self,
        *,
        priority: Priority,
        render_seconds: float,
        cold_start_seconds: float | None = None,
    ) -> float:
        """Seconds from now until a render of `priority` asked for now would be done.

        Every render waiting ahead of it (all confirmed ones; for a speculative
        one, the speculative ones too) takes the container that frees first, as
        the acquire script does: among free ones a warm one, then one still
        booting (it waits for the rest of that boot), then a cold one (it pays a
        cold start: `cold_start_seconds`, the pool's own unless told, as what was
        learned of a real provider is). Then this one does.
        """
        cold_start = self.cold_start_seconds if cold_start_seconds is None else cold_start_seconds
        state = self.state(render_seconds=render_seconds)
        now = time.time()
        # (seconds until free, then seconds of boot still to wait) per container
        ahead_of: list[tuple[float, float]] = []
        for c in state.containers:
            if c.busy:
                ahead_of.append((max(0.0, c.free_at - now), 0.0))
            elif c.booting:
                ahead_of.append((0.0, max(0.0, c.free_at - now)))
            else:
                ahead_of.append((0.0, 0.0 if c.warm else cold_start))
        ahead = state.waiting_confirmed
        if Priority(priority) in (Priority.SPECULATIVE, Priority.ROUGH):
            ahead += state.waiting_speculative
        if Priority(priority) == Priority.ROUGH:
            ahead += state.waiting_rough
        finish = 0.0
        for _ in range(ahead + 1):
            ahead_of.sort()
            free, boot = ahead_of[0]
            finish = free + boot + render_seconds
            ahead_of[0] = (finish, 0.0)
        return finish

    def expected_wait(
        self, *, cold_start_seconds: float | None = None, render_seconds: float | None = None
    ) -> float:
        """Seconds of cold start a confirmed render asked for now would wait (for the UI)."""
        cold_start = self.cold_start_seconds if cold_start_seconds is None else cold_start_seconds
        state = self.state(render_seconds=render_seconds)
        now = time.time()
        free = [c for c in state.containers if not c.busy]
        if not free:
            return max(0.0, min(c.free_at for c in state.containers) - now)
        return min(max(0.0, c.free_at - now) if c.warm else cold_start for c in free)

    def reset(self) -> None:
        """Every container cold and free, no one waiting (tests and benchmarks)."""
        keys = list(self.client.scan_iter(f"{self.prefix}:*"))
        if keys:
            self.client.delete(*keys)
