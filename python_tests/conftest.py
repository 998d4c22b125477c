import pytest
import torch

import ct3d  # noqa: F401  (loads the op library once for every test)

requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
