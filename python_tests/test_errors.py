"""Bad input gets a clear RuntimeError naming the argument, as PyTorch does."""

import pytest
import torch
import torch.nn.functional as F

op = torch.ops.ct3d.conv_transpose3d


def ok_args():
    return dict(input=torch.randn(1, 4, 3, 3, 3), weight=torch.randn(4, 2, 3, 3, 3), bias=None,
                stride=[1], padding=[0], output_padding=[0], groups=1, dilation=[1])


BAD = [
    ("input rank", dict(input=torch.randn(4, 3, 3)), r"input must be a 4-D .* or 5-D"),
    ("weight rank", dict(weight=torch.randn(4, 2, 3, 3)), r"weight must be a 5-D tensor"),
    ("channels", dict(input=torch.randn(1, 3, 3, 3, 3)),
     r"input channels must equal weight.size\(0\): got 3 .* expected 4"),
    ("groups divide", dict(groups=3), r"weight.size\(0\) \(input channels\) must be divisible by groups: got 4 with groups=3"),
    ("groups positive", dict(groups=0), r"groups must be positive, got 0"),
    ("stride", dict(stride=[1, 0, 1]), r"stride must be positive, got 0 in height"),
    ("dilation", dict(dilation=[0]), r"dilation must be positive, got 0 in depth"),
    ("padding", dict(padding=[0, 0, -1]), r"padding must be non-negative, got -1 in width"),
    ("output_padding", dict(output_padding=[1]), r"output_padding must be smaller than either stride or dilation"),
    ("list length", dict(stride=[1, 2]), r"stride must be a single integer or a list of 3"),
    ("bias size", dict(bias=torch.randn(3)), r"bias must be a 1-D tensor of out_channels elements: got shape \[3\], expected \[2\]"),
    ("dtype mix", dict(weight=torch.randn(4, 2, 3, 3, 3, dtype=torch.float64)), r"weight must have the same dtype as input"),
    ("bias dtype", dict(bias=torch.randn(2, dtype=torch.float64)), r"bias must have the same dtype as input"),
    ("int dtype", dict(input=torch.ones(1, 4, 3, 3, 3, dtype=torch.int32),
                       weight=torch.ones(4, 2, 3, 3, 3, dtype=torch.int32)), r"floating-point dtype"),
    ("output size", dict(input=torch.randn(1, 4, 1, 1, 1), padding=[2]), r"output depth would be -1"),
    ("empty spatial", dict(input=torch.randn(1, 4, 0, 3, 3)), r"input depth must be positive"),
    ("device mix", dict(weight=torch.randn(4, 2, 3, 3, 3, device="meta")), r"weight must be on the same device as input"),
]


@pytest.mark.parametrize("name,change,message", BAD, ids=[b[0] for b in BAD])
def test_bad_argument_raises_clear_error(name, change, message):
    args = ok_args()
    args.update(change)
    with pytest.raises(RuntimeError, match=message):
        op(*args.values())


@pytest.mark.parametrize("name,change,message", BAD, ids=[b[0] for b in BAD])
def test_pytorch_also_rejects_it(name, change, message):
    """Every case we reject, torch.nn.functional rejects too (same kind of error)."""
    args = ok_args()
    args.update(change)
    if name == "list length":
        pytest.skip("F.conv_transpose3d rejects it in its Python argument parser")
    if name == "device mix":
        pytest.skip("meta weights give a different dispatch error in PyTorch")
    with pytest.raises((RuntimeError, NotImplementedError)):
        F.conv_transpose3d(*args.values())


def test_valid_call_passes():
    assert op(*ok_args().values()).shape == (1, 2, 5, 5, 5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_mixed_cpu_and_cuda():
    args = ok_args()
    args["weight"] = args["weight"].cuda()
    with pytest.raises(RuntimeError, match="weight must be on the same device as input"):
        op(*args.values())


# The backward ops reuse the forward's checks: the same mistake, the same message.
input_backward = torch.ops.ct3d.conv_transpose3d_input_backward
weight_backward = torch.ops.ct3d.conv_transpose3d_weight_backward


def ok_backward_args():
    # The gradient of ok_args(): input (1, 4, 3, 3, 3) -> output (1, 2, 5, 5, 5).
    return dict(x=torch.randn(1, 4, 3, 3, 3), w=torch.randn(4, 2, 3, 3, 3),
                g=torch.randn(1, 2, 5, 5, 5), stride=[1], padding=[0], groups=1, dilation=[1])


def call_input_backward(a):
    return input_backward(a["g"], a["w"], list(a["x"].shape[2:]), a["stride"], a["padding"],
                          a["groups"], a["dilation"])


def call_weight_backward(a):
    return weight_backward(a["x"], a["g"], list(a["w"].shape[2:]), a["stride"], a["padding"],
                           a["groups"], a["dilation"])


BACKWARD_BAD = [
    ("stride", dict(stride=[1, 0, 1]), r"conv_transpose3d: stride must be positive, got 0 in height"),
    ("dilation", dict(dilation=[0]), r"conv_transpose3d: dilation must be positive, got 0 in depth"),
    ("padding", dict(padding=[0, 0, -1]), r"conv_transpose3d: padding must be non-negative, got -1 in width"),
    ("groups", dict(groups=0), r"conv_transpose3d: groups must be positive, got 0"),
    ("list length", dict(stride=[1, 2]), r"stride must be a single integer or a list of 3"),
    ("grad_output size", dict(g=torch.randn(1, 2, 5, 7, 5)),
     r"grad_output height is 7, expected the forward's output height for input 3, kernel 3"),
    ("grad_output too small", dict(g=torch.randn(1, 2, 4, 5, 5)), r"grad_output depth is 4"),
    ("dtype mix", dict(g=torch.randn(1, 2, 5, 5, 5, dtype=torch.float64)), r"must have the same dtype as"),
    ("rank", dict(g=torch.randn(2, 5, 5, 5)), r"grad_output must be a 5-D"),
]


def call_all_gradients(a):
    return torch.ops.ct3d.conv_transpose3d_backward(a["g"], a["x"], a["w"], a["stride"],
                                                    a["padding"], a["groups"], a["dilation"],
                                                    [True, True, True])[0]


BACKWARD_CALLS = {"input": call_input_backward, "weight": call_weight_backward,
                  "all": call_all_gradients}


@pytest.mark.parametrize("which", list(BACKWARD_CALLS))
@pytest.mark.parametrize("name,change,message", BACKWARD_BAD, ids=[b[0] for b in BACKWARD_BAD])
def test_backward_ops_share_the_forward_messages(which, name, change, message):
    args = ok_backward_args()
    args.update(change)
    with pytest.raises(RuntimeError, match=message):
        BACKWARD_CALLS[which](args)


# Mistakes only the all-gradients op can make: input and weight disagree.
ALL_GRADIENTS_BAD = [
    ("input channels", dict(x=torch.randn(1, 5, 3, 3, 3)),
     r"input has 5 channels, expected weight.size\(0\) = 4"),
    ("input batch", dict(x=torch.randn(2, 4, 3, 3, 3)), r"input batch 2 must equal grad_output batch 1"),
    ("input rank", dict(x=torch.randn(4, 3, 3, 3)), r"input must be a 5-D"),
    ("input dtype", dict(x=torch.randn(1, 4, 3, 3, 3, dtype=torch.float64)),
     r"input must have the same dtype as grad_output"),
    ("input extent", dict(x=torch.randn(1, 4, 3, 4, 3)), r"grad_output height is 5, expected"),
]


@pytest.mark.parametrize("name,change,message", ALL_GRADIENTS_BAD,
                         ids=[b[0] for b in ALL_GRADIENTS_BAD])
def test_all_gradients_op_checks_input_against_weight(name, change, message):
    args = ok_backward_args()
    args.update(change)
    with pytest.raises(RuntimeError, match=message):
        call_all_gradients(args)


@pytest.mark.parametrize("call", list(BACKWARD_CALLS.values()))
def test_backward_ops_accept_the_forward_gradient(call):
    assert call(ok_backward_args()).shape in {(1, 4, 3, 3, 3), (4, 2, 3, 3, 3)}


def test_backward_accepts_output_padding():
    # Stride 2 with output_padding 1: grad_output one larger than the natural size.
    x, w = torch.randn(1, 4, 3, 3, 3), torch.randn(4, 2, 3, 3, 3)
    g = torch.randn(1, 2, 8, 8, 8)
    assert input_backward(g, w, [3, 3, 3], [2], [0], 1, [1]).shape == x.shape
    assert weight_backward(x, g, [3, 3, 3], [2], [0], 1, [1]).shape == w.shape
    with pytest.raises(RuntimeError, match=r"grad_output depth is 9"):
        input_backward(torch.randn(1, 2, 9, 8, 8), w, [3, 3, 3], [2], [0], 1, [1])
