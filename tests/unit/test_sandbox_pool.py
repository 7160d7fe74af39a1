"""Pool bookkeeping with fake containers: bounds, ownership, eviction, spares."""
import threading

import pytest

from sandbox.container import SandboxBroken
from sandbox.pool import SandboxPool


class FakeContainer:

    def __init__(self, image, log):
        self.image = image
        self.log = log
        self.destroyed = False
        self.staged = []

    def start(self):
        self.log.append(('start', self))

    def destroy(self):
        self.destroyed = True
        self.log.append(('destroy', self))


class Factory:

    def __init__(self):
        self.log = []
        self.made = []
        self.lock = threading.Lock()

    def __call__(self, image):
        with self.lock:
            c = FakeContainer(image, self.log)
            self.made.append(c)
            return c

    def live(self):
        return [c for c in self.made if not c.destroyed]


def stage(container, job):
    container.staged.append(job)


def spares_ready(pool, timeout):
    """Every image has its spares (an observation of the pool's state, for
    tests: nothing in the runner waits for spares)."""
    with pool._cond:
        return pool._cond.wait_for(
            lambda: all(len(pool._spares[image]) >= n for image, n in pool._spare_target.items()),
            timeout)


def make_pool(factory, max_alive=2, spares=None):
    pool = SandboxPool(factory, max_alive=max_alive, spares=spares or {}, acquire_timeout=10)
    pool.start()
    return pool


def test_a_job_reuses_its_own_idle_container():
    factory = Factory()
    pool = make_pool(factory)
    first = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    pool.give_back(first)
    again = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    assert again is first and first.staged == ['a']
    pool.stop()


def test_a_container_never_serves_two_jobs():
    factory = Factory()
    pool = make_pool(factory, max_alive=4)
    a = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    pool.give_back(a)
    b = pool.acquire('b', 'img', lambda c: stage(c, 'b'))
    assert b is not a and b.staged == ['b'] and a.staged == ['a']
    pool.stop()


def test_idle_container_of_another_job_is_evicted_at_capacity():
    factory = Factory()
    pool = make_pool(factory, max_alive=1)
    a = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    pool.give_back(a)
    b = pool.acquire('b', 'img', lambda c: stage(c, 'b'))
    assert a.destroyed and not b.destroyed and pool.alive() == 1
    # The evicted job gets a fresh container when it runs again.
    pool.give_back(b)
    a2 = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    assert a2 not in (a, b) and b.destroyed
    pool.stop()


def test_release_destroys_idle_and_later_busy_containers():
    factory = Factory()
    pool = make_pool(factory, max_alive=3)
    idle = pool.acquire('a', 'img', lambda c: None)
    busy = pool.acquire('a', 'img', lambda c: None)
    pool.give_back(idle)
    pool.release('a')
    assert idle.destroyed and not busy.destroyed
    pool.give_back(busy)
    assert busy.destroyed and pool.alive() == 0
    pool.stop()


def test_broken_container_is_destroyed():
    factory = Factory()
    pool = make_pool(factory)
    c = pool.acquire('a', 'img', lambda c: None)
    pool.give_back(c, broken=True)
    assert c.destroyed and pool.alive() == 0
    pool.stop()


def test_failed_staging_gives_the_container_up():
    factory = Factory()
    pool = make_pool(factory)

    def bad_stage(c):
        raise OSError('disk full')

    with pytest.raises(OSError):
        pool.acquire('a', 'img', bad_stage)
    assert pool.alive() == 0 and all(c.destroyed for c in factory.made)
    pool.stop()


def test_failed_creation_frees_its_slot():

    def failing(image):
        raise SandboxBroken('engine down')

    pool = make_pool(failing, max_alive=1)
    for _ in range(3):
        with pytest.raises(SandboxBroken):
            pool.acquire('a', 'img', lambda c: None)
    assert pool.alive() == 0
    pool.stop()


def test_bound_holds_under_concurrent_jobs():
    factory = Factory()
    pool = make_pool(factory, max_alive=3)
    most = []
    lock = threading.Lock()
    runners = threading.BoundedSemaphore(3)  # the dispatcher's bound on runs

    everyone_ran_once = threading.Barrier(12)

    def run_once(key):
        with runners:
            c = pool.acquire(key, 'img', lambda c: None)
            with lock:
                most.append(len(factory.live()))
            pool.give_back(c)

    def job(key):
        # Every job keeps wanting its container while all the others run.
        run_once(key)
        everyone_ran_once.wait(timeout=20)
        for _ in range(3):
            run_once(key)
        pool.release(key)

    threads = [threading.Thread(target=job, args=(f'j{i}', )) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert max(most) <= 3
    assert pool.alive() == 0 and not factory.live()
    pool.stop()


def test_spares_are_kept_and_handed_out_once():
    factory = Factory()
    pool = make_pool(factory, max_alive=3, spares={'img': 1})
    assert spares_ready(pool, 10)
    spare = factory.made[0]
    got = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    assert got is spare and got.staged == ['a']
    assert spares_ready(pool, 10)  # the spawner replaces it
    other = pool.acquire('b', 'img', lambda c: stage(c, 'b'))
    assert other is factory.made[1] and other.staged == ['b']
    assert len(factory.made) <= 3
    pool.stop()
    pool.join(10)


def test_spare_of_another_image_is_evicted_when_full():
    factory = Factory()
    pool = make_pool(factory, max_alive=1, spares={'cpp': 1})
    assert spares_ready(pool, 10)
    python = pool.acquire('a', 'python', lambda c: None)
    assert python.image == 'python' and factory.made[0].destroyed
    pool.stop()
    pool.join(10)
    assert python.destroyed is False  # busy: destroyed when given back
    pool.give_back(python)
    assert python.destroyed


def test_stop_destroys_spares_and_fails_later_acquires():
    factory = Factory()
    pool = make_pool(factory, max_alive=2, spares={'img': 1})
    assert spares_ready(pool, 10)
    pool.stop()
    pool.join(10)
    assert all(c.destroyed for c in factory.made)
    with pytest.raises(SandboxBroken):
        pool.acquire('a', 'img', lambda c: None)
