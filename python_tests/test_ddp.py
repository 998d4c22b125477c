"""A two-process DistributedDataParallel step (one GPU each, NCCL) of the small
decoder: built from ct3d.Model it gives the same gradients as built from
nn.ConvTranspose3d (strict float32 cuDNN as the reference)."""

import json
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import ct3d  # noqa: F401
from decoder_net import copy_parameters, decoder

WORLD = 2


def ddp_worker(rank, init_file, result_file):
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # the device machines' rule: no NVLink multicast
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank,
                            world_size=WORLD)
    torch.backends.cudnn.allow_tf32 = False  # the reference in strict float32
    torch.manual_seed(0)
    reference = decoder(nn.ConvTranspose3d).cuda()
    ours = decoder("ct3d").cuda()
    copy_parameters(ours, reference)
    generator = torch.Generator().manual_seed(100 + rank)  # each rank its own batch
    x = torch.randn(2, 8, 3, 4, 3, generator=generator).cuda()
    with torch.no_grad():
        target = torch.randn(reference(x).shape, generator=generator).cuda()
    grads = []
    for model in (reference, ours):
        ddp = DistributedDataParallel(model, device_ids=[rank])
        nn.functional.mse_loss(ddp(x), target).backward()
        grads.append([p.grad for p in model.parameters()])
    errors = [((a - b).norm() / b.norm()).item() for a, b in zip(grads[1], grads[0])]
    if rank == 0:
        with open(result_file, "w") as f:
            json.dump({"errors": errors, "device": str(x.device)}, f)
    dist.destroy_process_group()


@pytest.mark.skipif(torch.cuda.device_count() < WORLD, reason="needs two GPUs")
def test_ddp_step_matches_nn(tmp_path):
    result_file = tmp_path / "result.json"
    mp.spawn(ddp_worker, args=(str(tmp_path / "init"), str(result_file)), nprocs=WORLD)
    result = json.loads(result_file.read_text())
    assert max(result["errors"]) <= 1e-5, result
