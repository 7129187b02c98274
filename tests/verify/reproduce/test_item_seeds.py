"""Each item's own seeds per arm (issue 32: quick sizes that decide): an item whose quick seeds
were raised runs every arm on that many data seeds and says so in its section's seeds note; the
arms are faked here (the runs themselves are tested elsewhere), so the check is fast."""

import numpy as np
import pytest

from verify.reproduce import seed003, seed003_sweeps
from verify.reproduce.data import NotedCache
from verify.reproduce.registry import Config


@pytest.fixture
def fake_arms(monkeypatch):
    """seed003's arms replaced by constant curves; records each arm's number of seeds."""
    seen = []

    def arm(cfg, data, model, beta, local_steps, lr, clip, R, S, batch=None):
        seen.append(S)
        return np.full((S, R), 0.5 + 0.01 * beta)

    monkeypatch.setattr(seed003, "_CACHE", NotedCache())
    monkeypatch.setattr(seed003, "_arm", arm)
    return seen


@pytest.mark.parametrize("cfg, want", [(Config(quick=True), 8), (Config(), 8),
                                       (Config(tiny=True), 2), (Config(quick=True, seeds=4), 4)])
def test_fig3_runs_every_arm_on_its_own_seeds(fake_arms, cfg, want):
    res = seed003_sweeps.fig3(cfg)
    assert fake_arms and set(fake_arms) == {want}
    assert f"{want} data seeds" in res.setup
    assert any(f"(n = {want})" in c.ours for c in res.claims)


def test_acc_checks_the_seed_against_the_items_own_seeds(fake_arms):
    from boundlab.errors import DomainError

    cfg = Config(quick=True)
    assert seed003.acc(cfg, "imbalanced", "logistic", 1.0, seed=7, seeds=8).shape == (50,)
    with pytest.raises(DomainError, match="seed = 8"):
        seed003.acc(cfg, "imbalanced", "logistic", 1.0, seed=8, seeds=8)
