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

namespace {

// The engine's result as its launch describes it (the PhaseProblem the kernels walk),
// computed on the host: per active residue and phase position, the sum over the
// residue's taps of the source value the tap reads (zero in the halo) times the tap's
// weight, stored at target q * stride + residue; every other target keeps `untouched`.
// A wrong phase, shift, tap or position count shows as a wrong output.
std::vector<double> engine_model(const ct3d::cuda::PhaseProblem& p,
                                 const std::vector<int64_t>& source,
                                 const std::vector<int64_t>& target, int64_t cin, int64_t cout,
                                 const std::vector<double>& x, bool input_gradient,
                                 const std::vector<double>& w, const std::vector<int64_t>& kernel,
                                 double untouched) {
  const int64_t target_size = target[0] * target[1] * target[2];
  std::vector<double> out(cout * target_size, untouched);
  std::vector<int> written(target_size, 0);
  const auto weight = [&](int64_t m, int64_t c, const int (&k)[3]) {
    const int64_t tap = (k[0] * kernel[1] + k[1]) * kernel[2] + k[2];
    const int64_t taps = kernel[0] * kernel[1] * kernel[2];
    // The forward's weight is (source channel, target channel, taps); the input
    // gradient's (target channel, source channel, taps).
    return input_gradient ? w[(m * cin + c) * taps + tap] : w[(c * cout + m) * taps + tap];
  };
  const auto& d = p.dim;
  for (int a0 = 0; a0 < d[0].active_residues; ++a0)
    for (int a1 = 0; a1 < d[1].active_residues; ++a1)
      for (int a2 = 0; a2 < d[2].active_residues; ++a2) {
        const int r[3] = {d[0].active_residue[a0], d[1].active_residue[a1],
                          d[2].active_residue[a2]};
        const ct3d::cuda::ResidueParams* rp[3] = {&d[0].residue[r[0]], &d[1].residue[r[1]],
                                                  &d[2].residue[r[2]]};
        for (int q0 = 0; q0 < rp[0]->positions; ++q0)
          for (int q1 = 0; q1 < rp[1]->positions; ++q1)
            for (int q2 = 0; q2 < rp[2]->positions; ++q2) {
              const int q[3] = {q0, q1, q2};
              int64_t t_index[3];
              for (int i = 0; i < 3; ++i) t_index[i] = int64_t{q[i]} * d[i].stride + r[i];
              const int64_t at = (t_index[0] * target[1] + t_index[1]) * target[2] + t_index[2];
              REQUIRE(t_index[0] < target[0]);
              REQUIRE(t_index[1] < target[1]);
              REQUIRE(t_index[2] < target[2]);
              ++written[at];
              for (int64_t m = 0; m < cout; ++m) {
                double sum = 0.0;
                for (int t0 = 0; t0 < rp[0]->taps; ++t0)
                  for (int t1 = 0; t1 < rp[1]->taps; ++t1)
                    for (int t2 = 0; t2 < rp[2]->taps; ++t2) {
                      const int t[3] = {t0, t1, t2};
                      int k[3];
                      int64_t s[3];
                      bool inside = true;
                      for (int i = 0; i < 3; ++i) {
                        k[i] = rp[i]->first_tap + t[i] * rp[i]->tap_step;
                        // Row q reads staged position q * row step + shift; the staged
                        // origin is the halo, so the source index is that less nothing.
                        s[i] = int64_t{q[i]} * (p.row_stride[i] / p.staged_stride[i]) +
                               rp[i]->first_shift + t[i] * rp[i]->shift_step;
                        inside = inside && s[i] >= 0 && s[i] < source[i];
                      }
                      if (!inside) continue;
                      for (int64_t c = 0; c < cin; ++c) {
                        const int64_t from =
                            ((c * source[0] + s[0]) * source[1] + s[1]) * source[2] + s[2];
                        sum += x[from] * weight(m, c, k);
                      }
                    }
                out[m * target_size + at] = sum;
              }
            }
      }
  bool uncovered = false;
  for (const int count : written) {
    CHECK(count <= 1);
    uncovered = uncovered || count == 0;
  }
  // Targets no launched row writes are filled before the GEMM: the launch must say so.
  if (uncovered) CHECK(p.uncovered_outputs);
  return out;
}

}  // namespace

TEST_CASE("the engine's launch computes the transposed convolution (host model)") {
  // Random calls, and the shape of the harness's one unexplained CUDA miss (issue 49:
  // form cuda-wgrad-wgmma-32, call 1802; output width 1 from padding 8): the forward's
  // and the input gradient's launches, walked as the kernels walk them, against the
  // convolution's own definition.
  struct Shape {
    std::vector<int64_t> in, kernel, stride, padding, output_padding, dilation;
  };
  std::vector<Shape> shapes = {
      {{1, 3, 4}, {1, 2, 4}, {3, 3, 2}, {0, 0, 8}, {2, 2, 1}, {2, 2, 3}},
  };
  std::mt19937 rng(1802);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  while (shapes.size() < 600) {
    Shape s{{pick(1, 5), pick(1, 5), pick(1, 5)},
            {pick(1, 5), pick(1, 5), pick(1, 5)},
            {pick(1, 3), pick(1, 3), pick(1, 3)},
            {0, 0, 0},
            {0, 0, 0},
            {pick(1, 3), pick(1, 3), pick(1, 3)}};
    bool valid = true;
    for (int i = 0; i < 3; ++i) {
      s.padding[i] = pick(0, static_cast<int>(s.dilation[i] * (s.kernel[i] - 1)));
      s.output_padding[i] = pick(0, static_cast<int>(std::max(s.stride[i], s.dilation[i])) - 1);
      valid = valid && (s.in[i] - 1) * s.stride[i] - 2 * s.padding[i] +
                               s.dilation[i] * (s.kernel[i] - 1) + s.output_padding[i] + 1 >
                           0;
    }
    if (valid) shapes.push_back(s);
  }
  constexpr int64_t kCin = 2, kCout = 3;
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (const Shape& s : shapes) {
    std::vector<int64_t> out(3);
    for (int i = 0; i < 3; ++i) {
      out[i] = (s.in[i] - 1) * s.stride[i] - 2 * s.padding[i] + s.dilation[i] * (s.kernel[i] - 1) +
               s.output_padding[i] + 1;
    }
    INFO("input " << s.in[0] << "x" << s.in[1] << "x" << s.in[2] << " kernel " << s.kernel[0] << "x"
                  << s.kernel[1] << "x" << s.kernel[2] << " stride " << s.stride[0] << "x"
                  << s.stride[1] << "x" << s.stride[2] << " padding " << s.padding[0] << "x"
                  << s.padding[1] << "x" << s.padding[2] << " output_padding "
                  << s.output_padding[0] << "x" << s.output_padding[1] << "x" << s.output_padding[2]
                  << " dilation " << s.dilation[0] << "x" << s.dilation[1] << "x" << s.dilation[2]);
    const at::Tensor x = at::empty({1, kCin, s.in[0], s.in[1], s.in[2]}, at::kDouble);
    const at::Tensor w =
        at::empty({kCin, kCout, s.kernel[0], s.kernel[1], s.kernel[2]}, at::kDouble);
    for (const at::Tensor& t : {x, w}) {
      double* data = t.data_ptr<double>();
      for (int64_t i = 0; i < t.numel(); ++i) data[i] = value(rng);
    }
    const ct3d::ConvTranspose3dArgs args = ct3d::check_conv_transpose3d_args(
        x, w, std::nullopt, c10::fromIntArrayRefSlow(s.stride), c10::fromIntArrayRefSlow(s.padding),
        c10::fromIntArrayRefSlow(s.output_padding), c10::SymInt(1),
        c10::fromIntArrayRefSlow(s.dilation));
    const ct3d::ConvGeometry geometry = ct3d::geometry_of(args);
    const std::vector<double> xs(x.data_ptr<double>(), x.data_ptr<double>() + x.numel());
    const std::vector<double> ws(w.data_ptr<double>(), w.data_ptr<double>() + w.numel());

    // The forward against ATen's transposed convolution in float64.
    const at::Tensor y = at::empty({1, kCout, out[0], out[1], out[2]}, at::kDouble);
    const ct3d::cuda::PhaseProblem forward =
        ct3d::cuda::make_phase_problem(ct3d::cuda::forward_gather(geometry), 16, 16, y);
    const std::vector<double> got =
        engine_model(forward, s.in, out, kCin, kCout, xs, false, ws, s.kernel, 0.0);
    const at::Tensor want =
        at::conv_transpose3d(x, w, {}, s.stride, s.padding, s.output_padding, 1, s.dilation);
    const double* wanted = want.contiguous().data_ptr<double>();
    double error = 0.0;
    for (size_t i = 0; i < got.size(); ++i) error = std::max(error, std::abs(got[i] - wanted[i]));
    CHECK(error < 1e-12);

    // The input gradient of a random grad_output against ATen's convolution backward.
    const at::Tensor g = at::empty({1, kCout, out[0], out[1], out[2]}, at::kDouble);
    double* gd = g.data_ptr<double>();
    for (int64_t i = 0; i < g.numel(); ++i) gd[i] = value(rng);
    const ct3d::cuda::PhaseProblem gradient =
        ct3d::cuda::make_phase_problem(ct3d::cuda::input_gradient_gather(geometry), 16, 16, x);
    const std::vector<double> gs(gd, gd + g.numel());
    const std::vector<double> dx =
        engine_model(gradient, out, s.in, kCout, kCin, gs, true, ws, s.kernel, 0.0);
    const at::Tensor want_dx =
        std::get<0>(at::convolution_backward(g, x, w, std::nullopt, s.stride, s.padding, s.dilation,
                                             true, s.output_padding, 1, {true, false, false}));
    const double* wanted_dx = want_dx.contiguous().data_ptr<double>();
    double dx_error = 0.0;
    for (size_t i = 0; i < dx.size(); ++i) {
      dx_error = std::max(dx_error, std::abs(dx[i] - wanted_dx[i]));
    }
    CHECK(dx_error < 1e-12);
  }
}
