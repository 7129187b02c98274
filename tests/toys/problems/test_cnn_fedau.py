"""FedAU's small CNN for 3-channel images (generated arrays) and the CIFAR-10 binary reader."""

import os

import numpy as np
import pytest

from boundlab.errors import DomainError

torch = pytest.importorskip("torch")

from toys.problems.cnn import CNNProblem, load_cifar_bin  # noqa: E402


def _prob(N=2, n=3, side=8, C=4):
    rng = np.random.default_rng(0)
    return CNNProblem(rng.random((N, n, 3, side, side)), rng.integers(0, C, (N, n)),
                      np.ones((N, n), bool), classes=C, hidden=8, arch="fedau", seed=1)


def test_fedau_cnn_shapes_and_gradients():
    prob = _prob()
    assert prob.channels == 3
    # parameters: conv(3->32) + conv(32->32) + fc(32*2*2 -> 8) + fc(8 -> 4)
    assert prob.dim == (3 * 32 * 9 + 32) + (32 * 32 * 9 + 32) + (128 * 8 + 8) + (8 * 4 + 4)
    W = np.stack([prob.x0] * 2)
    G = prob.grads(W)
    j = int(np.argmax(np.abs(G[0])))
    E = np.zeros_like(W)
    E[:, j] = 1e-6
    fd = (prob.losses(W + E) - prob.losses(W - E)) / 2e-6
    assert np.allclose(G[:, j], fd, rtol=1e-5)


def test_fedau_cnn_runs_with_test_metrics():
    import toys
    from toys.engine import TestMetrics

    prob = _prob()
    rng = np.random.default_rng(5)
    prob.test = {"X": rng.random((5, 3, 8, 8)), "y": rng.integers(0, 4, 5)}
    tr = toys.run(prob, "fedavg", rounds=2, seed=0, lr=0.05, backend="torch", device="cpu",
                  record="none", callbacks=[TestMetrics(prob)])
    assert np.all(np.isfinite(tr.metrics["test_loss"]))
    assert set(np.round(tr.metrics["test_accuracy"] * 5, 9)) <= {0.0, 1.0, 2.0, 3.0, 4.0, 5.0}


def test_cifar_bin_reader(tmp_path):
    rec = bytes([3]) + bytes(range(256)) * 12  # 1 + 3072 bytes
    p = tmp_path / "data_batch_1.bin"
    p.write_bytes(rec * 2)
    X, y = load_cifar_bin(tmp_path)
    assert X.shape == (2, 3, 32, 32) and y.tolist() == [3, 3]
    assert X[0, 0, 0, :3].tolist() == [0.0, 1 / 255, 2 / 255]
    (tmp_path / "bad.bin").write_bytes(b"\x00" * 10)
    with pytest.raises(DomainError, match="3073"):
        load_cifar_bin(tmp_path / "bad.bin")
    with pytest.raises(DomainError, match="path"):
        load_cifar_bin(os.path.join(tmp_path, "missing.bin"))


def test_bad_arch():
    with pytest.raises(DomainError, match="arch"):
        CNNProblem(np.zeros((1, 1, 8, 8)), np.zeros((1, 1), int), np.ones((1, 1), bool),
                   arch="resnet")
