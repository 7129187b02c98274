"""Issue 31, interfaces: the main job's terminal table cuts nothing; a sweep without a bound
has an ``algorithm`` column; ``verify.check_log`` refuses an unknown parameter."""

import io

import pytest
from rich.console import Console

import boundlab
import verify
from boundlab.errors import UnknownNameError
from verify.compare import compare
from verify.report import print_table

OK = dict(eta=0.2, tau=10, L=0.2, zeta=0.43)
LONG = "L=2.0, mu=1.0, E=2, G=0.5, sigma=0.3, Gamma=0.2, rho_bar=1.5, D0=1.0"


def _results():
    """Rows that used to read the same on the terminal: one long case under two bounds and
    two checks whose names share their first 29 characters; 4000 and 100000 samples."""
    out = []
    for bound_id in ("drift.plateau", "drift.plateau_finite.printed"):
        r = compare(boundlab.get("drift.plateau"), [0.01], params=OK,
                    check="skew_constants", case=LONG)
        r.bound_id, r.effective_samples = bound_id, 4000
        out.append(r)
    for name in ("generic_drift_round_progress", "generic_drift_round_progress_printed"):
        r = compare(boundlab.get("drift.plateau"), [0.02], params=OK, check=name,
                    case="search")
        r.effective_samples = 100000
        out.append(r)
    return out


def _screen() -> str:
    buf = io.StringIO()
    print_table(_results(), Console(file=buf, width=100, color_system=None))
    return buf.getvalue()


def test_the_terminal_table_cuts_no_label_and_no_count():
    text = _screen()
    assert "\u2026" not in text  # no ellipsis anywhere
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
    assert " 4000 " in text and " 100000 " in text  # not "4…"
    words = " ".join(text.split())
    for part in LONG.split():  # the long case wraps inside its column, every word kept
        assert part in words


def test_rows_that_read_the_same_before_are_told_apart_by_their_heading():
    text = _screen()
    heads = [ln.strip() for ln in text.splitlines() if " · " in ln]
    assert heads[:4] == ["skew_constants · drift.plateau",
                         "skew_constants · drift.plateau_finite.printed",
                         "generic_drift_round_progress · drift.plateau",
                         "generic_drift_round_progress_printed · drift.plateau"]


def test_a_sweep_without_a_bound_has_an_algorithm_column():
    df = verify.sweep("quadratic", "fedavg", grid={"lr": [0.05]}, seeds=1, rounds=2,
                      n_clients=2, dim=2)
    assert "algorithm" in df.columns and set(df["algorithm"]) == {"fedavg"}
    judged = verify.sweep("quadratic", "fedavg", grid={"lr": [0.05]}, seeds=1, rounds=2,
                          n_clients=2, dim=2, bound="drift.round_progress")
    assert set(judged["algorithm"]) == {"fedavg"}  # the same column as a judged sweep's


def test_a_resumed_sweep_has_the_column_too(tmp_path):
    kw = dict(grid={"lr": [0.05, 0.1]}, seeds=1, rounds=2, n_clients=2, dim=2,
              out=tmp_path / "s")
    first = verify.sweep("quadratic", "fedavg", **kw)
    again = verify.sweep("quadratic", "fedavg", **kw)  # read back from the point files
    assert list(again["algorithm"]) == list(first["algorithm"]) == ["fedavg"] * 6


LOG = {"round": [0, 1, 2, 3], "shadow_gap": [0.5, 0.3, 0.2, float("nan")]}
PRM = dict(D=1.0, eta=0.1, tau=2, T=3, L=1.0, zeta=0.5)


@pytest.mark.parametrize("name", ["lr", "etta", "rounds"])
def test_check_log_refuses_an_unknown_parameter_naming_the_valid_ones(name):
    bound = boundlab.get("drift.plateau_finite")
    with pytest.raises(UnknownNameError) as e:
        verify.check_log(bound, LOG, {**PRM, name: 0.1})
    msg = str(e.value)
    assert f"'{name}'" in msg and "drift.plateau_finite" in msg
    assert "valid: " + ", ".join(sorted({*bound.params, *bound.extra_params})) in msg
    assert verify.check_log(bound, LOG, PRM)["verdict"].iloc[0] == "holds"  # known names pass
