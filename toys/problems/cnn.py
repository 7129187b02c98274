"""The CNN of seeds 000/001 as a federated problem, with per-client models batched by torch.func.

BM's model (spec §6.1): conv3x3(1->32) + ReLU + maxpool2 -> conv3x3(32->64) + ReLU + maxpool2
-> flatten -> linear -> softmax, cross-entropy. Adapted to the 8x8 scikit-learn digits (the
offline stand-in for MNIST): both convolutions use padding 1 (without it an 8x8 image vanishes
after the second pooling), so the flattened size is 64 * 2 * 2 = 256 and the head is
``Linear(256, classes)`` (BM-A's code uses ``Linear(1600, 10)`` on 28x28 inputs; ``hidden=h``
inserts the text's hidden fully-connected layer with ReLU). The model is non-convex: F_i*, F*,
x* are unknown (None), so the engine records the raw loss and the loss-weighted rules use
``loss_offset="zero"`` (or ``"running_min"``), as the papers' code does.

FedAU's small CNN for 3-channel images (seed 002, App. C: 2 x (conv3x3 with 32 filters, ReLU,
max-pool 2) then two fully connected layers, ReLU, softmax; Kaiming initialisation) is
``arch="fedau"`` (:func:`make_fedau_cnn`), with images (N, n_max, channels, side, side), e.g.
user-provided CIFAR-10 binary files (:func:`load_cifar_bin`).

Every client's parameters are one row of an (N, d) stack; losses and gradients of all clients
are one ``torch.func.vmap`` over ``functional_call`` (and ``grad``), on any torch device in
float32 or float64, equal to a per-client ``loss.backward()`` to float64 round-off
(tests/toys/problems/test_cnn_torch.py); the torch oracle's ``subset`` computes the
participants only (gathered on the device). The numpy-side methods of the
:class:`~toys.problems.base.FederatedProblem` interface run the same code on CPU float64.

Example
-------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> imgs = rng.normal(size=(3, 5, 8, 8)); labs = rng.integers(0, 10, size=(3, 5))
>>> prob = CNNProblem(imgs, labs, np.ones((3, 5), bool), seed=0)
>>> prob.dim, prob.x0.shape
(21386, (21386,))
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError

from ..engine.backends.torch import VmapOracle
from ..validation import check_weights
from .base import FederatedProblem

__all__ = ["CNNProblem", "cnn_problem", "load_cifar_bin", "make_cnn", "make_fedau_cnn"]


def make_cnn(side: int = 8, classes: int = 10, hidden: int | None = None, channels: int = 1):
    """The BM CNN for ``side`` x ``side`` images with ``channels`` channels (padding 1, see
    the module docstring).

    >>> sum(p.numel() for p in make_cnn().parameters())
    21386
    """
    from torch import nn

    flat = 64 * (side // 4) ** 2
    head = [nn.Linear(flat, classes)] if hidden is None else [
        nn.Linear(flat, hidden), nn.ReLU(), nn.Linear(hidden, classes)]
    return nn.Sequential(
        nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), *head)


def make_fedau_cnn(side: int = 32, classes: int = 10, hidden: int | None = 128,
                   channels: int = 3):
    """FedAU's small CNN (seed 002): 2 x (conv3x3 32 filters, padding 1, ReLU, max-pool 2),
    flatten, Linear(32 (side/4)^2, hidden), ReLU, Linear(hidden, classes) (the SVHN variant
    with two fully connected layers; the paper's widths are in its code, 128 is ours), Kaiming
    (He) initialisation of the weights.

    >>> sum(p.numel() for p in make_fedau_cnn(side=8, hidden=16).parameters())
    12378
    """
    from torch import nn

    h = 128 if hidden is None else hidden
    net = nn.Sequential(
        nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * (side // 4) ** 2, h), nn.ReLU(), nn.Linear(h, classes))
    for m in net:
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
    return net


def load_cifar_bin(path):
    """Read CIFAR-10 binary batches (``data_batch_*.bin`` / ``test_batch.bin``: records of one
    label byte and 3 x 32 x 32 pixel bytes) from a file or a directory. Returns ``(images,
    labels)``: (n, 3, 32, 32) floats in [0, 1] and (n,) ints. Data only, no pickle.

    >>> import os, tempfile, numpy as np
    >>> p = os.path.join(tempfile.mkdtemp(), "data_batch_1.bin")
    >>> _ = open(p, "wb").write(bytes([7] + [255] * 3072 + [2] + [0] * 3072))
    >>> X, y = load_cifar_bin(p)
    >>> X.shape, y.tolist(), float(X[0].max())
    ((2, 3, 32, 32), [7, 2], 1.0)
    """
    import os

    path = os.fspath(path)
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".bin"))
    else:
        files = [path]
    if not files or not all(os.path.isfile(f) for f in files):
        raise DomainError("path", path, "a CIFAR-10 binary file (.bin) or a directory of them")
    raws = []
    for f in files:
        with open(f, "rb") as fh:
            raw = np.frombuffer(fh.read(), dtype=np.uint8)
        if raw.size == 0 or raw.size % 3073:
            raise DomainError("path", f, "CIFAR-10 binary records of 3073 bytes")
        raws.append(raw.reshape(-1, 3073))
    rec = np.concatenate(raws)
    return rec[:, 1:].reshape(-1, 3, 32, 32) / 255.0, rec[:, 0].astype(int)


class _Core(VmapOracle):
    """Batched losses / gradients of the CNN on one torch device and dtype: every client's
    model is one row of the (N, d) stack and all clients are one ``vmap`` over
    ``functional_call`` (and ``grad``): one batched call, no loop over clients or samples.
    ``subset(clients)`` (participants only, gathered on the device), the minibatch draw and
    the batched calls come from the torch backend's
    :class:`~toys.engine.backends.torch.VmapOracle`."""

    def __init__(self, prob, ops):
        import torch
        from torch.func import functional_call

        self.module = prob.network().to(device=ops.device, dtype=ops.dtype)
        self.names = [n for n, _ in self.module.named_parameters()]
        self.shapes = [tuple(p.shape) for _, p in self.module.named_parameters()]
        self.sizes = [math.prod(s) for s in self.shapes]
        self.l2 = prob.l2

        def loss_one(theta, X, y, w):
            params = {n: t.reshape(s) for n, t, s in
                      zip(self.names, torch.split(theta, self.sizes), self.shapes)}
            logits = functional_call(self.module, params, (X,))
            ell = torch.nn.functional.cross_entropy(logits, y, reduction="none")
            return (w * ell).sum() + 0.5 * self.l2 * (theta * theta).sum()

        X = ops.asarray(prob.images if prob.images.ndim == 5 else prob.images[:, :, None, :, :])
        self._bind(ops, prob, X, ops.aslong(prob.labels), loss_one)
        self.row_floats = _activation_floats(self.module, self.X[0, :1], torch)

    def grads_rows(self, W, keys, b):
        """Gradients on the b rows of smallest key per client (``keys`` (N, n_max) float64)."""
        return self._grads_on(W, *self._rows_of_keys(keys, b))


def _activation_floats(module, x1, torch) -> int:
    """Numbers in the input and every leaf layer's output for one row ``x1`` (1, ...)."""
    sizes = [x1.numel()]
    hooks = [m.register_forward_hook(lambda m, i, o: sizes.append(o.numel()))
             for m in module.modules() if not list(m.children())]
    try:
        with torch.no_grad():
            module(x1)
    finally:
        for h in hooks:
            h.remove()
    return int(sum(sizes))


class CNNProblem(FederatedProblem):
    """Federated image classification with the BM CNN (non-convex; no exact optima).

    ``images`` (N, n_max, side, side) or (N, n_max, channels, side, side), ``labels``
    (N, n_max) ints in [0, classes), ``mask`` (N, n_max) bool; ``arch`` ``"bm"``
    (:func:`make_cnn`) or ``"fedau"`` (:func:`make_fedau_cnn`); ``weights`` default n_i / n;
    ``seed`` draws the initial model ``x0`` (torch's default layer initialisation from a
    seeded generator); ``l2`` adds l2/2 ||theta||^2.

    >>> import numpy as np
    >>> p = CNNProblem(np.zeros((2, 3, 8, 8)), np.zeros((2, 3), int), np.ones((2, 3), bool))
    >>> p.x_star is None, p.kind
    (True, 'cnn')
    """

    kind = "cnn"

    def __init__(self, images, labels, mask, classes: int = 10, weights=None, seed: int = 0,
                 hidden: int | None = None, l2: float = 0.0, name: str = "cnn",
                 arch: str = "bm"):
        import torch

        images = np.asarray(images, dtype=float)
        mask = np.asarray(mask, dtype=bool)
        if arch not in ("bm", "fedau"):
            raise DomainError("arch", arch, "'bm' or 'fedau'")
        if images.ndim not in (4, 5) or images.shape[-1] != images.shape[-2] or \
                images.shape[-1] % 4:
            raise DomainError("images", images, "array (N, n_max, [channels,] side, side), side "
                                                "a multiple of 4")
        N, n_max, side = images.shape[0], images.shape[1], images.shape[-1]
        self.channels = 1 if images.ndim == 4 else images.shape[2]
        self.arch = arch
        labels = np.asarray(labels)
        if mask.shape != (N, n_max) or labels.shape != (N, n_max):
            raise DomainError("mask", mask, f"bool array of shape ({N}, {n_max}) (and labels)")
        counts = mask.sum(axis=1)
        if np.any(counts == 0):
            raise DomainError("counts", counts, "at least one sample per client")
        lab = labels[mask]
        if lab.min() < 0 or lab.max() >= classes:
            raise DomainError("labels", lab, f"integers in [0, {classes - 1}]")
        self.images = np.where(mask.reshape(mask.shape + (1,) * (images.ndim - 2)), images, 0.0)
        self.labels = np.where(mask, labels, 0).astype(int)
        self.mask, self.side, self.classes, self.hidden = mask, side, int(classes), hidden
        self.l2 = float(l2)
        self.name, self.n_clients = name, N
        self.counts = counts.astype(int)
        self.p = self.counts / self.counts.sum() if weights is None else check_weights(
            "weights", weights, N)
        self.noise_std = 0.0
        self.x_star = self.F_star = self.x_star_i = self.F_star_i = None
        gen_state = torch.random.get_rng_state()
        try:
            torch.manual_seed(int(seed))
            net = self.network().double()
        finally:
            torch.random.set_rng_state(gen_state)
        self.x0 = torch.cat([p.detach().reshape(-1) for p in net.parameters()]).numpy().copy()
        self.dim = int(self.x0.size)
        self.test = None
        self._cpu = None

    def network(self):
        """A fresh torch module of this problem's architecture."""
        if self.arch == "fedau":
            return make_fedau_cnn(self.side, self.classes, self.hidden, self.channels)
        return make_cnn(self.side, self.classes, self.hidden, self.channels)

    @property
    def Gamma(self) -> float:
        """Unknown for the non-convex CNN (NaN)."""
        return math.nan

    def torch_oracle(self, ops):
        """The batched oracle on ``ops``' device and dtype (used by backend='torch').

        >>> import numpy as np
        >>> from toys.engine.backends.torch import TorchOps
        >>> p = CNNProblem(np.zeros((2, 1, 4, 4)), np.zeros((2, 1), int), np.ones((2, 1), bool))
        >>> p.torch_oracle(TorchOps("cpu")).n_clients
        2
        """
        return _Core(self, ops)

    def _core(self):
        if self._cpu is None:
            from ..engine.backends.torch import TorchOps

            self._cpu = _Core(self, TorchOps("cpu", "float64"))
        return self._cpu

    def _np(self, t):
        return t.detach().cpu().numpy()

    def losses(self, W):
        c = self._core()
        return self._np(c.losses(c.ops.asarray(W)))

    def grads(self, W):
        c = self._core()
        return self._np(c.grads(c.ops.asarray(W)))

    def hvps(self, W, V):
        raise DomainError("method", "hvps", "not provided by the CNN problem")

    def minibatch_grads(self, W, rng, batch_size):
        c = self._core()
        if batch_size is None or batch_size >= c.counts_max:
            return self.grads(W)
        keys = c.ops.asarray(rng.random(self.mask.shape), dtype=c.torch.float64)
        return self._np(c.grads_rows(c.ops.asarray(W), keys, int(batch_size)))

    def arrays(self):
        return {"X": self.images.reshape(self.n_clients, self.images.shape[1], -1),
                "y": self.labels, "mask": self.mask, "kind": "cnn", "classes": self.classes,
                "p": self.p}

    def accuracy(self, w, X, y, offset=None) -> float:
        """Accuracy of parameters ``w`` on images ``X`` (n, [channels,] side, side) with labels
        ``y`` (``offset`` is ignored: the signature of :class:`toys.engine.TestMetrics`).

        >>> import numpy as np
        >>> p = CNNProblem(np.zeros((1, 2, 8, 8)), np.zeros((1, 2), int), np.ones((1, 2), bool))
        >>> 0.0 <= p.accuracy(p.x0, np.zeros((4, 8, 8)), np.zeros(4, int)) <= 1.0
        True
        """
        logits = self._logits(w, X)
        return float((logits.argmax(1) == np.asarray(y)).mean())

    def pooled_loss(self, w, X, y, offset=None) -> float:
        """Mean cross-entropy of ``w`` on images ``X`` with labels ``y`` (no l2 term)."""
        z = self._logits(w, X)
        z = z - z.max(axis=1, keepdims=True)
        lsm = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return float(-lsm[np.arange(len(z)), np.asarray(y, dtype=int)].mean())

    def _logits(self, w, X) -> np.ndarray:
        import torch
        from torch.func import functional_call

        c = self._core()
        theta = c.ops.asarray(w)
        params = {n: t.reshape(s) for n, t, s in
                  zip(c.names, torch.split(theta, c.sizes), c.shapes)}
        X = np.asarray(X, dtype=float)
        with torch.no_grad():
            logits = functional_call(c.module, params,
                                     (c.ops.asarray(X[:, None] if X.ndim == 3 else X),))
        return logits.cpu().numpy()


def cnn_problem(source, seed: int = 0, hidden: int | None = None, l2: float = 0.0,
                name: str | None = None) -> CNNProblem:
    """The CNN problem on the data of a logistic problem whose features are square images
    (e.g. ``toys.from_dataset("digits", ...)``: 64 features = 8x8; a trailing intercept
    column is dropped). Same clients, weights and test set.

    >>> import numpy as np, toys
    >>> rng = np.random.default_rng(0)
    >>> src = toys.logistic([rng.normal(size=(6, 16)) for _ in range(2)],
    ...                     [np.arange(6) % 3 for _ in range(2)], l2=0.1)   # 4x4 "images"
    >>> prob = cnn_problem(src)
    >>> prob.n_clients, prob.side, prob.classes
    (2, 4, 3)
    """
    arr = source.arrays()
    X = np.asarray(arr["X"], dtype=float)
    N, n_max, f = X.shape
    side = round(math.sqrt(f))
    if side * side != f:
        side = round(math.sqrt(f - 1))
        if side * side != f - 1:
            raise DomainError("source", getattr(source, "name", source),
                              "a problem whose features are square images (side^2 columns, "
                              "optionally plus an intercept)")
        X = X[..., :-1]
    classes = int(arr.get("classes", 2))
    prob = CNNProblem(X.reshape(N, n_max, side, side), arr["y"], arr["mask"], classes=classes,
                      weights=source.p, seed=seed, hidden=hidden, l2=l2,
                      name=name or f"cnn-{getattr(source, 'name', 'data')}")
    test = getattr(source, "test", None)
    if test is not None:
        Xt = np.asarray(test["X"], dtype=float)[:, :side * side]
        prob.test = {"X": Xt.reshape(-1, side, side), "y": np.asarray(test["y"])}
    return prob
