"""verify.falsify(..., executor="dask"): the search's groups as Dask tasks, the same result bit
for bit as the local run (each group draws from its own generator and its share of the budget
is fixed before any group runs)."""

from __future__ import annotations

import json

import pytest

import boundlab
import verify
from boundlab import Bound, make_params, sym
from boundlab.errors import DomainError
from verify.cli import main

pytest.importorskip("dask.distributed")


@pytest.fixture
def wrong_gd_bound():
    """A user's GD bound with the constant 1/8 of Drori-Teboulle's 1/(4T + 2) (false)."""
    L, D, T = sym("L"), sym("D"), sym("T")
    b = Bound(id="mine.exec_gd", source="test", expr=L * D**2 / (8 * T),
              params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    boundlab.register(b, algorithm="gd", function_class="smooth-convex")
    yield b.id
    boundlab.unregister(b.id)


def test_dask_executor_gives_the_local_result_bit_for_bit(wrong_gd_bound, capsys):
    kw = dict(budget=60, seed=3, exact=False)
    local = verify.falsify("contraction.lemma_a3", **kw)
    assert local.verdict == "holds" and local.evaluations == 60
    mine = verify.falsify(wrong_gd_bound, **kw)
    assert mine.verdict == "VIOLATED" and mine.instance.replay() > 1
    # the catalogue bound through the API, the user's bound through the CLI (a cluster each)
    dask = verify.falsify("contraction.lemma_a3", executor="dask", **kw)
    assert (dask.verdict, dask.worst_ratio, dask.evaluations, dask.per_family) == (
        local.verdict, local.worst_ratio, local.evaluations, local.per_family)
    assert dask.instance.to_dict() == local.instance.to_dict()
    rc = main(["falsify", wrong_gd_bound, "--budget", "60", "--seed", "3", "--no-exact",
               "--executor", "dask", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and out["verdict"] == "VIOLATED"
    assert out["worst_ratio"] == mine.worst_ratio  # bit for bit (JSON keeps a float's repr)


def test_executor_and_scheduler_are_checked_before_any_work():
    with pytest.raises(DomainError, match="executor"):
        verify.falsify("contraction.lemma_a3", budget=20, executor="threads")
    with pytest.raises(DomainError, match="scheduler"):
        verify.falsify("contraction.lemma_a3", budget=20, scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(DomainError, match="scheduler"):
        verify.falsify("contraction.lemma_a3", budget=20, executor="dask", scheduler="nowhere")
