from runner.active_jobs import ActiveJobs


def test_counts_claims_not_ids():
    tracker = ActiveJobs()
    tracker.add('jb_1')
    tracker.add('jb_2')
    assert len(tracker) == 2
    assert tracker.snapshot() == ['jb_1', 'jb_2']


def test_two_generations_of_one_job_interleave():
    """G1 is claimed, aborted and re-claimed as G2 before G1's release lands:
    G1's release must not drop G2's lease renewal or capacity count."""
    tracker = ActiveJobs()
    tracker.add('jb_1')  # G1 claimed
    tracker.add('jb_1')  # G2 claimed (after G1's abort answered 202)
    assert len(tracker) == 2
    assert tracker.snapshot() == ['jb_1']  # one lease per id
    tracker.remove('jb_1')  # G1 finalized
    assert len(tracker) == 1
    assert tracker.snapshot() == ['jb_1']  # G2 still renewed
    tracker.add('jb_1')  # G3, while G2 is live
    tracker.remove('jb_1')
    tracker.remove('jb_1')
    assert len(tracker) == 0
    assert tracker.snapshot() == []


def test_removing_more_than_added_never_goes_negative():
    tracker = ActiveJobs()
    tracker.remove('jb_1')
    assert len(tracker) == 0
    tracker.add('jb_1')
    assert len(tracker) == 1
    assert tracker.snapshot() == ['jb_1']
