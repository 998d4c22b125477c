// Width-tap reuse (ops/cuda/engine/gather/width_tap_reuse.h): the tile-row maps the
// producers and the compute threads use must agree, and the plan's tile must hold
// every block's rows wherever the block starts in a line.
#include <ATen/ATen.h>

#include <algorithm>

#include "catch.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/cuda/engine/gather/width_tap_reuse.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"

namespace {

using ct3d::cuda::WidthReuseSegments;

constexpr int kBlockRows = 256;

// The block row that starts row `local`'s segment.
int segment_start(const WidthReuseSegments& s, int local) {
  if (local < s.first_len) return 0;
  return s.first_len + (local - s.first_len) / s.line * s.line;
}

// Rows of the tile the producers fill for a whole block.
int tile_rows_needed(const WidthReuseSegments& s) {
  return s.tile_row(kBlockRows - 1) + s.span + 1;
}

ct3d::ConvGeometry geometry(int64_t width, int64_t kernel_w, int64_t stride, int64_t dilation) {
  const at::Tensor x = at::zeros({2, 16, 3, 4, width});
  const at::Tensor w = at::zeros({16, 16, 2, 3, kernel_w});
  const std::vector<int64_t> strides{1, 1, stride}, padding{0}, output_padding{0},
      dilations{1, 1, dilation};
  return ct3d::geometry_of(ct3d::check_conv_transpose3d_args(
      x, w, std::nullopt, c10::fromIntArrayRefSlow(strides), c10::fromIntArrayRefSlow(padding),
      c10::fromIntArrayRefSlow(output_padding), c10::SymInt(1),
      c10::fromIntArrayRefSlow(dilations)));
}

}  // namespace

TEST_CASE("every width tap of every block row finds its staged position in the tile") {
  int mismatches = 0, checked = 0;
  for (const int line : {1, 3, 7, 64, 70, 300}) {
    for (const int pitch : {1, 2, 3}) {
      for (const int span : {0, 1, 2, 4, 6}) {
        for (int first_len = 1; first_len <= std::min(kBlockRows, line); first_len += 5) {
          const WidthReuseSegments s{line, first_len, pitch, span};
          for (int local = 0; local < kBlockRows; ++local) {
            const int start = segment_start(s, local);
            for (int shift = 0; shift <= span; ++shift) {
              const WidthReuseSegments::Source source = s.source(s.tile_row(local) + shift);
              mismatches +=
                  source.first_local != start || source.offset != (local - start) * pitch + shift;
              ++checked;
            }
          }
        }
      }
    }
  }
  CHECK(checked > 100000);
  CHECK(mismatches == 0);
}

TEST_CASE("the reuse plan's tile holds every block, wherever it starts in a line") {
  struct Case {
    int64_t width, kernel_w, stride, dilation;
    bool forward;
  };
  const Case cases[] = {{64, 7, 1, 1, true},  {128, 3, 2, 1, true}, {32, 3, 2, 2, true},
                        {5, 5, 1, 1, true},   {64, 3, 2, 1, false}, {9, 4, 3, 1, true},
                        {200, 5, 1, 2, true}, {33, 3, 1, 1, false}};
  for (const Case& c : cases) {
    const ct3d::ConvGeometry g = geometry(c.width, c.kernel_w, c.stride, c.dilation);
    const ct3d::cuda::GatherProblem problem =
        c.forward ? ct3d::cuda::forward_gather(g) : ct3d::cuda::input_gradient_gather(g);
    const at::Tensor target =
        c.forward ? at::empty({2, 16, 4, 6, g.dim[2].output}) : at::empty({2, 16, 3, 4, c.width});
    const ct3d::cuda::PhaseProblem p = ct3d::cuda::make_phase_problem(problem, 16, 16, target);
    const ct3d::cuda::WidthReusePlan plan =
        ct3d::cuda::plan_width_reuse(p, kBlockRows, 16, 1 << 20);
    INFO("width " << c.width << " kernel " << c.kernel_w << " stride " << c.stride << " dilation "
                  << c.dilation << " forward " << c.forward);
    REQUIRE(plan.taps_per_stage >= 2);
    CHECK(plan.slots >= 3);
    const int pitch = static_cast<int>(p.row_stride[2] / p.staged_stride[2]);
    const ct3d::cuda::DimParams& width = p.dim[2];
    int most = 0;
    for (int a = 0; a < width.active_residues; ++a) {
      const ct3d::cuda::ResidueParams& r = width.residue[width.active_residue[a]];
      const int span = ct3d::cuda::shift_span(r.shift_step, r.taps);
      for (int first_qw = 0; first_qw < width.max_positions; ++first_qw) {
        const WidthReuseSegments s{
            width.max_positions, std::min(kBlockRows, width.max_positions - first_qw), pitch, span};
        most = std::max(most, tile_rows_needed(s));
      }
    }
    CHECK(most <= plan.tile_rows);
    CHECK(plan.tile_rows <= most + 2 * kBlockRows);  // no more than the worst block + slack
  }
}

TEST_CASE("no reuse plan with one width tap or a tile past the producers' rows") {
  const ct3d::ConvGeometry one_tap = geometry(64, 1, 1, 1);
  const at::Tensor out = at::empty({2, 16, 4, 6, 64});
  const ct3d::cuda::PhaseProblem p =
      ct3d::cuda::make_phase_problem(ct3d::cuda::forward_gather(one_tap), 16, 16, out);
  CHECK(ct3d::cuda::plan_width_reuse(p, kBlockRows, 16, 1 << 20).taps_per_stage == 0);
  // Lines of 5 rows: a block touches up to 52 of them, 464 tile rows.
  const ct3d::ConvGeometry narrow = geometry(1, 5, 1, 1);
  const at::Tensor narrow_out = at::empty({2, 16, 4, 6, 5});
  const ct3d::cuda::PhaseProblem q =
      ct3d::cuda::make_phase_problem(ct3d::cuda::forward_gather(narrow), 16, 16, narrow_out);
  CHECK(ct3d::cuda::plan_width_reuse(q, kBlockRows, 16, 463).taps_per_stage == 0);
  CHECK(ct3d::cuda::plan_width_reuse(q, kBlockRows, 16, 464).taps_per_stage >= 2);
}
