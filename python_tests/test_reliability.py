"""Thread safety and out-of-memory behaviour of ct3d.conv_transpose3d."""

import threading

import pytest
import torch
import torch.nn.functional as F

from conftest import requires_cuda

DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]
ARGS = ([2, 1, 2], [1, 0, 1], [1, 0, 0], 2, [1, 2, 1])


@pytest.mark.parametrize("device", DEVICES)
def test_concurrent_calls_from_threads_are_correct(device):
    threads, calls_per_thread = 8, 6
    torch.manual_seed(0)
    inputs = [(torch.randn(2, 8, 5, 6, 7, device=device),
               torch.randn(8, 3, 3, 2, 3, device=device),
               torch.randn(6, device=device)) for _ in range(threads * calls_per_thread)]
    results = [None] * len(inputs)
    errors = []

    def work(first):
        try:
            for i in range(first, len(inputs), threads):
                results[i] = torch.ops.ct3d.conv_transpose3d(*inputs[i], *ARGS)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors
    if device == "cuda":
        torch.cuda.synchronize()
    for (x, w, b), out in zip(inputs, results):
        ref = F.conv_transpose3d(x.double(), w.double(), b.double(), *ARGS)
        assert ((out.double() - ref).norm() / ref.norm()).item() <= 1e-5


@requires_cuda
def test_output_too_large_for_the_gpu_raises_out_of_memory_and_process_survives():
    x = torch.randn(1, 1, 8, 8, 8, device="cuda")
    w = torch.randn(1, 1, 1, 1, 1, device="cuda")
    # Output extent (8 - 1) * 1024 + 1 = 7169 per dimension: about 1.5 TB of float32.
    with pytest.raises(torch.OutOfMemoryError):
        torch.ops.ct3d.conv_transpose3d(x, w, None, [1024], [0], [0], 1, [1])
    out = torch.ops.ct3d.conv_transpose3d(x, w, None, [2], [0], [0], 1, [1])
    ref = F.conv_transpose3d(x.double(), w.double(), stride=2)
    assert ((out.double() - ref).norm() / ref.norm()).item() <= 1e-5
