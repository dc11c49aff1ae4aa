"""The simulated GPU provider: containers with their own cold starts, confirmed work first.

No test waits on wall time for an outcome: each asks the pool, in bounded
loops, until the condition holds.
"""

import threading
import time
import uuid

import pytest

from mangagen.renderers.gpu_pool import GpuPool, Priority, Withdrawn
from tests.support.waiting import wait_for

CONFIRMED, SPECULATIVE, ROUGH = Priority.CONFIRMED, Priority.SPECULATIVE, Priority.ROUGH


def make_pool(size=1, **options) -> GpuPool:
    options = {"idle_seconds": 60, "cold_start_seconds": 20, **options}
    return GpuPool(prefix=f"test:gpu:{uuid.uuid4()}", size=size, **options)


def take(pool, ticket, priority=CONFIRMED):
    return pool.try_acquire(ticket=ticket, priority=priority)


def test_each_container_pays_its_own_cold_start_then_stays_warm():
    pool = make_pool(size=2, cold_start_seconds=0.2)
    asked = time.time()
    first, second = take(pool, "a"), take(pool, "b")
    assert first.cold and second.cold and first.index != second.index
    assert first.ready_at >= asked + 0.19  # booting for the cold start (ms precision)
    wait_for(lambda: time.time() > first.ready_at, every=0.01, what="the boot to end")
    pool.release(first)
    again = take(pool, "c")
    assert again.index == first.index and not again.cold  # the warm one is preferred
    state = pool.state()
    assert (state.busy, state.warm) == (2, 2)


def test_a_container_given_back_while_booting_boots_on_for_the_next_render():
    """A withdrawn render lets its container go mid-boot: the next render waits for the
    rest of that boot (no new cold start, and no instant warmth either)."""
    pool = make_pool(size=2)
    first = take(pool, "a")
    pool.release(first)
    state = pool.state()
    assert state.busy == 0
    booting = state.containers[first.index - 1]
    assert booting.booting and booting.free_at == pytest.approx(first.ready_at, abs=0.01)
    # The rest of that boot, however long the test took to get here (Redis keeps the
    # times to a millisecond or so: the bounds allow for that).
    most = first.ready_at - time.time() + 0.002
    wait = pool.expected_wait()
    finish = pool.predict_finish(priority=CONFIRMED, render_seconds=1)
    least = first.ready_at - time.time() - 0.002
    assert 0 < least <= wait <= most
    assert least + 1 <= finish <= most + 1
    again = take(pool, "b")  # the booting container, not the cold one beside it
    assert (again.index, again.cold) == (first.index, True)
    assert again.ready_at == pytest.approx(first.ready_at, abs=0.01)


def test_a_container_scales_to_zero_after_its_idle_time():
    pool = make_pool(idle_seconds=0.2, cold_start_seconds=0)
    pool.release(take(pool, "a"))
    wait_for(lambda: pool.state().warm == 0, every=0.01, what="the container to go cold")
    assert take(pool, "b").cold


def test_a_render_waits_for_a_free_container():
    pool = make_pool(size=1, cold_start_seconds=0)
    held = take(pool, "a")
    assert take(pool, "b") is None
    assert pool.state().waiting_confirmed == 1
    pool.release(held)
    given = take(pool, "b")
    assert given is not None and not given.cold


def test_confirmed_work_is_served_before_speculation_that_waited_longer():
    pool = make_pool(size=1)
    held = take(pool, "x")
    assert take(pool, "spec", SPECULATIVE) is None
    assert take(pool, "conf", CONFIRMED) is None
    pool.release(held)
    # The speculative render asks first, but a confirmed one is waiting: not its turn.
    assert take(pool, "spec", SPECULATIVE) is None
    conf = take(pool, "conf", CONFIRMED)
    assert conf is not None
    assert take(pool, "spec", SPECULATIVE) is None
    pool.release(conf)
    assert take(pool, "spec", SPECULATIVE) is not None


def test_speculation_runs_only_on_containers_no_confirmed_render_waits_for():
    pool = make_pool(size=3)
    busy = take(pool, "x")
    assert take(pool, "c1") is not None and busy is not None  # two busy, one free
    assert take(pool, "c2") is not None  # all three busy now
    pool.release(busy)  # one free
    holders = [take(pool, f"s{i}", SPECULATIVE) for i in range(2)]
    assert holders[0] is not None and holders[1] is None  # one free, no confirmed waiting
    assert take(pool, "c3") is None  # all busy: the confirmed one waits…
    pool.release(holders[0])
    assert take(pool, "s1", SPECULATIVE) is None  # …and the freed container is its
    assert take(pool, "c3") is not None


def test_a_rough_runs_only_on_containers_no_final_waits_for():
    """Roughs are the lowest queue: a confirmed or a speculative render waiting, even one
    that asked later, gets the freed container first; a rough that waited leaves at once
    when withdrawn."""
    pool = make_pool(size=2)
    held = [take(pool, "x"), take(pool, "y")]
    assert take(pool, "rough", ROUGH) is None
    assert take(pool, "spec", SPECULATIVE) is None
    assert take(pool, "conf", CONFIRMED) is None
    assert pool.state().waiting_rough == 1
    pool.release(held[0])
    assert take(pool, "rough", ROUGH) is None  # the confirmed one waits for it
    assert take(pool, "conf") is not None
    pool.release(held[1])
    assert take(pool, "rough", ROUGH) is None  # the speculative one waits for it
    assert take(pool, "spec", SPECULATIVE) is not None
    assert (
        pool.predict_finish(priority=ROUGH, render_seconds=1)
        > pool.predict_finish(priority=SPECULATIVE, render_seconds=1) - 1e-6
    )
    pool.withdraw("rough")
    assert pool.state().waiting_rough == 0
    with pytest.raises(Withdrawn):
        take(pool, "rough", ROUGH)
    free = make_pool(size=1)
    assert take(free, "alone", ROUGH) is not None  # nothing else waits: it draws


def test_a_rough_a_final_waits_for_is_hastened_ahead_of_the_other_roughs():
    pool = make_pool(size=1)
    held = take(pool, "x")
    assert take(pool, "rough-2", ROUGH) is None
    assert take(pool, "rough-1", ROUGH) is None
    assert pool.hasten("rough-1") and not pool.hasten("rough-1")
    assert take(pool, "conf") is None  # finals still come first
    pool.release(held)
    assert take(pool, "rough-1", ROUGH) is None
    conf = take(pool, "conf")
    pool.release(conf)
    assert take(pool, "rough-2", ROUGH) is None  # the hastened one's turn
    assert take(pool, "rough-1", ROUGH) is not None


def test_a_promoted_speculation_becomes_confirmed_work_keeping_its_place():
    pool = make_pool(size=1)
    held = take(pool, "x")
    assert take(pool, "spec", SPECULATIVE) is None
    assert take(pool, "conf") is None
    assert pool.promote("spec")
    state = pool.state()
    assert (state.waiting_confirmed, state.waiting_speculative) == (2, 0)
    pool.release(held)
    assert take(pool, "conf") is None  # the promoted one waited longer
    assert take(pool, "spec", SPECULATIVE) is not None
    assert not pool.promote("spec")  # no longer waiting


def test_a_withdrawn_render_stops_waiting():
    pool = make_pool(size=1)
    take(pool, "x")
    assert take(pool, "gone", SPECULATIVE) is None
    pool.withdraw("gone")
    with pytest.raises(Withdrawn):
        take(pool, "gone", SPECULATIVE)
    assert pool.state().waiting_speculative == 0


def test_a_withdrawn_waiter_leaves_the_queue_at_once():
    """Those behind a withdrawn render move up now, not when it next asks."""
    pool = make_pool(size=1, cold_start_seconds=0)
    held = take(pool, "x")
    assert take(pool, "gone", SPECULATIVE) is None  # first in line
    assert take(pool, "next", SPECULATIVE) is None
    pool.withdraw("gone")
    assert pool.state().waiting_speculative == 1
    pool.release(held)
    assert take(pool, "next", SPECULATIVE) is not None  # "gone" never asked again


def test_a_render_withdrawn_while_its_container_boots_gives_the_container_back():
    pool = make_pool(size=1, cold_start_seconds=30, boot_check_seconds=0.01)
    outcome = []

    def render():
        try:
            with pool.container(ticket="left", priority=SPECULATIVE):
                outcome.append("rendered")
        except Withdrawn:
            outcome.append("withdrawn")

    thread = threading.Thread(target=render)
    thread.start()
    wait_for(lambda: pool.state().busy == 1, every=0.01, what="the container to be taken")
    booting_until = float(pool.client.hget(f"{pool.prefix}:c:1", "ready_at"))
    pool.withdraw("left")
    thread.join(timeout=30)
    assert outcome == ["withdrawn"]
    assert pool.state().busy == 0
    # The next render takes over the boot in progress: it waits for the rest of it.
    given = take(pool, "next")
    assert given is not None and given.cold
    assert given.ready_at == pytest.approx(booting_until, abs=0.01)


def test_a_dead_holders_container_is_free_again_after_its_lease():
    pool = make_pool(size=1, lease_seconds=0.2, cold_start_seconds=0)
    assert take(pool, "dead") is not None  # and never renewed nor released
    wait_for(lambda: take(pool, "next"), every=0.01, what="the dead holder's lease to end")


def test_a_waiter_that_stops_asking_leaves_the_queue():
    pool = make_pool(size=1, stale_seconds=0.2)
    held = take(pool, "x")
    assert take(pool, "dead-waiter") is None  # then its worker dies
    pool.release(held)
    wait_for(lambda: take(pool, "spec", SPECULATIVE), every=0.01, what="the speculative turn")
    assert pool.state().waiting_confirmed == 0


def test_the_container_context_waits_for_the_boot_and_keeps_its_lease():
    pool = make_pool(size=1, cold_start_seconds=0.3, lease_seconds=1.0)
    with pool.container(ticket="a") as slot:
        assert slot.cold and time.time() >= slot.ready_at
        for _ in range(5):
            time.sleep(0.5)  # well past the lease: the keeper thread renews it
            assert take(pool, "b") is None
    assert take(pool, "b") is not None


def test_threads_share_the_pool_and_confirmed_ones_finish_first():
    pool = make_pool(size=1, cold_start_seconds=0, poll_seconds=0.005)
    order = []
    held = take(pool, "x")

    def render(ticket, priority):
        with pool.container(ticket=ticket, priority=priority):
            order.append(ticket)

    threads = [threading.Thread(target=render, args=(f"s{i}", SPECULATIVE)) for i in range(3)]
    threads += [threading.Thread(target=render, args=(f"c{i}", CONFIRMED)) for i in range(3)]
    for t in threads:
        t.start()
    wait_for(
        lambda: (pool.state().waiting_confirmed, pool.state().waiting_speculative) == (3, 3),
        every=0.01,
        what="three of each waiting",
    )
    pool.release(held)
    for t in threads:
        t.join(timeout=30)
    assert sorted(order[:3]) == ["c0", "c1", "c2"]
    assert sorted(order[3:]) == ["s0", "s1", "s2"]


def test_predicted_finish_counts_the_queue_ahead_and_cold_starts():
    pool = make_pool(size=1, cold_start_seconds=20)
    assert pool.predict_finish(priority=SPECULATIVE, render_seconds=2) == pytest.approx(22, abs=0.1)
    held = take(pool, "x")  # booting: free in about 22 s
    assert take(pool, "c") is None  # one confirmed render waits
    # The boot's clock runs while the test does: a margin for a stalled machine that
    # still tells each right answer from the wrong ones (a waiter missed: 2 s off).
    assert pool.predict_finish(priority=CONFIRMED, render_seconds=2) == pytest.approx(26, abs=1.5)
    assert take(pool, "s", SPECULATIVE) is None
    assert pool.predict_finish(priority=SPECULATIVE, render_seconds=2) == pytest.approx(28, abs=1.5)
    pool.release(held)
