"""Single-file outputs of toys (issue 31): ``Trace.save``, ``write_log`` and ``checkpoint=``
replace a file only when boundlab wrote it and it is unchanged since (the hash in its record,
``.NAME.boundlab.json``), never a file whose first bytes merely look like boundlab's."""

import json

import numpy as np
import pytest

import toys
from boundlab.errors import OverwriteError
from boundlab.io import force_overwrite, record_path
from toys.engine.trace_io import write_log


@pytest.fixture(scope="module")
def trace():
    return toys.run(toys.quadratic(3, 2, seed=0), "fedavg", rounds=2, seed=0, lr=0.1)


def _refused(fn, f, before):
    with pytest.raises(OverwriteError, match=f.name):
        fn(f)
    assert f.read_bytes() == before  # the user's file, byte for byte


def test_save_refuses_a_users_csv_that_starts_like_a_trace_table(tmp_path, trace):
    f = tmp_path / "my.csv"
    f.write_text("round,accuracy\n0,0.91\n")
    _refused(trace.save, f, f.read_bytes())


def test_write_log_refuses_another_simulators_logs(tmp_path, trace):
    pd = pytest.importorskip("pandas")
    csv, js = tmp_path / "sim.csv", tmp_path / "sim.json"
    csv.write_text("round,loss\n0,1.5\n")
    js.write_text('[{"round": 0, "loss": 1.5}]')
    for f in (csv, js):
        _refused(lambda p: write_log(trace, p), f, f.read_bytes())
    pytest.importorskip("pyarrow")
    pq = tmp_path / "sim.parquet"
    pd.DataFrame({"round": [0, 1], "loss": [1.0, 0.5]}).to_parquet(pq, index=False)
    _refused(lambda p: write_log(trace, p), pq, pq.read_bytes())


def test_a_table_boundlab_wrote_is_replaced_an_edited_one_is_not(tmp_path, trace):
    f = tmp_path / "t.csv"
    trace.save(f)
    trace.save(f)  # its own table, unchanged: replaced
    rec = json.loads(record_path(f).read_text())
    assert rec["sha256"] == __import__("hashlib").sha256(f.read_bytes()).hexdigest()
    f.write_text(f.read_text() + "# my note\n")
    _refused(trace.save, f, f.read_bytes())
    g = tmp_path / "log.json"
    write_log(trace, g)
    write_log(trace, g)
    g.write_text(g.read_text().replace("0", "1", 1))
    _refused(lambda p: write_log(trace, p), g, g.read_bytes())


def test_a_record_does_not_vouch_for_a_file_of_another_name(tmp_path, trace):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    trace.save(a)
    b.write_bytes(a.read_bytes())  # the user's copy: same bytes, no record of its own
    record_path(b).write_text(record_path(a).read_text())  # a record naming a.csv
    _refused(trace.save, b, b.read_bytes())


def test_force_overwrite_replaces_the_users_file(tmp_path, trace):
    f = tmp_path / "my.csv"
    f.write_text("mine\n")
    with force_overwrite():
        trace.save(f)
    assert f.read_text().startswith("round,")
    trace.save(f)  # now boundlab's, recorded


def test_checkpoint_never_replaces_a_users_npz(tmp_path):
    f = tmp_path / "model.npz"
    np.savez(f, meta=np.zeros(3), weights=np.ones(4))
    before = f.read_bytes()
    prob = toys.quadratic(3, 2, seed=0)
    with pytest.raises(OverwriteError, match="checkpoint.*model.npz"):
        toys.run(prob, "fedavg", rounds=2, seed=0, lr=0.1, checkpoint=f, checkpoint_every=1)
    assert f.read_bytes() == before


def test_a_checkpoint_callback_save_follows_the_rule_too(tmp_path):
    f = tmp_path / "ck.npz"
    f.write_bytes(b"mine")
    prob = toys.quadratic(3, 2, seed=0)

    def cb(info):
        info.checkpoint(f)
    with pytest.raises(OverwriteError, match="ck.npz"):
        toys.run(prob, "fedavg", rounds=1, seed=0, lr=0.1, callbacks=[cb])
    assert f.read_bytes() == b"mine"
    ck = tmp_path / "own.npz"
    for _ in range(2):  # its own checkpoint, rewritten every round and run: replaced
        toys.run(prob, "fedavg", rounds=2, seed=0, lr=0.1, checkpoint=ck, checkpoint_every=1)
    ck.write_bytes(ck.read_bytes() + b"\0")  # changed since: refused
    with pytest.raises(OverwriteError, match="changed since"):
        toys.run(prob, "fedavg", rounds=2, seed=0, lr=0.1, checkpoint=ck, checkpoint_every=1)
