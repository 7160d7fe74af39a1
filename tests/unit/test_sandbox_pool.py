"""Pool bookkeeping with fake containers: bounds, ownership, reuse across
jobs, wear, removal off the job's path, spares."""
import threading

import pytest

from sandbox.container import SandboxBroken
from sandbox.pool import SandboxPool
from tests.unit.fakes import FakeTime

WAIT = 10


class Surprise(Exception):
    """What no code path expects."""


class FakeContainer:

    def __init__(self, image, log):
        self.image = image
        self.log = log
        self.gone = threading.Event()
        self.staged = []
        self.resets = 0
        self.set_aside = []  # each reset's: its job's folder set aside (a core held)
        self.reset_fails = False
        self.reset_surprises = False
        self.destroy_surprises = False
        self.destroy_may_end = None  # an Event destroy() waits for, when set
        self.reset_may_end = None  # an Event reset() waits for, when set
        self.resetting = threading.Event()

    @property
    def destroyed(self):
        return self.gone.is_set()

    def start(self):
        self.log.append(('start', self))

    def reset(self, set_aside=False):
        self.set_aside.append(set_aside)
        self.resetting.set()
        if self.reset_may_end is not None:
            self.reset_may_end.wait(WAIT)
        if self.reset_fails:
            raise SandboxBroken('reset failed')
        if self.reset_surprises:
            raise Surprise()
        self.resets += 1

    def destroy(self):
        if self.destroy_may_end is not None:
            self.destroy_may_end.wait(WAIT)
        self.log.append(('destroy', self))
        self.gone.set()
        if self.destroy_surprises:
            raise Surprise()


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


def spares_ready(pool, spares):
    return pool.wait_for(lambda s: all(len(s.free[image]) >= n for image, n in spares.items()),
                         WAIT)


def settled(pool):
    """Every doomed container has been removed."""
    return pool.wait_for(
        lambda s: not s.doomed and not s.creating and s.alive == sum(
            len(free) for free in s.free.values()) + s.idle + s.in_runs, WAIT)


def free(pool, image='img'):
    return pool.stats().free.get(image, ())


def make_pool(factory, max_alive=2, spares=None, **kwargs):
    pool = SandboxPool(factory,
                       max_alive=max_alive,
                       spares=spares or {},
                       acquire_timeout=WAIT,
                       **kwargs)
    pool.start()
    return pool


def test_a_job_reuses_its_own_idle_container():
    factory = Factory()
    pool = make_pool(factory)
    first = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    pool.give_back(first)
    again = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    assert again is first and first.staged == ['a'] and first.resets == 0
    pool.stop()


def test_a_container_serves_one_job_at_a_time():
    factory = Factory()
    pool = make_pool(factory, max_alive=4)
    a = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    pool.give_back(a)  # idle, still a's: b may not have it
    b = pool.acquire('b', 'img', lambda c: stage(c, 'b'))
    assert b is not a and b.staged == ['b'] and a.staged == ['a']
    pool.stop()


def test_a_released_container_is_reset_before_the_next_job_gets_it():
    factory = Factory()
    pool = make_pool(factory)
    a = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    pool.give_back(a)
    pool.release('a')
    assert a.resets == 1 and not a.destroyed
    # On no run's path: the folder is removed at the reset, and the next job
    # in the container reclaims nothing of a's (SandboxContainer.reset).
    assert a.set_aside == [False]
    b = pool.acquire('b', 'img', lambda c: stage(c, 'b'))
    assert b is a and a.staged == ['a', 'b'] and len(factory.made) == 1
    pool.stop()


def test_a_container_busy_at_its_jobs_release_is_reset_when_given_back():
    factory = Factory()
    pool = make_pool(factory, max_alive=3)
    idle = pool.acquire('a', 'img', lambda c: None)
    busy = pool.acquire('a', 'img', lambda c: None)
    pool.give_back(idle)
    pool.release('a')
    assert idle.resets == 1 and busy.resets == 0
    pool.give_back(busy)
    assert busy.resets == 1 and not busy.destroyed
    assert sorted(id(c) for c in free(pool)) == sorted([id(idle), id(busy)])
    pool.stop()


def test_a_container_whose_reset_fails_is_destroyed_and_never_served_again():
    factory = Factory()
    pool = make_pool(factory)
    a = pool.acquire('a', 'img', lambda c: None)
    a.reset_fails = True
    pool.give_back(a)
    pool.release('a')
    assert a.gone.wait(WAIT)
    b = pool.acquire('b', 'img', lambda c: None)
    assert b is not a
    assert settled(pool) and pool.alive() == 1
    pool.stop()


def test_a_container_serves_at_most_max_jobs():
    factory = Factory()
    pool = make_pool(factory, max_jobs=2)
    served = []
    for job in ('a', 'b', 'c'):
        c = pool.acquire(job, 'img', lambda c: None)
        served.append(c)
        pool.give_back(c)
        pool.release(job)
    first = served[0]
    assert served[1] is first and served[2] is not first
    assert first.resets == 1 and first.gone.wait(WAIT)
    pool.stop()


def test_a_container_is_not_served_past_its_age():
    factory = Factory()
    time = FakeTime(now=100.0)
    pool = make_pool(factory, max_age_sec=60, clock=time.clock)
    a = pool.acquire('a', 'img', lambda c: None)
    pool.give_back(a)
    pool.release('a')
    time.now += 60  # aged while free
    b = pool.acquire('b', 'img', lambda c: None)
    assert b is not a and a.gone.wait(WAIT)
    pool.give_back(b)
    time.now += 60  # aged while serving its job
    pool.release('b')
    assert b.resets == 0 and b.gone.wait(WAIT)
    pool.stop()


def test_a_free_container_past_its_age_is_replaced_before_a_job_asks():
    factory = Factory()
    # The keeper's own timer: a real clock, and an age it reaches at once.
    pool = make_pool(factory, max_alive=2, spares={'img': 1}, max_age_sec=0.2)
    assert spares_ready(pool, {'img': 1})
    old = factory.made[0]
    assert old.gone.wait(WAIT) and spares_ready(pool, {'img': 1})
    assert old not in free(pool) and len(factory.made) >= 2
    pool.stop()


def test_an_unexpected_failure_of_a_reset_dooms_the_container_and_the_rest_go_on():
    factory = Factory()
    pool = make_pool(factory, max_alive=3)
    first = pool.acquire('a', 'img', lambda c: None)
    second = pool.acquire('a', 'img', lambda c: None)
    pool.give_back(first)
    pool.give_back(second)
    first.reset_surprises = True
    pool.release('a')
    assert first.gone.wait(WAIT) and second.resets == 1 and second in free(pool)
    pool.stop()


def test_an_unexpected_failure_of_a_removal_frees_its_slot_and_the_keeper_goes_on():
    factory = Factory()
    pool = make_pool(factory, max_alive=1)
    a = pool.acquire('a', 'img', lambda c: None)
    a.destroy_surprises = True
    pool.give_back(a, broken=True)
    assert settled(pool) and pool.alive() == 0
    b = pool.acquire('b', 'img', lambda c: None)
    pool.give_back(b, broken=True)
    assert b.gone.wait(WAIT) and settled(pool) and pool.alive() == 0
    assert not pool.join(0)  # the keeper goes on
    pool.stop()


def test_a_container_made_for_an_acquire_that_stop_overtook_is_not_left_behind():
    factory = Factory()
    made = []

    def factory_that_stops_the_pool(image):
        c = factory(image)
        made.append(c)
        pool.stop()  # the drain, while this acquire's container starts
        return c

    pool = make_pool(factory_that_stops_the_pool, max_alive=1)
    with pytest.raises(SandboxBroken):
        pool.acquire('a', 'img', lambda c: None)
    assert made[0].destroyed and pool.alive() == 0


def test_removal_is_not_on_the_callers_path():
    factory = Factory()
    pool = make_pool(factory)
    c = pool.acquire('a', 'img', lambda c: None)
    c.destroy_may_end = threading.Event()
    pool.give_back(c, broken=True)  # returns while the removal is held up
    assert not c.destroyed
    c.destroy_may_end.set()
    assert c.gone.wait(WAIT) and settled(pool) and pool.alive() == 0
    pool.stop()


def test_at_capacity_another_jobs_idle_container_is_reset_and_taken_over():
    factory = Factory()
    pool = make_pool(factory, max_alive=1)
    a = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    pool.give_back(a)
    b = pool.acquire('b', 'img', lambda c: stage(c, 'b'))
    assert b is a and a.resets == 1 and a.staged == ['a', 'b'] and not a.destroyed
    # Taken over by a run that may hold a core: a's folder is removed off
    # its path (SandboxContainer.reset).
    assert a.set_aside == [True]
    # The job that lost it gets one again when it runs again.
    pool.give_back(b)
    a2 = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    assert a2 is a and a.resets == 2 and len(factory.made) == 1
    pool.stop()


def test_a_container_that_cannot_be_taken_over_gives_its_slot_to_a_new_one():
    factory = Factory()
    pool = make_pool(factory, max_alive=1)
    a = pool.acquire('a', 'img', lambda c: None)
    pool.give_back(a)
    a.reset_fails = True
    b = pool.acquire('b', 'img', lambda c: None)
    assert b is not a and a.destroyed and pool.alive() == 1
    pool.stop()


def test_idle_container_of_another_image_is_replaced_at_capacity():
    factory = Factory()
    pool = make_pool(factory, max_alive=1)
    a = pool.acquire('a', 'cpp', lambda c: stage(c, 'a'))
    pool.give_back(a)
    b = pool.acquire('b', 'python', lambda c: stage(c, 'b'))
    assert a.destroyed and b.image == 'python' and pool.alive() == 1
    pool.stop()


def test_a_doomed_container_gives_its_slot_at_capacity():
    factory = Factory()
    # Not started: no keeper removes the doomed container first.
    pool = SandboxPool(factory, max_alive=1, spares={}, acquire_timeout=WAIT)
    a = pool.acquire('a', 'img', lambda c: None)
    pool.give_back(a, broken=True)
    assert not a.destroyed and pool.alive() == 1
    b = pool.acquire('b', 'img', lambda c: None)
    assert b is not a and a.destroyed and pool.alive() == 1
    pool.stop()


def test_broken_container_is_destroyed():
    factory = Factory()
    pool = make_pool(factory)
    c = pool.acquire('a', 'img', lambda c: None)
    pool.give_back(c, broken=True)
    assert c.gone.wait(WAIT) and settled(pool) and pool.alive() == 0
    pool.stop()


def test_failed_staging_gives_the_container_up():
    factory = Factory()
    pool = make_pool(factory)

    def bad_stage(c):
        raise OSError('disk full')

    with pytest.raises(OSError):
        pool.acquire('a', 'img', bad_stage)
    assert factory.made[0].gone.wait(WAIT) and settled(pool) and pool.alive() == 0
    pool.stop()


def test_failed_creation_frees_its_slot():

    def failing(image):
        raise SandboxBroken('engine down')

    pool = make_pool(failing, max_alive=1)
    for _ in range(3):
        with pytest.raises(SandboxBroken):
            pool.acquire('a', 'img', lambda c: None)
    assert pool.alive() == 0 and pool.stats().in_runs == 0
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
    assert settled(pool) and pool.alive() == len(factory.live()) <= 3
    assert pool.stats().jobs == 0 and pool.stats().in_runs == 0
    pool.stop()
    assert not factory.live()


def test_spares_are_kept_and_handed_out_once():
    factory = Factory()
    pool = make_pool(factory, max_alive=3, spares={'img': 1}, cores=2)
    assert spares_ready(pool, {'img': 1})
    spare = factory.made[0]
    got = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    assert got is spare and got.staged == ['a']
    assert spares_ready(pool, {'img': 1})  # the keeper replaces it
    other = pool.acquire('b', 'img', lambda c: stage(c, 'b'))
    assert other is factory.made[1] and other.staged == ['b']
    assert len(factory.made) <= 3
    pool.stop()
    pool.join(WAIT)


def test_no_spare_is_started_while_every_core_is_in_a_run():
    factory = Factory()
    pool = make_pool(factory, max_alive=4, spares={'img': 1}, cores=1)
    assert spares_ready(pool, {'img': 1})
    busy = pool.acquire('a', 'img', lambda c: None)
    assert pool.stats().spare_wanted is None  # the one core is judging
    pool.give_back(busy)
    assert spares_ready(pool, {'img': 1}) and len(factory.made) == 2
    pool.stop()


def test_spare_of_another_image_is_evicted_when_full():
    factory = Factory()
    pool = make_pool(factory, max_alive=1, spares={'cpp': 1})
    assert spares_ready(pool, {'cpp': 1})
    python = pool.acquire('a', 'python', lambda c: None)
    assert python.image == 'python' and factory.made[0].destroyed
    pool.stop()
    pool.join(WAIT)
    assert python.destroyed is False  # busy: destroyed when given back
    pool.give_back(python)
    assert python.destroyed and python.resets == 0


def test_stop_destroys_spares_and_fails_later_acquires():
    factory = Factory()
    pool = make_pool(factory, max_alive=2, spares={'img': 1})
    assert spares_ready(pool, {'img': 1})
    pool.stop()
    pool.join(WAIT)
    assert all(c.destroyed for c in factory.made)
    with pytest.raises(SandboxBroken):
        pool.acquire('a', 'img', lambda c: None)


def test_stop_destroys_free_and_doomed_containers():
    factory = Factory()
    pool = make_pool(factory, max_alive=3)
    free_one = pool.acquire('a', 'img', lambda c: None)
    pool.give_back(free_one)
    pool.release('a')
    assert free_one in free(pool)
    pool.stop()
    pool.join(WAIT)
    assert all(c.destroyed for c in factory.made) and pool.alive() == 0


def test_without_engine_work_a_container_is_taken_over_even_with_room_or_none_is_given():
    factory = Factory()
    pool = make_pool(factory, max_alive=4)
    assert pool.acquire('a', 'img', lambda c: None, engine_work=False) is None
    assert not factory.made and pool.stats().in_runs == 0 and pool.alive() == 0
    a = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    pool.give_back(a)
    b = pool.acquire('b', 'img', lambda c: stage(c, 'b'), engine_work=False)
    assert b is a and a.resets == 1 and len(factory.made) == 1
    pool.stop()


def test_an_idle_container_of_a_job_about_to_run_again_is_taken_over_last():
    factory = Factory()
    pool = make_pool(factory, max_alive=2)
    a = pool.acquire('a', 'img', lambda c: stage(c, 'a'))
    b = pool.acquire('b', 'img', lambda c: stage(c, 'b'))
    pool.give_back(a)
    pool.give_back(b)
    taken = pool.acquire('c', 'img', lambda c: stage(c, 'c'), engine_work=False, keep={'a'})
    assert taken is b and b.resets == 1 and a.resets == 0
    again = pool.acquire('d', 'img', lambda c: stage(c, 'd'), engine_work=False, keep={'a'})
    assert again is a  # none of another job's: the kept one after all
    pool.stop()


def test_a_takeover_that_stop_overtook_hands_nothing_out():
    factory = Factory()
    pool = make_pool(factory, max_alive=1)
    a = pool.acquire('a', 'img', lambda c: None)
    pool.give_back(a)
    a.reset = lambda set_aside: pool.stop()  # the drain, while the container is being reset
    with pytest.raises(SandboxBroken):
        pool.acquire('b', 'img', lambda c: None)
    assert a.destroyed and pool.alive() == 0 and pool.stats().in_runs == 0


def test_every_creation_is_counted_with_its_cause():
    factory = Factory()
    told = []
    # Not started: no keeper; then with one, for a spare.
    pool = SandboxPool(factory,
                       max_alive=1,
                       spares={},
                       acquire_timeout=WAIT,
                       on_created=told.append)
    a = pool.acquire('a', 'cpp', lambda c: None)  # room
    pool.give_back(a)
    b = pool.acquire('b', 'python', lambda c: None)  # a's idle container destroyed for it
    pool.give_back(b, broken=True)  # doomed, its slot kept until it is removed
    c = pool.acquire('c', 'python', lambda c: None)  # in the doomed one's slot
    assert told == ['room', 'eviction', 'replacement']
    assert pool.stats().created == {'spare': 0, 'room': 1, 'replacement': 1, 'eviction': 1}
    pool.give_back(c)
    pool.stop()
    spares = make_pool(Factory(), max_alive=2, spares={'img': 1})
    assert spares_ready(spares, {'img': 1}) and spares.stats().created['spare'] == 1
    spares.stop()


def patient_pool(factory):
    """A pool that waits for a container being put back as long as a test
    holds its reset (PUT_BACK_WAIT_SEC would let it go on within 0.1 s)."""
    return make_pool(factory, max_alive=3, put_back_wait_sec=WAIT)


def put_back_slowly(pool, container, job):
    """`container`'s job released on a thread of its own, its reset held
    until the returned event is set."""
    may_end = container.reset_may_end = threading.Event()
    pool.give_back(container)
    releasing = threading.Thread(target=pool.release, args=(job, ))
    releasing.start()
    assert container.resetting.wait(WAIT)
    return may_end, releasing


def acquire_on_a_thread(pool, job, image='img'):
    got = []
    thread = threading.Thread(target=lambda: got.append(pool.acquire(job, image, lambda c: None)))
    thread.start()
    return got, thread


def waited_for(pool, a):
    """Job a's container `a` put back slowly, and job b's acquire, on a
    thread of its own, waiting for it."""
    may_end, releasing = put_back_slowly(pool, a, 'a')
    got, acquiring = acquire_on_a_thread(pool, 'b')
    assert pool.wait_for(lambda s: s.awaiting_put_back == 1, WAIT)
    return may_end, releasing, got, acquiring


def test_with_room_a_container_being_put_back_is_waited_for_rather_than_a_new_one_made():
    """Red when a new one is made: a burst of jobs as others end made
    containers (the engine's 100 ms each, on the judging cores) where a
    reset of milliseconds gave one."""
    factory = Factory()
    pool = patient_pool(factory)
    a = pool.acquire('a', 'img', lambda c: None)
    may_end, releasing, got, acquiring = waited_for(pool, a)
    assert len(factory.made) == 1
    may_end.set()
    acquiring.join(WAIT)
    releasing.join(WAIT)
    assert got == [a] and len(factory.made) == 1
    assert pool.stats().awaiting_put_back == 0
    pool.stop()


def test_only_as_many_acquires_wait_as_containers_are_being_put_back():
    factory = Factory()
    pool = patient_pool(factory)
    a = pool.acquire('a', 'img', lambda c: None)
    may_end, releasing, first, first_thread = waited_for(pool, a)
    second = pool.acquire('c', 'img', lambda c: None)  # a new one, at once
    assert second is not a and len(factory.made) == 2
    may_end.set()
    first_thread.join(WAIT)
    releasing.join(WAIT)
    assert first == [a]
    pool.stop()


def test_a_container_put_back_that_cannot_be_reset_lets_its_waiter_make_a_new_one():
    """Red when the waiter is not woken by the failure: it waited for its
    bound and its run became a Judge Error."""
    factory = Factory()
    pool = patient_pool(factory)
    a = pool.acquire('a', 'img', lambda c: None)
    a.reset_fails = True
    may_end, releasing, got, acquiring = waited_for(pool, a)
    may_end.set()
    acquiring.join(WAIT)
    releasing.join(WAIT)
    assert len(got) == 1 and got[0] is not a and len(factory.made) == 2
    pool.stop()


def test_a_stop_ends_the_wait_for_a_container_being_put_back():
    factory = Factory()
    pool = SandboxPool(factory,
                       max_alive=3,
                       spares={},
                       acquire_timeout=6 * WAIT,
                       put_back_wait_sec=6 * WAIT)
    pool.start()
    a = pool.acquire('a', 'img', lambda c: None)
    may_end, releasing = put_back_slowly(pool, a, 'a')
    failed = []

    def acquire():
        try:
            pool.acquire('b', 'img', lambda c: None)
        except SandboxBroken as exc:
            failed.append(exc)

    acquiring = threading.Thread(target=acquire)
    acquiring.start()
    assert pool.wait_for(lambda s: s.awaiting_put_back == 1, WAIT)
    pool.stop()
    acquiring.join(WAIT / 2)
    assert not acquiring.is_alive()  # not once the reset ends (it is held for WAIT)
    assert [str(exc) for exc in failed] == ['sandbox pool is stopped'] and len(factory.made) == 1
    may_end.set()
    releasing.join(WAIT)
    assert a.destroyed


def test_a_container_of_the_job_s_own_given_back_ends_the_wait_for_one_being_put_back():
    """Red when only the end of a put back ends the wait: a reset the
    supervisor never answers held the run for its 10 s bound."""
    factory = Factory()
    pool = patient_pool(factory)
    a = pool.acquire('a', 'img', lambda c: None)
    busy = pool.acquire('b', 'img', lambda c: None)
    may_end, releasing, got, acquiring = waited_for(pool, a)
    pool.give_back(busy)
    acquiring.join(WAIT / 2)
    assert got == [busy]  # not once the reset ends (it is held for WAIT)
    may_end.set()
    releasing.join(WAIT)
    pool.stop()


def test_a_put_back_of_another_image_is_not_waited_for():
    factory = Factory()
    pool = patient_pool(factory)
    a = pool.acquire('a', 'img', lambda c: None)
    may_end, releasing = put_back_slowly(pool, a, 'a')
    got, acquiring = acquire_on_a_thread(pool, 'b', image='other')
    acquiring.join(WAIT / 2)
    assert len(got) == 1 and got[0].image == 'other'  # not once the reset ends
    may_end.set()
    releasing.join(WAIT)
    pool.stop()


def test_put_backs_slower_than_a_new_container_are_not_waited_for_longer_than_one_takes():
    """Red when the acquire fails at the end of its wait (every later run
    of the image, with room in the pool, became a Judge Error), or when it
    waits for as long as the put backs take: a job can make its folder's
    removal take seconds, and the acquires waiting for its containers, one
    after another, waited that long for each."""
    factory = Factory()
    pool = make_pool(factory, max_alive=4)  # PUT_BACK_WAIT_SEC, the runner's
    a = pool.acquire('a', 'img', lambda c: None)
    b = pool.acquire('b', 'img', lambda c: None)
    held = [put_back_slowly(pool, a, 'a'), put_back_slowly(pool, b, 'b')]
    got = pool.acquire('c', 'img', lambda c: None)  # the resets are held for WAIT
    assert got not in (a, b) and len(factory.made) == 3
    for may_end, releasing in held:
        may_end.set()
        releasing.join(WAIT)
    pool.stop()
