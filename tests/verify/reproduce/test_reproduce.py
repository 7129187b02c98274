"""``verify.reproduce`` and ``boundlab reproduce``: registry, outputs, resumability, CLI."""

import json

import pytest

import verify
from boundlab.errors import DomainError
from verify.cli import main
from verify.reproduce import reproduce_all
from verify.reproduce.registry import (
    OUTCOMES,
    PAPERS,
    Claim,
    Config,
    Result,
    experiments,
    order,
    select,
)

TINY = Config(tiny=True, backend="numpy")


def test_registry_covers_the_five_papers():
    exps = experiments()
    ids = [e.id for e in exps]
    assert len(ids) == len(set(ids))
    assert {e.paper for e in exps} == set(PAPERS)
    required = {"000:table3", "000:table4", "000:fig2-4", "000:fig5", "000:fig6", "000:fig7",
                "001:fig1", "001:fig2", "001:fig3", "001:k", "002:table1", "002:fig1",
                "002:tableD1", "002:tableD3", "002:tableD6", "002:cnn", "003:table1", "003:fig3",
                "003:fig10", "003:fig12", "004:fig2", "004:fig3", "004:fig4", "004:fig5"}
    assert required <= set(ids)
    for e in exps:  # every item names the paper's figure/table, its stand-in and numbers
        assert e.ref and e.stand_in and e.reported and e.title


def test_outcome_is_differs_when_any_claim_fails():
    ok = Claim("a", "1", "1", "equal", True)
    bad = Claim("b", "1 < 2", "2 > 1", "same order", False, "order reversed")
    assert Result([], [ok]).outcome == "matches"
    r = Result([], [ok, bad])
    assert r.outcome == "differs" and "order reversed" in r.how
    assert Result([], []).outcome == "differs"  # nothing compared is not a match


def test_tie_and_not_exercised_outcomes():
    ok = Claim("a", "1", "1", "equal", True)
    tie = Claim("b", "1 < 2", "1.000 vs 1.001", "resolution 0.01", False, status="tie")
    nx = Claim("c", "G = 10 imperceptible", "never clips", "clips once", False,
               status="not exercised")
    bad = Claim("d", "1 < 2", "2 > 1", "same order", False, "order reversed")
    assert (tie.outcome, nx.outcome) == ("tie", "not exercised")
    # issue 32: no roll-up turns a tie or a part the setup cannot show into a match
    assert Result([], [ok, tie, nx]).outcome == "tie"  # the others named in how
    assert Result([], [ok, nx]).outcome == "not exercised"
    assert Result([], [ok, ok]).outcome == "matches"
    assert "b: tie" in Result([], [ok, tie, nx]).how and "c: not exercised" in \
        Result([], [ok, tie, nx]).how
    assert Result([], [tie, nx]).outcome == "tie"
    assert Result([], [nx]).outcome == "not exercised"
    assert Result([], [ok, tie, bad]).outcome == "differs"
    with pytest.raises(DomainError, match="status"):
        Claim("e", "", "", "", True, status="maybe")
    assert order(0.8, 0.7999, 0.001) == "tie" and order(0.8, 0.79, 0.001) == ">"


def test_items_write_outputs_and_resume(tmp_path):
    items = ["002:fig1", "003:fig3", "004:fig3"]
    seen = []
    for it in items:
        st = reproduce_all(it, out=tmp_path, config=TINY,
                           progress=lambda e, s, t: seen.append((e.id, s)))
        assert st[0][1] in OUTCOMES
    for it in items:
        d = tmp_path / it.replace(":", "-")
        meta = json.loads((d / "done.json").read_text())
        assert meta["outcome"] in OUTCOMES and meta["claims"]
        assert (d / "figure.png").stat().st_size > 1000
        assert (d / "results.csv").read_text().count("\n") >= 2
        sec = (d / "section.md").read_text()
        for word in ("Stand-in and departures from the paper:", "*Data:*", "Power:",
                     "Paper reports", "| claim | paper | ours | rule | outcome |",
                     "Outcome rule", "tie"):
            assert word in sec
    again = reproduce_all("004:fig3", out=tmp_path, config=TINY)
    assert again == [("004:fig3", "skipped")]
    report = (tmp_path / "report.md").read_text()
    assert "004:fig3" in report
    # another size is not "finished": it runs again
    assert not any(s == "skipped" for _, s in reproduce_all(
        "004:fig3", out=tmp_path, config=Config(tiny=True, backend="numpy", seeds=2)))


def test_public_function(tmp_path):
    res = verify.reproduce("004:fig5", config=TINY)
    assert res.outcome in OUTCOMES
    assert {r["tau"] for r in res.rows} == {10, 50}


def test_cli(tmp_path, capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out.split("\n\n")[0] + "\n"  # the registered items
    assert out.count("\n") == len(experiments()) and "000:table3" in out
    assert main(["reproduce", "9:fig1", "--list"]) == 2
    assert main(["reproduce", "004:nope"]) == 2
    assert main(["reproduce", "--backend", "jax", "--list"]) == 2
    assert main(["reproduce", "004", "--data", str(tmp_path / "missing"), "--out",
                 str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 4 and "Traceback" not in err


def test_select():
    assert [e.paper for e in select("003")] == ["003"] * len(select("003"))
    with pytest.raises(Exception, match="unknown"):
        select("007")
