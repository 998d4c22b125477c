"""Decoder layers outside the KernelBench set. Wide (issue 11): channels 64 to 256,
kernel 3 to 5, stride 1 and 2, batch 8 to 16, inputs 16^3 to 32^3, the kind typical
3-D U-Net / VAE decoders have. Narrow: layers with 8 to 32 output channels (stride 1,
and two stride-2 upsampling layers), the last layers of such decoders, where one
group's channels fill few of wgmma's 64 rows. A user's layers are not ours to choose.
Probe: layers that settle one form's default rule in an A/B (bench/ab_switch.py), not in
the tables. Numbered from 101 (wide), 201 (narrow) and 301 (probe) so they share the
benchmark's problem lookup."""


from problems import Problem


def _wide(number, label, batch, c_in, c_out, size, kernel, stride=1, padding=0, output_padding=0):
    conv = dict(in_channels=c_in, out_channels=c_out, kernel_size=kernel, stride=stride,
                padding=padding, output_padding=output_padding, bias=True)
    return Problem(number, label, batch, (c_in, size, size, size), (), conv, name=label)


WIDE_LAYERS = [
    _wide(101, "W-64-128-k3-s1", 16, 64, 128, 32, 3, padding=1),
    _wide(102, "W-128-128-k3-s1", 8, 128, 128, 32, 3, padding=1),
    _wide(103, "W-128-64-k5-s1", 16, 128, 64, 16, 5, padding=2),
    _wide(104, "W-256-128-k3-s1", 8, 256, 128, 16, 3, padding=1),
    _wide(105, "W-128-128-k5-s1", 8, 128, 128, 24, 5, padding=2),
    _wide(106, "W-64-64-k4-s2", 16, 64, 64, 32, 4, stride=2, padding=1),
    _wide(107, "W-128-64-k4-s2", 8, 128, 64, 32, 4, stride=2, padding=1),
    _wide(108, "W-256-128-k3-s2", 8, 256, 128, 16, 3, stride=2, padding=1, output_padding=1),
    _wide(109, "W-256-256-k3-s1", 8, 256, 256, 16, 3, padding=1),
]

NARROW_LAYERS = [
    _wide(201, "N-32-16-k3-s1", 8, 32, 16, 48, 3, padding=1),
    _wide(202, "N-64-32-k3-s1", 8, 64, 32, 32, 3, padding=1),
    _wide(203, "N-32-16-k5-s1", 8, 32, 16, 32, 5, padding=2),
    _wide(204, "N-16-8-k3-s1", 8, 16, 8, 64, 3, padding=1),
    _wide(205, "N-64-16-k4-s1", 8, 64, 16, 32, 4),
    _wide(206, "N-48-24-k3-s1", 8, 48, 24, 48, 3, padding=1),
    _wide(207, "N-32-16-k3-s2", 8, 32, 16, 32, 3, stride=2, padding=1, output_padding=1),
    _wide(208, "N-64-32-k4-s2", 8, 64, 32, 32, 4, stride=2, padding=1),
]

PROBE_LAYERS = [
    # Strided-lines chains over 512 reductions, flushed (KERNEL_LOG "chains over 512
    # reductions"): few target channels (one channel block) from many source channels.
    _wide(301, "P-256-16-k3-s2", 4, 256, 16, 32, 3, stride=2, padding=1, output_padding=1),
    _wide(302, "P-192-8-k4-s2", 4, 192, 8, 32, 4, stride=2, padding=1),
    _wide(303, "P-160-64-k4-s2", 4, 160, 64, 32, 4, stride=2, padding=1),
    # Widths not a multiple of 16 (KERNEL_LOG "warp-staged stores for every width": the
    # warp-staged stores there).
    _wide(304, "P-32-32-k3-s2-24", 8, 32, 32, 24, 3, stride=2, padding=1),
    _wide(305, "P-64-64-k4-s2-20", 8, 64, 64, 20, 4, stride=2, padding=1),
    # Four blocks of 64 input channels in the wgmma weight gradient on 32-wide lines
    # (KERNEL_LOG "weight-gradient stages of 16 positions": measured only on 16-wide ones
    # before it took them).
    _wide(306, "P-256-64-k3-s1-32", 4, 256, 64, 32, 3, padding=1),
    _wide(307, "P-256-128-k3-s2-32", 2, 256, 128, 32, 3, stride=2, padding=1, output_padding=1),
]
