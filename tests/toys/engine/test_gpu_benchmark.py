"""``benchmarks/_engine_device.py`` (``python -m benchmarks engine --device cuda``): the CPU smoke
run exercises every part's code path; without CUDA ``--device cuda`` exits 2 with one line;
on a GPU (marked ``gpu``) the quick run completes."""

import pytest

torch = pytest.importorskip("torch")

from benchmarks._engine_device import main  # noqa: E402

NO_CUDA = "error: --device cuda: CUDA is not available on this machine\n"


def test_cpu_quick_run_exercises_every_part(capsys):
    assert main(["--device", "cpu", "--quick", "--torch-threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "== 1. logistic FedAvg" in out and "N = 300:" in out and "ms/client-update" in out
    assert "max |x_torch - x_numpy|" in out
    assert "N_max ~" in out and "verify at 0.8 N_max" in out and "one round OK" in out
    assert "MLP N = 8" in out and "CNN N = 3" in out
    assert "load average" in out and "overall: no target on cpu" in out


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal without CUDA")
def test_cuda_without_cuda_exits_2_with_one_line(capsys):
    assert main(["--device", "cuda"]) == 2
    assert main(["--device", "cuda:1", "--dtype", "float64"]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    assert cap.err == NO_CUDA + "error: --device cuda:1: CUDA is not available on this machine\n"


@pytest.mark.parametrize("argv,msg", [
    (["--device", "tpu"], "--device tpu: expected cpu, cuda or cuda:N"),
    (["--device", "cpu", "--dtype", "float16"], "--dtype: invalid choice"),
    (["--device", "cpu", "--repeat", "0"], "must be >= 1"),
    (["--device", "cpu", "--clients", "10,x"], "--clients 10,x: expected a comma list"),
])
def test_bad_input_exits_2_with_one_line(argv, msg, capsys):
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and msg in cap.err


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available on this machine")
def test_cuda_quick_run(capsys):
    assert main(["--device", "cuda", "--quick"]) == 0
    out = capsys.readouterr().out
    # the smoke sizes (N = 300) print no speed target (it is stated for N >= 10^4): the memory
    # procedure ran, a round at 0.8 N_max ran, and the device targets were judged
    assert "peak" in out and "one round OK" in out and "overall: device targets met" in out
