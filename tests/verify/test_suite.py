"""verify.suite.run_suite: checks side by side in forked workers give the results of one
process, in the same order; bad ``jobs`` is refused by name; a session-registered bound is seen
by the workers."""

import dataclasses
import re

import pytest

from boundlab.errors import DomainError
from verify.suite import Context, run_suite


def _untimed(v):
    """``v`` without its timings: ``seconds`` keys at any depth, "(..., 4.1 s)" in notes."""
    if isinstance(v, dict):
        return {k: _untimed(x) for k, x in v.items() if k != "seconds"}
    if isinstance(v, (list, tuple)):
        return type(v)(_untimed(x) for x in v)
    if isinstance(v, str):
        return re.sub(r"\d+(\.\d+)? s\b", "<t> s", v)
    return v


def _values(results):
    """What a result says: every field but its timing (repr: NaN equals NaN, floats to the
    last bit)."""
    return [repr(_untimed(dataclasses.asdict(r))) for r in results]


def test_two_jobs_give_the_results_of_one_in_the_same_order():
    ctx = Context(quick=True, falsify_budget=0, tightness=False)
    one = run_suite("drift.plateau", ctx, progress=False, jobs=1)
    two = run_suite("drift.plateau", ctx, progress=False, jobs=2)
    assert len(one) > 3
    assert _values(two) == _values(one)


def test_progress_is_called_once_per_check_with_workers():
    seen = []
    run_suite("skew.rho_range", Context(quick=True, falsify_budget=0, tightness=False),
              progress=seen.append, jobs=2)
    assert seen and all(s.startswith("skew: ") for s in seen)
    assert len(seen) == len(set(seen))


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True, "2"])
def test_bad_jobs_is_refused_by_name(jobs):
    with pytest.raises(DomainError, match="jobs"):
        run_suite("drift", Context(quick=True), progress=False, jobs=jobs)


def test_cli_refuses_a_bad_jobs_count_in_one_line(capsys):
    from verify.cli import main

    assert main(["verify", "--jobs", "0", "--quick", "--only", "drift_plateau"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--jobs" in err[0] and "0" in err[0]
