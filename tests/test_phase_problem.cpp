// The host-side problem the implicit GEMM launch is given: sizes, strides and the
// per-residue tap progressions and the staged halo of a strided, padded, grouped call.
#include <ATen/ATen.h>

#include <random>

#include "catch.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

TEST_CASE("make_phase_problem describes a strided grouped call") {
  // N=2, C_in 12 in 2 groups, C_out 2 x 5, input 3 x 4 x 5, kernel 3, stride (2, 1, 3),
  // padding 1, output_padding (1, 0, 0).
  const at::Tensor x = at::zeros({2, 12, 3, 4, 5});
  const at::Tensor w = at::zeros({12, 5, 3, 3, 3});
  const std::vector<int64_t> stride{2, 1, 3}, padding{1}, output_padding{1, 0, 0}, dilation{1};
  const ct3d::ConvTranspose3dArgs args = ct3d::check_conv_transpose3d_args(
      x, w, std::nullopt, c10::fromIntArrayRefSlow(stride), c10::fromIntArrayRefSlow(padding),
      c10::fromIntArrayRefSlow(output_padding), c10::SymInt(2), c10::fromIntArrayRefSlow(dilation));
  const at::Tensor out = at::empty({2, 10, 6, 4, 13});  // (3-1)*2-2+2+1+1, 4, (5-1)*3-2+2+1
  const ct3d::cuda::PhaseProblem p = ct3d::cuda::make_phase_problem(
      ct3d::cuda::forward_gather(ct3d::geometry_of(args)), 16, 16, out);

  CHECK(p.phases == 6);
  CHECK_FALSE(p.uncovered_outputs);
  CHECK(p.cin_per_group == 6);
  CHECK(p.cout_per_group == 5);
  CHECK(p.cin_padded == 16);
  CHECK(p.cout_padded == 16);
  CHECK(p.packed_group_stride == 27 * 16 * 16 * 2);
  // Zero halo: depth reads q + 1 at q = 2 (high 1); height reads q - 1 .. q + 1
  // (1 each side); width's residue 2 reads q + 1 at q = 4 (high 1).
  CHECK(p.halo_low[0] == 0);
  CHECK(p.halo_low[1] == 1);
  CHECK(p.halo_low[2] == 0);
  CHECK(p.staged_extent[0] == 4);
  CHECK(p.source_extent[2] == 5);
  CHECK(p.row_stride[1] == p.staged_stride[1]);  // the forward steps one input index per position
  CHECK(p.staged_extent[1] == 6);
  CHECK(p.staged_extent[2] == 6);
  // Staged channels-last: 2 groups x 16 padded channels per position.
  CHECK(p.staged_stride[2] == 32);
  CHECK(p.staged_stride[1] == 6 * 32);
  CHECK(p.staged_stride[0] == 6 * 6 * 32);
  CHECK(p.staged_batch_stride == 4 * 6 * 6 * 32);
  CHECK(p.staged_origin == 6 * 32);
  CHECK(p.output_channel_stride == 6 * 4 * 13);
  CHECK(p.output_stride[0] == 4 * 13);
  // Phase positions per dimension: ceil(6/2), 4, ceil(13/3); residue 0 is the largest.
  CHECK(p.dim[0].max_positions == 3);
  CHECK(p.dim[1].max_positions == 4);
  CHECK(p.dim[2].max_positions == 5);
  CHECK(p.positions_per_sample == 3 * 4 * 5);
  CHECK(p.rows == 2 * 60);
  CHECK(p.per_sample_divider.divisor == 60);
  CHECK(p.width_divider.divisor == 5);
  CHECK(p.height_divider.divisor == 4);
  // Depth, stride 2, padding 1: residue 0 gets tap 1, residue 1 taps 0 and 2.
  CHECK(p.dim[0].residue[0].taps == 1);
  CHECK(p.dim[0].residue[0].first_tap == 1);
  CHECK(p.dim[0].residue[0].first_shift == 0);
  CHECK(p.dim[0].residue[1].taps == 2);
  CHECK(p.dim[0].residue[1].first_tap == 0);  // taps 0, 2 read q + 1, q
  CHECK(p.dim[0].residue[1].tap_step == 2);
  CHECK(p.dim[0].residue[1].first_shift == 1);
  CHECK(p.dim[0].residue[1].shift_step == -1);
  CHECK(p.dim[1].residue[0].taps == 3);                              // stride 1: every tap
  for (int r = 0; r < 3; ++r) CHECK(p.dim[2].residue[r].taps == 1);  // stride 3 = kernel
}

TEST_CASE("make_phase_problem launches only the phases that have taps") {
  // Stride 2 with dilation 2 (KernelBench 77): even residues get no tap, so their
  // outputs are the bias alone and only phase (1, 1, 1) is launched.
  const at::Tensor x = at::zeros({1, 4, 3, 4, 5});
  const at::Tensor w = at::zeros({4, 4, 3, 3, 3});
  const std::vector<int64_t> stride{2}, padding{1}, output_padding{0}, dilation{2};
  const ct3d::ConvTranspose3dArgs args = ct3d::check_conv_transpose3d_args(
      x, w, std::nullopt, c10::fromIntArrayRefSlow(stride), c10::fromIntArrayRefSlow(padding),
      c10::fromIntArrayRefSlow(output_padding), c10::SymInt(1), c10::fromIntArrayRefSlow(dilation));
  const at::Tensor out = at::empty({1, 4, 7, 9, 11});  // (n-1)*2-2+2*2+1
  const ct3d::cuda::PhaseProblem p = ct3d::cuda::make_phase_problem(
      ct3d::cuda::forward_gather(ct3d::geometry_of(args)), 16, 16, out);

  CHECK(p.phases == 1);
  CHECK(p.uncovered_outputs);
  for (int i = 0; i < 3; ++i) {
    CHECK(p.dim[i].active_residues == 1);
    CHECK(p.dim[i].active_residue[0] == 1);
    CHECK(p.dim[i].residue[0].taps == 0);
    CHECK(p.dim[i].residue[1].taps == 3);
  }
  // Rows are still numbered by residue 0, the larger one: ceil(7/2) = 4 in depth.
  CHECK(p.dim[0].max_positions == 4);
}

TEST_CASE("the staged halo keeps every tap of every launched row inside") {
  // The GEMM gathers without a validity test: rows q < max_positions of every
  // residue, at every tap, must read inside the staged extent (halos included).
  // The taps must also be the arithmetic progressions the kernel steps through.
  std::mt19937 rng(2468);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 400; ++trial) {
    const std::vector<int64_t> in{pick(1, 6), pick(1, 6), pick(1, 6)};
    const std::vector<int64_t> kernel{pick(1, 6), pick(1, 6), pick(1, 6)};
    const std::vector<int64_t> stride{pick(1, 4), pick(1, 4), pick(1, 4)};
    const std::vector<int64_t> dilation{pick(1, 3), pick(1, 3), pick(1, 3)};
    std::vector<int64_t> padding(3), output_padding(3), out(3);
    bool valid = true;
    for (int i = 0; i < 3; ++i) {
      padding[i] = pick(0, 4);
      output_padding[i] = pick(0, std::max(stride[i], dilation[i]) - 1);
      out[i] = (in[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) +
               output_padding[i] + 1;
      valid = valid && out[i] > 0;
    }
    if (!valid) continue;
    const at::Tensor x = at::zeros({1, 2, in[0], in[1], in[2]});
    const at::Tensor w = at::zeros({2, 3, kernel[0], kernel[1], kernel[2]});
    const ct3d::ConvTranspose3dArgs args = ct3d::check_conv_transpose3d_args(
        x, w, std::nullopt, c10::fromIntArrayRefSlow(stride), c10::fromIntArrayRefSlow(padding),
        c10::fromIntArrayRefSlow(output_padding), c10::SymInt(1),
        c10::fromIntArrayRefSlow(dilation));
    const at::Tensor output = at::empty({1, 3, out[0], out[1], out[2]});
    // make_phase_problem asserts that every residue's taps form a progression.
    const ct3d::cuda::PhaseProblem p = ct3d::cuda::make_phase_problem(
        ct3d::cuda::forward_gather(ct3d::geometry_of(args)), 16, 16, output);
    for (int i = 0; i < 3; ++i) {
      const ct3d::cuda::DimParams& dim = p.dim[i];
      for (int a = 0; a < dim.active_residues; ++a) {
        const ct3d::cuda::ResidueParams& residue = dim.residue[dim.active_residue[a]];
        for (int t = 0; t < residue.taps; ++t) {
          const int shift = residue.first_shift + t * residue.shift_step;
          const int kernel_tap = residue.first_tap + t * residue.tap_step;
          CHECK(kernel_tap >= 0);
          CHECK(kernel_tap < kernel[i]);
          // The lowest and highest rows of the shared numbering.
          CHECK(p.halo_low[i] + shift >= 0);
          CHECK(p.halo_low[i] + dim.max_positions - 1 + shift < p.staged_extent[i]);
        }
      }
    }
  }
}
