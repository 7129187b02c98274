"""Benchmark: ``Bound.evaluate`` throughput and ``import boundlab`` time; the CLI's latency.

Targets (issue 2): >= 1e6 parameter points per second for drift.fedavg_convex and
contraction.beta_sc on numpy arrays; ``import boundlab`` < 1 s.

Target (issue 12, item 5), ``--cli``: ``boundlab bounds eval`` and ``boundlab bounds list`` in
< 0.3 s per call with a warm compiled-evaluator cache (:mod:`boundlab._cache`). Each command
runs as a subprocess of the installed console script, "before" (``BOUNDLAB_NO_CACHE=1``: the
sympy path) and "after" (warm cache, in a temporary ``BOUNDLAB_CACHE_DIR``), interleaved
over ``--repeat`` rounds; the medians are printed with the load average beside them, and the
outputs of both paths are compared byte for byte. Like an installed package, the runs use
compiled bytecode: the subprocesses keep it in a temporary ``PYTHONPYCACHEPREFIX`` (nothing is
written into the source tree; ``--no-bytecode`` honours ``PYTHONDONTWRITEBYTECODE`` instead, so
every run recompiles the project's modules, as in a sandbox that forbids bytecode files).

Run: ``python -m benchmarks bounds [--points N] [--repeat R]``;
``python -m benchmarks bounds --cli [--repeat 15] [--no-bytecode]``
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time

import numpy as np

IDS = ("drift.fedavg_convex", "contraction.beta_sc", "skew.corollary", "weight_error.average")


def _points(bound, n, rng):
    out = {}
    for name, p in bound.params.items():
        d = p.domain
        lo = d.lo if math.isfinite(d.lo) else 0.0
        hi = d.hi if math.isfinite(d.hi) else lo + 10.0
        if d.integer:
            out[name] = rng.integers(int(lo), int(lo) + 100, size=n).astype(float)
        else:
            out[name] = rng.uniform(lo + 1e-3 * (hi - lo), hi - 1e-3 * (hi - lo), size=n)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks bounds")
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=None,
                    help="repeats (default 5; 15 with --cli)")
    ap.add_argument("--cli", action="store_true",
                    help="time `boundlab bounds eval|list` subprocesses, before / after the cache")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="with --cli: keep PYTHONDONTWRITEBYTECODE (recompile on every run)")
    args = ap.parse_args(argv)
    if args.cli:
        return cli_main(args.repeat or 15, bytecode=not args.no_bytecode)
    args.repeat = args.repeat or 5

    code = ("import time; t = time.perf_counter(); import boundlab; "
            "print(time.perf_counter() - t)")
    imp = min(float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                   text=True, check=True).stdout) for _ in range(3))
    code_all = ("import time; t = time.perf_counter(); import boundlab; boundlab.catalogue(); "
                "print(time.perf_counter() - t)")
    cat = float(subprocess.run([sys.executable, "-c", code_all], capture_output=True,
                               text=True, check=True).stdout)
    code_one = ("import time; t = time.perf_counter(); import boundlab; "
                "boundlab.get('drift.fedavg_convex'); print(time.perf_counter() - t)")
    one = min(float(subprocess.run([sys.executable, "-c", code_one], capture_output=True,
                                   text=True, check=True).stdout) for _ in range(3))
    print(f"import boundlab: {imp * 1e3:.1f} ms (target < 1000 ms; sympy loads on first use); "
          f"import + first get (sympy + one family): {one * 1e3:.0f} ms; "
          f"import + the whole catalogue: {cat * 1e3:.0f} ms")

    import boundlab

    rng = np.random.default_rng(0)
    print(f"Bound.evaluate on {args.points:,} points (best of {args.repeat}, validation included)")
    for bid in IDS:
        try:
            b = boundlab.get(bid)
        except Exception as exc:  # noqa: BLE001 - report and go on
            print(f"  {bid:28s} unavailable: {exc}")
            continue
        pts = _points(b, args.points, rng)
        b.evaluate(**pts)  # build the lambdified function once
        best = math.inf
        for _ in range(args.repeat):
            t = time.perf_counter()
            b.evaluate(**pts)
            best = min(best, time.perf_counter() - t)
        rate = args.points / best
        flag = "ok" if rate >= 1e6 else "BELOW TARGET"
        print(f"  {bid:28s} {rate / 1e6:7.1f} M points/s  ({best * 1e3:.1f} ms)  {flag}")
    return 0



# ------------------------------------------------------------------------------ --cli
CLI_COMMANDS = (
    ("eval drift.plateau", ["bounds", "eval", "drift.plateau", "eta=0.2", "tau=10", "L=0.19",
                            "zeta=0.407"]),
    ("eval drift.fedavg_convex --json", ["bounds", "eval", "drift.fedavg_convex", "D=2",
                                         "eta=0.01", "tau=10", "T=50", "sigma=0.1", "M=20",
                                         "L=0.19", "zeta=0.407", "--json"]),
    ("list", ["bounds", "list"]),
    ("list --json", ["bounds", "list", "--json"]),
)
CLI_TARGET_S = 0.3


def _console() -> list[str]:
    """The installed ``boundlab`` script (what a user runs), else the same entry point."""
    import pathlib

    script = pathlib.Path(sys.executable).with_name("boundlab")
    if script.is_file():
        return [sys.executable, str(script)]
    return [sys.executable, "-c", "from verify.cli import console; console()"]


def _timed(cmd, env) -> tuple[float, bytes]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, check=False)
    dt = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-400:]}")
    return dt, proc.stdout


def _imports(console, argv, env) -> str:
    code = ("import sys; sys.argv = ['boundlab'] + sys.argv[1:]; import io, contextlib; "
            "from verify.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): main(sys.argv[1:])\n"
            "print(' '.join(m for m in ('sympy', 'toys', 'pandas', 'numpy') if m in sys.modules)"
            " or 'none')")
    out = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    return out


# the CLI as it was before issue 12: the full parser (every command group imported)
_FULL_PARSER = ("import sys; from verify.cli import build_parser; "
                "a = build_parser().parse_args(sys.argv[1:]); sys.exit(a.func(a) or 0)")


def _modes(console, base, cache) -> dict:
    """label -> (command prefix, environment) of the three ways timed."""
    sympy = {**base, "BOUNDLAB_NO_CACHE": "1"}
    return {"original": ([sys.executable, "-c", _FULL_PARSER], sympy),
            "sympy-path": (console, sympy),
            "warm-cache": (console, {**base, "BOUNDLAB_CACHE_DIR": cache})}


def cli_main(repeat: int, bytecode: bool = True) -> int:
    import os
    import tempfile

    console = _console()
    base = {k: v for k, v in os.environ.items() if k != "BOUNDLAB_NO_CACHE"}
    with tempfile.TemporaryDirectory(prefix="boundlab-bench-cache-") as cache:
        if bytecode:
            base.pop("PYTHONDONTWRITEBYTECODE", None)
            base["PYTHONPYCACHEPREFIX"] = os.path.join(cache, "pycache")
        modes = _modes(console, base, cache)
        outputs: dict = {}
        for label, argv in CLI_COMMANDS:  # warm the cache (and the OS file cache)
            for mode, (cmd, env) in modes.items():
                outputs[(label, mode)] = _timed(cmd + argv, env)[1]
                if bytecode:
                    _timed(cmd + argv, env)  # the second run reads the bytecode
        times: dict = {(label, mode): [] for label, _ in CLI_COMMANDS for mode in modes}
        loads = []
        for _ in range(repeat):  # interleaved: every command and mode once per round
            loads.append(os.getloadavg()[0])
            for label, argv in CLI_COMMANDS:
                for mode, (cmd, env) in modes.items():
                    times[(label, mode)].append(_timed(cmd + argv, env)[0])
        loads.append(os.getloadavg()[0])
        _report(repeat, bytecode, console, loads, outputs, times, modes)
        for label, argv in CLI_COMMANDS[::2]:
            print(f"  imported by `{label}` with a warm cache: "
                  f"{_imports(console, argv, modes['warm-cache'][1])}")
    return 0


def _report(repeat, bytecode, console, loads, outputs, times, modes) -> None:
    import os
    import statistics

    print(f"boundlab bounds CLI latency: median [min-max] of {repeat} interleaved runs "
          f"({' '.join(console[1:2]) or console[0]}); target < {CLI_TARGET_S} s warm; "
          f"bytecode: {'cached' if bytecode else 'recompiled on every run'}")
    print("  original = the full parser (every command group) + the sympy path, as before "
          "issue 12; sympy-path = BOUNDLAB_NO_CACHE=1; warm-cache = the compiled-evaluator "
          "cache")
    print(f"load average (1 min) during the runs: median {statistics.median(loads):.2f}, "
          f"min {min(loads):.2f}, max {max(loads):.2f}; {os.cpu_count()} cores")
    for label, _ in CLI_COMMANDS:
        same = len({outputs[(label, mode)] for mode in modes}) == 1
        row = []
        for mode in modes:
            t = times[(label, mode)]
            row.append(f"{mode} {statistics.median(t):.3f} s [{min(t):.2f}-{max(t):.2f}]")
        after = statistics.median(times[(label, "warm-cache")])
        flag = "ok" if after < CLI_TARGET_S else "ABOVE TARGET"
        print(f"  {label:32s} " + "  ".join(row) + f"  {flag}; same output: "
              f"{'yes' if same else 'NO'}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
