"""toys._array.one_cpu_thread: one BLAS thread and one torch intra-op thread inside, the
caller's torch thread count restored after (the papers' runs, verify.reproduce)."""

import pytest

from toys._array import one_cpu_thread


def test_one_torch_thread_inside_and_the_count_restored():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with one_cpu_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pytest.raises(RuntimeError), one_cpu_thread():
            raise RuntimeError("a failing run")
        assert torch.get_num_threads() == 2  # restored on an exception too
    finally:
        torch.set_num_threads(before)
