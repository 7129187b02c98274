"""``python -m benchmarks reproduce``: runs one item at tiny size end to end in a fresh process
(strict JSON and the table), aggregates repeats by their medians, refuses bad options, and says
so (exit 2, one line) when ``--device cuda`` finds no CUDA."""

import json
import math

import pytest

from benchmarks.reproduce import cuda_status, main, summarise


def _rec(cpu, wall, load, err=None):
    return {"item": "004:fig5", "size": "tiny", "device": "cpu", "cpu_s": cpu, "wall_s": wall,
            "load_1min": load, "outcome": None if err else "matches", "error": err}


def test_summarise_takes_medians_of_the_repeats_per_item():
    rows = summarise([_rec(3.0, 1.0, 0.5), _rec(1.0, 4.0, 2.0), _rec(2.0, 2.0, 1.0),
                      {**_rec(7.0, 7.0, 0.1), "size": "quick"}])
    tiny, quick = rows
    assert (tiny["cpu_s"], tiny["wall_s"], tiny["repeats"]) == (2.0, 2.0, 3)  # by hand
    assert tiny["load_1min"] == [0.5, 2.0] and tiny["cpu_per_wall"] == 1.0
    assert (quick["size"], quick["repeats"], quick["cpu_s"]) == ("quick", 1, 7.0)


def test_summarise_reports_the_first_error_and_ignores_nan_times():
    (row,) = summarise([_rec(math.nan, math.nan, None, "boom"), _rec(4.0, 2.0, None)])
    assert row["error"] == "boom" and row["cpu_s"] == 4.0 and row["load_1min"] is None


def test_one_item_at_tiny_size_in_strict_json(capsys):
    assert main(["004:fig5", "--sizes", "tiny", "--repeat", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)  # one strict JSON document, nothing else
    (row,) = out["rows"]
    assert (row["item"], row["size"], row["device"], row["repeats"]) == \
        ("004:fig5", "tiny", "cpu", 1)
    assert row["error"] is None and row["outcome"] in ("matches", "differs", "tie",
                                                       "not exercised", "inconclusive")
    assert row["cpu_s"] > 0 and row["wall_s"] > 0 and out["totals"]["tiny/cpu"]["items"] == 1


def test_the_table_names_times_load_and_totals(capsys, monkeypatch):
    import benchmarks.reproduce as bench

    fake = iter([_rec(2.0, 1.0, 0.5), _rec(4.0, 3.0, 0.7)])
    monkeypatch.setattr(bench, "run_once", lambda *a, **k: next(fake))
    assert main(["004:fig5", "--sizes", "tiny", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert "load average" in out and "cpu/wall" in out and "total tiny/cpu" in out
    assert "3.00" in out and "2.00" in out  # medians of (2, 4) and (1, 3)


@pytest.mark.parametrize("argv, word", [(["--sizes", "full"], "--sizes"),
                                        (["--repeat", "0"], "--repeat"),
                                        (["--device", "tpu"], "--device"),
                                        (["999:nope"], "unknown")])
def test_bad_options_exit_2_with_one_line(capsys, argv, word):
    assert main(argv) == 2
    out = capsys.readouterr().out.strip()
    assert word in out and out.count("\n") == 0


def test_cuda_requested_without_cuda_says_so(capsys):
    ok, what = cuda_status()
    if ok:
        pytest.skip(f"CUDA is present ({what}): the no-CUDA message cannot be shown here")
    assert main(["004:fig5", "--device", "cuda", "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert "CUDA is not available" in out["error"] and "no GPU times" in out["error"]
