"""verify.sweep.forked: the forked pool of the main job and the report's figures. Its workers never
inherit an output set's SIGTERM handler, and it leaves no worker behind, read to the end or
stopped early."""

import multiprocessing
import os
import signal

import pytest

from verify.sweep.forked import imap_forked

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="no fork on this platform")


def _term_handler_and_pid(_):
    return signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, os.getpid()


def test_workers_get_the_default_sigterm_even_inside_a_trapping_handler():
    def trap(signum, frame):
        raise RuntimeError("an output set's clean-up")

    old = signal.signal(signal.SIGTERM, trap)
    try:
        got = list(imap_forked(_term_handler_and_pid, range(4), jobs=2))
    finally:
        signal.signal(signal.SIGTERM, old)
    assert [dfl for dfl, _ in got] == [True] * 4
    for pid in {p for _, p in got}:  # joined: every worker has exited and was reaped
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_stopping_early_terminates_the_workers():
    gen = imap_forked(_term_handler_and_pid, range(50), jobs=2)
    _, pid = next(gen)
    gen.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
