"""The transposed convolutions of three real 3-D segmentation networks (issue 51), as
their default configurations build them, at batch 2:

- nnU-Net's default 3-D full-resolution decoder (MONAI's DynUNet with nnU-Net's plan for
  a 128^3 patch: filters 32-320, kernel 2 stride 2 upsampling, no bias);
- MONAI's UNet (channels 16-256, strides 2, input 96^3: kernel 3, stride 2, padding 1,
  output_padding 1, bias);
- UNETR's decoder (ViT-B, 768 hidden channels at 6^3 for a 96^3 input, feature size 16:
  kernel 2 stride 2, no bias).

python_tests/test_network_layers.py checks this table against the networks themselves
where MONAI is installed. Numbered from 401 so they share the benchmark's lookup."""

from problems import Problem


def _layer(number, label, c_in, c_out, size, kernel, stride, padding=0, output_padding=0,
           bias=False, batch=2):
    conv = dict(in_channels=c_in, out_channels=c_out, kernel_size=kernel, stride=stride,
                padding=padding, output_padding=output_padding, bias=bias)
    return Problem(number, label, batch, (c_in, size, size, size), (), conv, name=label)


def _nnunet(number, c_in, c_out, size):
    return _layer(number, f"R-nnunet-{c_in}-{c_out}-{size}", c_in, c_out, size, 2, 2)


def _unet(number, c_in, c_out, size):
    return _layer(number, f"R-unet-{c_in}-{c_out}-{size}", c_in, c_out, size, 3, 2, padding=1,
                  output_padding=1, bias=True)


def _unetr(number, c_in, c_out, size):
    return _layer(number, f"R-unetr-{c_in}-{c_out}-{size}", c_in, c_out, size, 2, 2)


NETWORK_LAYERS = [
    _nnunet(401, 320, 320, 4),
    _nnunet(402, 320, 256, 8),
    _nnunet(403, 256, 128, 16),
    _nnunet(404, 128, 64, 32),
    _nnunet(405, 64, 32, 64),
    _unet(411, 384, 64, 6),
    _unet(412, 128, 32, 12),
    _unet(413, 64, 16, 24),
    _unet(414, 32, 2, 48),
    _unetr(421, 768, 128, 6),
    _unetr(422, 768, 64, 6),
    _unetr(423, 768, 32, 6),
    _unetr(424, 128, 64, 12),
    _unetr(425, 64, 64, 12),
    _unetr(426, 64, 32, 24),
    _unetr(427, 32, 32, 12),
    _unetr(428, 32, 32, 24),
    _unetr(429, 32, 16, 48),
]

# The networks the table comes from, as (name, builder arguments, input shape); the
# builders are MONAI's (a benchmark and test dependency, never the package's).
NETWORKS = {
    "nnunet": ("DynUNet", dict(spatial_dims=3, in_channels=1, out_channels=2,
                               kernel_size=[3] * 6, strides=[1, 2, 2, 2, 2, 2],
                               upsample_kernel_size=[2] * 5,
                               filters=(32, 64, 128, 256, 320, 320)), (2, 1, 128, 128, 128)),
    "unet": ("UNet", dict(spatial_dims=3, in_channels=1, out_channels=2,
                          channels=(16, 32, 64, 128, 256), strides=(2, 2, 2, 2)),
             (2, 1, 96, 96, 96)),
    "unetr": ("UNETR", dict(in_channels=1, out_channels=2, img_size=96, feature_size=16,
                            hidden_size=768), (2, 1, 96, 96, 96)),
}

# Small versions of the three networks (overrides of the builder arguments, input
# shape): the same blocks on inputs a CPU test affords (python_tests/test_network_layers.py,
# bench/networks.py --small).
SMALL_NETWORKS = {
    "nnunet": (dict(filters=(4, 8, 8, 16, 16, 16)), (2, 1, 64, 64, 64)),
    "unet": (dict(channels=(4, 8, 16, 16, 32)), (2, 1, 32, 32, 32)),
    "unetr": (dict(img_size=32, feature_size=4, hidden_size=48, mlp_dim=96, num_heads=4),
              (2, 1, 32, 32, 32)),
}
