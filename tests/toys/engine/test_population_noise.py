"""toys.engine._population_noise: each instance draws from its own toys.run sampling stream,
only when it draws (active, needed), with its own shape."""

import numpy as np

from toys.engine._population_noise import InstanceRngs, sample_rngs


def _own(seed):
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[1])


def test_each_instance_draws_its_own_stream_only_when_it_draws():
    rngs = InstanceRngs([5, 6, 7])
    rngs.for_round(np.array([[True, False], [False, False], [False, True]]))
    first = rngs.random((2, 4), need=[True, True, False])
    assert np.array_equal(first[0], _own(5).random((2, 4)))
    assert np.isinf(first[1]).all() and np.isinf(first[2]).all()
    rngs.for_round(np.ones((3, 2), dtype=bool))
    second = rngs.random((2, 4), last=[4, 3, 2])
    g5 = _own(5)
    g5.random((2, 4))
    assert np.array_equal(second[0], g5.random((2, 4)))  # its stream moved on once
    assert np.array_equal(second[1, :, :3], _own(6).random((2, 3)))  # never drew before
    assert np.isinf(second[1, :, 3:]).all() and np.isinf(second[2, :, 2:]).all()
    assert np.array_equal(second[2, :, :2], _own(7).random((2, 2)))


def test_every_backend_gets_the_seeds_and_no_generator_is_made_before_a_draw():
    for backend in ("numpy", "torch"):
        rngs = sample_rngs([0, 1], backend)
        assert len(rngs) == 2 and rngs.seeds == [0, 1] and rngs._gens is None
