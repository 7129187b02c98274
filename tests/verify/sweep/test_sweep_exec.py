"""verify.sweep.executor: a Dask scheduler address is checked, and connecting is bounded by
``connect_timeout`` (more hostile schedulers in tests/fuzz/test_fuzz_sweep.py)."""

import socket
import threading
import time
import warnings

import pytest

import verify
from boundlab.errors import DomainError
from verify.cli import main
from verify.sweep.executor import CONNECT_TIMEOUT, check_scheduler, probe_scheduler

KW = dict(grid={"lr": [0.1]}, seeds=1, rounds=1, n_clients=2, dim=2)


@pytest.fixture
def silent_server():
    """Accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    conns = []

    def serve():
        while True:
            try:
                conns.append(sock.accept()[0])
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()
    for c in conns:
        c.close()


def test_addresses_are_parsed_with_a_documented_default_timeout():
    assert CONNECT_TIMEOUT == 10.0
    assert check_scheduler("tcp://10.0.0.2:8786") == ("tcp", "10.0.0.2", 8786, 10.0)
    assert check_scheduler("tls://[::1]:9000", 2) == ("tls", "::1", 9000, 2.0)
    for bad, why in (("tcp://10.0.0.2", "no port"), ("udp://h:1", "unknown scheme"),
                     ("tcp://h:70000", "1..65535"), ("tcp://a b:1", "host")):
        with pytest.raises(DomainError, match=f"scheduler = .*{why}"):
            check_scheduler(bad)


def test_a_scheduler_that_never_answers_is_refused_within_the_timeout(silent_server):
    pytest.importorskip("distributed")
    start = time.monotonic()
    with pytest.raises(DomainError, match=r"scheduler = .*did not answer within 0\.3 s"):
        verify.sweep("quadratic", "fedavg", executor="dask", scheduler=silent_server,
                     connect_timeout=0.3, **KW)
    assert time.monotonic() - start < 3.0


def test_the_cli_options_set_the_timeout(silent_server, capsys, tmp_path):
    pytest.importorskip("distributed")
    for argv in (["sweep", "fedavg", "--problem", "quadratic", "--grid", "lr=0.1", "--seeds",
                  "1", "--rounds", "1", "n_clients=2", "dim=2"],
                 ["verify", "--only", "drift_plateau", "--out", str(tmp_path / "o")]):
        start = time.monotonic()
        code = main([*argv, "--executor", "dask", "--scheduler", silent_server,
                     "--connect-timeout", "0.3"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "scheduler" in err and "0.3 s" in err
        assert time.monotonic() - start < 5.0


def test_a_real_scheduler_passes_the_probe():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp",
                                  dashboard_address=":0") as cluster:
        assert probe_scheduler(cluster.scheduler_address, 5) is None


def test_the_local_cluster_serves_http_on_localhost_at_a_free_port_without_warnings():
    """A second sweep beside a running Dask cluster (port 8787 taken) starts quietly: the
    local cluster's HTTP server binds 127.0.0.1 at a free port, never 8787 or all interfaces."""
    distributed = pytest.importorskip("distributed")
    from verify.sweep import executor

    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", 8787))  # hold 8787 (if another process holds it, the same)
    except OSError:
        pass
    try:
        executor.close_local_clusters()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            client = executor._local_client(distributed, 1)
        host, port = client.cluster.scheduler.http_server.address, \
            client.cluster.scheduler.http_server.port
        assert host == "127.0.0.1" and port != 8787
    finally:
        executor.close_local_clusters()
        taken.close()
