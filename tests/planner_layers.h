// The table of layers the planners' tests (test_gemm_plan.cpp,
// test_weight_gradient_mainloop.cpp) ask about, and their geometry as the op derives it.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "ops/common/conv_transpose3d_args.h"

namespace ct3d::test_layers {

struct Layer {
  const char* name;
  int64_t batch, cin, cout, groups;
  std::vector<int64_t> spatial, kernel, stride, padding, output_padding, dilation;
};

// The layer's geometry, as the op checks and derives it.
inline ct3d::ConvGeometry geometry_of(const Layer& l) {
  const at::Tensor x = at::empty({l.batch, l.cin, l.spatial[0], l.spatial[1], l.spatial[2]},
                                 at::TensorOptions().device(at::kMeta));
  const at::Tensor w = at::empty({l.cin, l.cout / l.groups, l.kernel[0], l.kernel[1], l.kernel[2]},
                                 at::TensorOptions().device(at::kMeta));
  return ct3d::geometry_of(ct3d::check_conv_transpose3d_args(
      x, w, std::nullopt, c10::fromIntArrayRefSlow(l.stride), c10::fromIntArrayRefSlow(l.padding),
      c10::fromIntArrayRefSlow(l.output_padding), c10::SymInt(l.groups),
      c10::fromIntArrayRefSlow(l.dilation)));
}

// The layer's input, a meta tensor (its shape and strides only).
inline at::Tensor meta_input(const Layer& l, at::ScalarType dtype = at::kFloat) {
  return at::empty({l.batch, l.cin, l.spatial[0], l.spatial[1], l.spatial[2]},
                   at::TensorOptions().device(at::kMeta).dtype(dtype));
}

inline const std::vector<int64_t> k1{1, 1, 1}, k0{0, 0, 0}, k2{2, 2, 2};

// KernelBench level 1 (bench/problems.py) and a few of the wide and network layers.
inline const Layer kL1_58{"L1-58", 16, 32, 16, 1, {16, 32, 64}, {3, 5, 7}, k1, k0, k0, k1};
inline const Layer kL1_61{"L1-61", 8, 48, 48, 1, {64, 64, 64}, {3, 3, 3}, k1, k0, k0, k1};
inline const Layer kL1_68{"L1-68", 16, 32, 64, 1, {64, 64, 64}, {3, 5, 5}, k1, k0, k0, k1};
inline const Layer kL1_70{"L1-70", 8, 48, 24, 1, {96, 96, 96}, {3, 3, 3}, k1, k0, k0, k1};
inline const Layer kL1_72{"L1-72", 8, 32, 32, 4, {12, 24, 48}, {3, 5, 7}, k2, {1, 2, 3}, k1, k1};
inline const Layer kL1_73{"L1-73", 4, 32, 32, 1, {32, 64, 128}, {3, 3, 3}, k2, k1, k0, k1};
inline const Layer kL1_77{"L1-77", 16, 32, 64, 1, {16, 32, 32}, {3, 3, 3}, k2, k1, k0, k2};
inline const Layer kWide256{"W-256-256-k3-s1", 2,  256, 256, 1, {16, 16, 16},
                            {3, 3, 3},         k1, k1,  k0,  k1};
inline const Layer kWide128{"W-128-128-k3-s1", 8,  128, 128, 1, {32, 32, 32},
                            {3, 3, 3},         k1, k1,  k0,  k1};
inline const Layer kNarrow48{"N-48-24-k3-s1", 8,  48, 24, 1, {48, 48, 48},
                             {3, 3, 3},       k1, k1, k0, k1};
inline const Layer kNarrow32{"N-32-16-k3-s1", 8,  32, 16, 1, {48, 48, 48},
                             {3, 3, 3},       k1, k1, k0, k1};
inline const Layer kNarrow16{"N-16-8-k3-s1", 8,  16, 8, 1, {64, 64, 64},
                             {3, 3, 3},      k1, k1, k0, k1};
inline const Layer kUnet{
    "nnU-Net 64->32 k2 s2", 2, 64, 32, 1, {64, 64, 64}, {2, 2, 2}, k2, k0, k0, k1};

}  // namespace ct3d::test_layers
