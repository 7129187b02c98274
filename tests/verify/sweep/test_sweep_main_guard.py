"""A Dask sweep started from the top level of a script without an ``if __name__ ==
"__main__":`` block is refused before any worker starts, with one message saying what to add
(instead of Dask's "Nanny failed to start" wall of tracebacks)."""

import subprocess
import sys
import textwrap

import pytest

from verify.sweep.executor import UnguardedScriptError, _guarded_lines, check_main_guard

SWEEP = ('verify.sweep("quadratic", "fedavg", grid={"lr": [0.05]}, seeds=1, rounds=2, '
         'n_clients=3, dim=2, executor="dask", n_workers=1)')


def _script(tmp_path, body):
    path = tmp_path / "experiment.py"
    path.write_text(textwrap.dedent(body))
    return path


def _run(path):
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=120, cwd=path.parent)


def test_unguarded_script_is_refused_with_what_to_add(tmp_path):
    pytest.importorskip("distributed")
    path = _script(tmp_path, f"""\
        import verify

        df = {SWEEP}
        print("ROWS", len(df))
        """)
    out = _run(path)
    assert out.returncode == 1 and "ROWS" not in out.stdout
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("verify.sweep.executor.UnguardedScriptError: ")
    assert f"{path}, line 3" in last and "if __name__ == \"__main__\":" in last
    assert "Nanny" not in out.stderr and "bootstrapping" not in out.stderr


def test_guarded_script_runs(tmp_path):
    pytest.importorskip("distributed")
    path = _script(tmp_path, f"""\
        import verify


        def main():
            df = {SWEEP}
            print("ROWS", len(df))


        if __name__ == "__main__":
            main()
        """)
    out = _run(path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ROWS 3" in out.stdout  # 1 point x 1 seed x rounds 0..2


def test_guard_blocks_are_found_by_reading_the_source(tmp_path):
    path = _script(tmp_path, """\
        import os
        x = 1
        if __name__ == "__main__":
            y = 2
            z = 3
        if "__main__" == __name__ and x:
            pass
        if __name__ != "__main__":
            pass
        def f():
            if __name__ == "__main__":
                pass
        """)
    assert _guarded_lines(path) == [(3, 5), (6, 7)]
    assert _guarded_lines(tmp_path / "missing.py") is None
    (tmp_path / "bad.py").write_text("def (:\n")
    assert _guarded_lines(tmp_path / "bad.py") is None


def test_guard_check_only_for_a_script_called_from_its_top_level(tmp_path, monkeypatch):
    """The line checked is the script's top-level line that led to the check: outside a guard
    it is refused; called from elsewhere, with fork, or without a script file it is not."""
    import types

    path = _script(tmp_path, "check_main_guard()\nif __name__ == '__main__':\n"
                             "    check_main_guard()\n")
    fake = types.ModuleType("__main__")
    fake.__file__ = str(path)
    fake.check_main_guard = check_main_guard
    monkeypatch.setitem(sys.modules, "__main__", fake)
    check_main_guard()  # this test is not the fake script's top level: nothing to say
    first, guarded = compile("check_main_guard()\n", str(path), "exec"), \
        compile("\n\ncheck_main_guard()\n", str(path), "exec")  # line 3: in the guard
    with pytest.raises(UnguardedScriptError, match=r"line 1: a local Dask cluster"):
        exec(first, fake.__dict__)
    exec(guarded, fake.__dict__)
    monkeypatch.setattr(sys.modules["__main__"], "__file__", None)
    exec(first, fake.__dict__)  # no file (a notebook, -c): nothing to check


def test_a_package_main_module_needs_no_guard(tmp_path, monkeypatch):
    """``python -m pkg`` runs ``pkg/__main__.py``, which multiprocessing never re-runs."""
    import importlib.machinery
    import types

    path = _script(tmp_path, "check_main_guard()\n")
    fake = types.ModuleType("__main__")
    fake.__file__ = str(path)
    fake.__spec__ = importlib.machinery.ModuleSpec("pkg.__main__", None)
    fake.check_main_guard = check_main_guard
    monkeypatch.setitem(sys.modules, "__main__", fake)
    exec(compile(path.read_text(), str(path), "exec"), fake.__dict__)
    fake.__spec__ = importlib.machinery.ModuleSpec("mymodule", None)  # python -m mymodule
    with pytest.raises(UnguardedScriptError):
        exec(compile(path.read_text(), str(path), "exec"), fake.__dict__)


def test_fork_needs_no_guard(tmp_path, monkeypatch):
    import types

    path = _script(tmp_path, "check_main_guard('fork')\n")
    fake = types.ModuleType("__main__")
    fake.__file__ = str(path)
    fake.check_main_guard = check_main_guard
    monkeypatch.setitem(sys.modules, "__main__", fake)
    exec(compile(path.read_text(), str(path), "exec"), fake.__dict__)
