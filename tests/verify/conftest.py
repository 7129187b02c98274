"""Fixtures shared by the verify tests.

``quick_main_job``: one ``boundlab verify --quick --no-tightness --budget 0`` run for the whole
session (about 1 min on 2 cores; every family's checks and figures, no PEP brackets, no generated
falsify searches: those draw no figure; tests/verify/test_generic_checks.py runs one through
the CLI). Tests that need what the main job computes share it instead of running the job, or one
of its checks, again.
"""

from types import SimpleNamespace

import pytest


@pytest.fixture(scope="session")
def quick_main_job(tmp_path_factory):
    """The session's quick main job through the CLI: ``status`` (its exit status), ``out`` (its
    output folder), ``results`` (the check results the report was written from, as
    ``verify.report.write_report`` received them) and ``figures`` (``(name, problems)`` of each
    figure, linted as it was saved)."""
    import verify.report
    from verify.cli import main
    from verify.figures.lint import collecting

    out = tmp_path_factory.mktemp("verify-quick") / "run"
    written = []
    real = verify.report.write_report

    def spy(results, *args, **kwargs):
        written.append(list(results))
        return real(results, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp, collecting() as found:
        mp.setattr(verify.report, "write_report", spy)
        status = main(["verify", "--quick", "--no-tightness", "--budget", "0", "--out",
                       str(out)])
    assert len(written) == 1, "the main job writes its report once"
    return SimpleNamespace(status=status, out=out, results=written[0], figures=list(found))
