"""``boundlab reproduce --seeds N`` and ``--device``: validated (exit 2, one line naming the
option), honoured by the items (each section states n per arm and whether the seeds ran as one
population), and Config.seeds validated."""

import json

import pytest

from boundlab.errors import DomainError
from verify.cli import main
from verify.reproduce.batch import BATCHED
from verify.reproduce.registry import Config


@pytest.mark.parametrize("value", ["0", "-3", "2.5", "x", "1e3", ""])
def test_a_bad_seeds_count_exits_2_naming_the_option(tmp_path, capsys, value):
    assert main(["reproduce", "004:fig5", "--size", "tiny", "--seeds", value,
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--seeds" in err[0] and "positive integer" in err[0]
    assert not (tmp_path / "o").exists()  # refused before any work


@pytest.mark.parametrize("args, says", [(["--device", "gpu"], "cpu, cuda or cuda:N"),
                                        (["--device", "cuda:x"], "cpu, cuda or cuda:N"),
                                        (["--backend", "numpy", "--device", "cpu"],
                                         "--backend numpy")])
def test_a_bad_device_exits_2_naming_the_option(tmp_path, capsys, args, says):
    assert main(["reproduce", "004:fig5", "--size", "tiny", *args,
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--device" in err[0] and says in err[0]


def test_cuda_where_there_is_none_exits_2_before_any_work(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    assert main(["reproduce", "004:fig5", "--device", "cuda", "--out",
                 str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "--device" in err and "CUDA is not available" in err
    assert not (tmp_path / "o").exists()


def test_config_seeds_must_be_a_positive_integer():
    for bad in (0, -1, 2.0, True, "3"):
        with pytest.raises(DomainError, match="seeds"):
            Config(seeds=bad)
    assert Config(seeds=30).n_seeds(5, 3, 2) == 30 and Config(tiny=True).n_seeds(5, 3, 2) == 2


def _item(out, item):
    d = out / item.replace(":", "-")
    return (d / "section.md").read_text(), json.loads((d / "done.json").read_text())


def _run(out, item, capsys, *extra):
    assert main(["reproduce", item, "--size", "tiny", "--backend", "numpy", "--seeds", "3",
                 "--out", str(out), *extra]) == 0
    assert "0 error(s)" in capsys.readouterr().out
    return _item(out, item)


def test_seeds_reach_a_logistic_item_whose_seeds_run_as_one_population(tmp_path, capsys):
    sec, meta = _run(tmp_path, "002:tableD3", capsys)
    assert "n = 3 seeds per arm" in sec and BATCHED in sec
    assert meta["seeds_per_arm"].startswith("n = 3 seeds per arm")
    assert meta["config"]["seeds"] == 3


def test_seeds_reach_an_mlp_item_whose_seeds_run_one_at_a_time(tmp_path, capsys):
    sec, meta = _run(tmp_path, "004:fig4", capsys)
    assert "n = 3 seeds per arm" in sec and "the seeds run one at a time (the MLP on numpy" \
        in sec


def test_a_deterministic_item_says_seeds_do_not_apply(tmp_path, capsys):
    sec, meta = _run(tmp_path, "004:fig3", capsys)
    assert "*Seeds:* one run per arm (n = 1" in sec and meta["seeds_per_arm"] == ""


def test_device_cpu_runs_the_logistic_arms_on_torch(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "out"
    assert main(["reproduce", "002:tableD3", "--size", "tiny", "--device", "cpu", "--seeds",
                 "2", "--out", str(out)]) == 0
    sec, meta = _item(out, "002:tableD3")
    assert meta["backend"] == "torch" and meta["config"]["device"] == "cpu"
    assert BATCHED in sec and "n = 2 seeds per arm" in sec
