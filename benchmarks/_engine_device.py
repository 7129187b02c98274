"""Benchmark of the torch path on a device (issue 12, item 6: GPU readiness).

``python -m benchmarks engine --device cuda [--dtype float32]`` (dispatched here from
:mod:`benchmarks.engine`) or ``python -m benchmarks._engine_device --device cuda``:

1. Time per client update (tau local full-batch steps of one client) of logistic FedAvg,
   N = 10^4, n = 100, d = 20, tau = 5, ``record="none"``: torch on ``--device`` vs the CPU
   numpy path on the same problem. Each figure is the marginal round time (t(1 + rounds) -
   t(1)) / rounds (setup and the host -> device copy cancel), the median of ``--repeat``
   interleaved repeats (numpy, torch, numpy, ...), with ``torch.cuda.synchronize()`` around
   every timing and the load average beside it. Target (cuda, float32): >= 10x.
2. Largest N that fits in device memory: the peak memory (``torch.cuda.max_memory_allocated``)
   of one-round runs at two small N gives the bytes per client and the fixed part; extrapolated
   to the free memory (``torch.cuda.mem_get_info``) and to 80 GB, then verified by running at
   0.8 x the extrapolated N. The data are drawn on the device (``_DeviceLogistic``) so the host
   never holds them.
3. MLP (seed 003) and CNN (BM, 8x8 images) rows: per client update on the device vs the numpy
   path (the CNN's numpy interface is torch CPU float64).

``--device cpu`` runs the same code on torch CPU (``--quick``: tiny sizes, a smoke test); part 2
then budgets a nominal 16 MiB and counts the oracle's resident tensors, as the CPU has no
allocator statistics. Without CUDA, ``--device cuda`` exits with status 2 and one line.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import time

import numpy as np

from benchmarks._engine_common import L2, LR, TAU, _problem

GB80 = 80e9


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage block
        raise _BadInput(message)


class _BadInput(Exception):
    pass


def _args(argv):
    ap = _Parser(prog="python -m benchmarks engine --device DEVICE")
    ap.add_argument("--device", default="cuda", help="cuda (default), cuda:N or cpu")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    ap.add_argument("--clients", default="10000", help="N values of part 1 (comma list)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--torch-threads", type=int, default=None)
    ap.add_argument("--no-max-n", action="store_true", help="skip part 2")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    args = ap.parse_args(argv)
    if args.device != "cpu" and not (args.device == "cuda" or args.device.startswith("cuda:")):
        raise _BadInput(f"--device {args.device}: expected cpu, cuda or cuda:N")
    try:
        args.clients = [int(c) for c in args.clients.split(",") if c.strip()]
    except ValueError:
        raise _BadInput(f"--clients {args.clients}: expected a comma list of integers") from None
    if not args.clients or min(*args.clients, args.rounds, args.repeat) < 1:
        raise _BadInput("--clients, --rounds and --repeat must be >= 1")
    return args


class _DeviceLogistic:
    """The problem of :func:`_problem`'s kind with its data drawn on the device by a seeded
    torch generator (the host never holds X): what ``toys.run(..., record="none")`` needs.
    ``resident`` is the bytes of the oracle's tensors of the last run."""

    def __init__(self, N, n, d, seed=0):
        self.n_clients, self.dim, self.n, self.seed = N, d, n, seed
        self.p, self.x0 = np.full(N, 1.0 / N), np.zeros(d)
        self.name, self.resident = f"device-logistic-{N}x{n}x{d}", 0

    def torch_oracle(self, ops):
        from toys.engine.backends.torch import LogisticOracle

        torch, N, n, d = ops.torch, self.n_clients, self.n, self.dim
        g = torch.Generator(device=ops.device).manual_seed(self.seed)
        X = torch.randn((N, n, d), generator=g, device=ops.device, dtype=ops.dtype)
        X /= math.sqrt(d)
        theta = torch.randn((d,), generator=g, device=ops.device, dtype=ops.dtype)
        u = torch.rand((N, n), generator=g, device=ops.device, dtype=ops.dtype)
        y = (u < torch.sigmoid(X @ theta)).to(ops.dtype)
        del u
        orc = LogisticOracle(ops, {"kind": "logistic", "X": X, "y": y, "l2": L2,
                                   "mask": torch.ones((N, n), dtype=torch.bool,
                                                      device=ops.device)})
        self.resident = sum(t.nbytes for t in vars(orc).values()
                            if isinstance(t, torch.Tensor))
        return orc


def _sync(device):
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize(device)


def _timed(fn, device):
    _sync(device)
    t = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - t


def _round_time(prob, rounds, backend, device, dtype, algo="fedavg", batch_size=None):
    """Marginal time of one round: (t(1 + rounds) - t(1)) / rounds."""
    import toys

    kw = {"seed": 0, "lr": LR, "local_steps": TAU, "record": "none", "backend": backend,
          "batch_size": batch_size}
    if backend == "torch":
        kw.update(device=device, dtype=dtype)
    dev = device if backend == "torch" else "cpu"
    t1 = _timed(lambda: toys.run(prob, algo, rounds=1, **kw), dev)
    tR = _timed(lambda: toys.run(prob, algo, rounds=1 + rounds, **kw), dev)
    return (tR - t1) / rounds


def _compare(prob, args, rounds, repeat):
    """Median marginal round times (numpy, torch), interleaved repeats after a warm-up."""
    _round_time(prob, 1, "numpy", None, None)
    _round_time(prob, 1, "torch", args.device, args.dtype)
    ts = {"numpy": [], "torch": []}
    for _ in range(repeat):
        ts["numpy"].append(_round_time(prob, rounds, "numpy", None, None))
        ts["torch"].append(_round_time(prob, rounds, "torch", args.device, args.dtype))
    return {k: float(np.median(v)) for k, v in ts.items()}


def _load():
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def _row(label, N, t_np, t_dev, target=None, ref="numpy"):
    """Print one comparison; returns the speed-up (NaN when a marginal time is not positive:
    the timing noise exceeded the rounds' cost)."""
    speed = t_np / t_dev if t_dev > 0 and t_np > 0 else float("nan")
    tag = "" if target is None else (
        f" (target >= {target:g}: {'OK' if speed >= target else 'MISSED'})")
    if not math.isfinite(speed):
        tag += " UNRELIABLE (timing noise: raise --rounds)"
    print(f"  {label}: {ref} {t_np / N * 1e3:9.5f} ms/client-update (round "
          f"{t_np * 1e3:8.2f} ms); torch {t_dev / N * 1e3:9.5f} ms/client-update (round "
          f"{t_dev * 1e3:8.2f} ms): x{speed:.1f}{tag}")
    return speed


def _part1(args):
    rounds, repeat = (1, 1) if args.quick else (args.rounds, args.repeat)
    print(f"== 1. logistic FedAvg, n = 100, d = 20, tau = {TAU}, full batch, record='none': "
          f"median of {repeat} interleaved repeats [{_load()}]")
    ok = True
    for N in [300] if args.quick else args.clients:
        ok &= _part1_at(args, N, rounds, repeat)
    return ok


def _part1_at(args, N, rounds, repeat):
    import toys

    prob = _problem(N, 100, 20)
    kw = {"rounds": 1, "seed": 0, "lr": LR, "local_steps": TAU, "record": "none"}
    x_np = toys.run(prob, "fedavg", **kw).final_model
    x_t = toys.run(prob, "fedavg", backend="torch", device=args.device, dtype=args.dtype,
                   **kw).final_model
    t = _compare(prob, args, rounds, repeat)
    target = 10 if args.device.startswith("cuda") and args.dtype == "float32" and \
        N >= 10_000 else None
    speed = _row(f"N = {N}", N, t["numpy"], t["torch"], target)
    print(f"  after 1 round max |x_torch - x_numpy| = {np.max(np.abs(x_t - x_np)):.1e} "
          f"[{_load()}]")
    return target is None or speed >= target


def _peak(prob, args):
    """(peak bytes of a one-round run above the baseline (None on cpu), resident bytes of
    the oracle's tensors, seconds)."""
    import torch

    import toys

    cuda = args.device.startswith("cuda")
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(args.device)
        base = torch.cuda.memory_allocated(args.device)
    t = _timed(lambda: toys.run(prob, "fedavg", rounds=1, seed=0, lr=LR, local_steps=TAU,
                                record="none", backend="torch", device=args.device,
                                dtype=args.dtype), args.device)
    peak = torch.cuda.max_memory_allocated(args.device) - base if cuda else None
    return peak, prob.resident, t


def _part2(args):
    import torch

    cuda = args.device.startswith("cuda")
    n, d = 100, 20
    sizes = (20_000, 100_000) if cuda and not args.quick else (200, 1000)
    print(f"== 2. largest N in device memory (logistic, n = {n}, d = {d}, {args.dtype}, one "
          f"round of tau = {TAU} steps, record='none')")
    runs = [(N, *_peak(_DeviceLogistic(N, n, d), args)) for N in sizes]
    (N1, p1, r1, _), (N2, p2, r2, _) = runs
    res = (r2 - r1) / (N2 - N1)
    slope, fixed = res, 0.0
    if cuda:
        if p2 > p1:
            slope, fixed = (p2 - p1) / (N2 - N1), p1 - (p2 - p1) / (N2 - N1) * N1
        print(f"  peak {p1 / 2**20:.1f} MiB at N = {N1}, {p2 / 2**20:.1f} MiB at N = {N2}: "
              f"{slope:.0f} B/client (resident data {res:.0f} B/client) + {fixed / 2**20:.1f} "
              f"MiB fixed")
    else:
        print(f"  cpu: no allocator statistics; resident data {res:.0f} B/client")
    if cuda and not args.quick:
        gc.collect()
        torch.cuda.empty_cache()
        free, total = torch.cuda.mem_get_info(args.device)
        print(f"  free {free / 2**30:.2f} GiB of {total / 2**30:.2f} GiB")
    else:
        free = 16 * 2**20
        print(f"  nominal budget {free / 2**20:.0f} MiB (smoke test of the procedure)")
    n_fit = int((free - fixed) / slope)
    print(f"  -> N_max ~ {n_fit:,}; in 80 GB: N ~ {int((GB80 - fixed) / slope):,} [{_load()}]")
    return _verify(args, int(0.8 * n_fit), n, d, n_fit)


def _verify(args, N, n, d, n_fit):
    """Run one round at N = 0.8 x N_max (and a second run for the marginal round time)."""
    import toys

    prob = _DeviceLogistic(N, n, d)
    try:
        peak, _, t1 = _peak(prob, args)
        t2 = _timed(lambda: toys.run(prob, "fedavg", rounds=2, seed=0, lr=LR, local_steps=TAU,
                                     record="none", backend="torch", device=args.device,
                                     dtype=args.dtype), args.device)
    except RuntimeError as e:  # torch.cuda.OutOfMemoryError is one
        print(f"  verify at 0.8 N_max = {N:,}: FAILED ({type(e).__name__}: "
              f"{str(e).splitlines()[0]})")
        return False
    pk = "" if peak is None else f", peak {peak / 2**30:.2f} GiB"
    print(f"  verify at 0.8 N_max = {N:,} (N_max {n_fit:,}): one round OK{pk}; round "
          f"{(t2 - t1) * 1e3:.1f} ms = {(t2 - t1) / N * 1e3:.6f} ms/client-update "
          f"[{_load()}]")
    return True


def _mlp_cnn(args):
    from toys.problems.cnn import CNNProblem
    from toys.problems.mlp import MLPProblem

    rng = np.random.default_rng(0)
    rounds, repeat = (1, 1) if args.quick else (2, 3)
    Nm, nm, f, h = (8, 10, 16, 8) if args.quick else (1000, 50, 64, 64)
    Nc, nc = (3, 4) if args.quick else (100, 10)
    mlp = MLPProblem(rng.normal(size=(Nm, nm, f)), rng.integers(0, 10, (Nm, nm)),
                     np.ones((Nm, nm), bool), classes=10, hidden=h)
    cnn = CNNProblem(rng.normal(size=(Nc, nc, 8, 8)), rng.integers(0, 10, (Nc, nc)),
                     np.ones((Nc, nc), bool))
    print(f"== 3. MLP (f = {f}, hidden = {h}, 10 classes, n = {nm}) and CNN (BM, 8x8, n = "
          f"{nc}) FedAvg, tau = {TAU}, full batch: median of {repeat} [{_load()}]")
    for label, prob, ref in ((f"MLP N = {Nm}", mlp, "numpy"),
                             (f"CNN N = {Nc}", cnn, "numpy interface (torch CPU float64)")):
        t = _compare(prob, args, rounds, repeat)
        _row(label, prob.n_clients, t["numpy"], t["torch"], ref=ref)


def main(argv=None) -> int:
    """Run the device benchmark; 2 with one line on stderr for bad input or missing CUDA."""
    try:
        args = _args(list(sys.argv[1:] if argv is None else argv))
    except _BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except SystemExit as e:  # --help
        return int(e.code or 0)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"error: --device {args.device}: CUDA is not available on this machine",
              file=sys.stderr)
        return 2
    before = torch.get_num_threads()
    if args.torch_threads is not None:
        torch.set_num_threads(args.torch_threads)
    try:
        name = torch.cuda.get_device_name(args.device) if args.device != "cpu" else "cpu"
        print(f"== torch {torch.__version__} on {args.device} ({name}), {args.dtype}, "
              f"{torch.get_num_threads()} CPU threads; numpy float64 on the CPU [{_load()}]")
        ok = _part1(args)
        if not args.no_max_n:
            try:
                ok &= _part2(args)
            except RuntimeError as e:  # e.g. a kernel limit at large N: reported, not hidden
                print(f"  part 2 FAILED: {type(e).__name__}: {str(e).splitlines()[0]}")
                ok = False
        _mlp_cnn(args)
    finally:
        torch.set_num_threads(before)
    if not args.device.startswith("cuda"):
        print("overall: no target on cpu (the targets are for --device cuda --dtype float32)")
    else:
        print("overall:", "device targets met" if ok else "some device targets MISSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
