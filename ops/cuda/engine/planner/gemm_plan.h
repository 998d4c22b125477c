// The planner of the float32 gathering GEMM (the forward and the input gradient): the
// one place that chooses which mainloop runs a problem and with which tiles. A pure host
// function of the problem, the device and a few facts of the call's tensors; the
// launchers launch the plan they are given (implicit_gemm_launch.cu and the forms'
// *_launch.cu). docs/ARCHITECTURE.md draws its decision.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "ops/cuda/engine/gather/width_tap_reuse.h"
#include "ops/cuda/engine/planner/device_info.h"
#include "ops/cuda/engine/problem/implicit_gemm_problem.h"
#include "ops/cuda/engine/strided_lines/strided_lines_plan.h"
#include "ops/cuda/engine/window/shifted_window_plan.h"
#include "ops/cuda/engine/window/tap_rows_plan.h"

namespace ct3d::cuda {

// The facts of a call's tensors that choose a form.
struct GemmOperands {
  // TMA boxes may read the source in place (window_tensor_map.h): strided lines and the
  // tap-columns form then stage nothing.
  bool source_fits_boxes = false;
  // The source holds the problem's whole batch: the strided-lines form needs it.
  bool whole_batch = true;
  // The source comes already staged (the fused backward stages grad_output once for both
  // gradients): only the gathering mainloops read that layout, groups unfolded.
  bool prestaged = false;
  // Groups may be folded: an exact rerun is queued for non-finite sources and the output
  // is contiguous (launch_gemm_plan).
  bool may_fold = false;
};

// The mainloops, in the order the planner considers them.
enum class GemmForm {
  kStridedLines,   // width stride 2, few target channels (strided_lines_plan.h)
  kShiftedWindow,  // stride 1, wide blocks (shifted_window_plan.h)
  kTapRows,        // stride 1, narrow blocks: width taps x channels on M (tap_rows_plan.h)
  kTapColumns,     // tap rows' form with positions on M (tap_rows_plan.h)
  kWidthReuse,     // the gather reusing a staged tile across width taps (width_tap_reuse.h)
  kWgmmaGather,    // the gather on wgmma (wgmma_kernel.cuh)
  kMmaGather,      // the gather on mma.sync, any tensor-core GPU (implicit_gemm_kernel.cuh)
};

const char* gemm_form_name(GemmForm form);

struct GemmPlan {
  GemmForm form = GemmForm::kMmaGather;
  int fold = 1;            // convolution groups per GEMM group (group_fold.h)
  GatherProblem folded;    // the problem with its groups folded
  PhaseProblem phase{};    // the folded problem as the chosen form walks it
  int block_channels = 0;  // the gathers' target channels per block (their configuration)
  // The chosen form's own plan (the others stay empty).
  StridedLinesPlan strided_lines;
  ShiftedWindowPlan window;
  TapRowsPlan tap_rows;
  WidthReusePlan reuse;
};

// The plan of `problem` (float32, within implicit_gemm_fits) on `device`. `output` gives
// only its strides (a meta tensor will do).
GemmPlan plan_gemm(const GatherProblem& problem, const DeviceInfo& device,
                   const GemmOperands& operands, const at::Tensor& output);

// The plans of a GEMM that runs a chunk of samples at a time on a source the call makes
// for each chunk (Winograd's transformed input; the fused backward's staged grad_output)
// into a contiguous target: one plan for the full chunks, one for a shorter last chunk.
struct ChunkGemmPlans {
  int64_t chunk_samples = 0;
  GemmPlan full;
  GemmPlan last;  // the batch's remainder (`full` again where the chunks divide the batch)
  // The plan of a chunk of `samples`: the chunk size or the remainder, nothing else.
  const GemmPlan& of_chunk(int64_t samples) const;
};

// problem: the whole batch's (groups unfolded); chunk_samples: 1 to its batch; operands:
// the facts of one chunk's source (each holds its own samples alone: whole_batch).
ChunkGemmPlans plan_chunk_gemms(const GatherProblem& problem, int64_t chunk_samples,
                                const DeviceInfo& device, const GemmOperands& operands);

// Whether the problem (groups unfolded) on its own would run on the tap-columns form:
// the fused backward shares its staged grad_output with the input gradient's gather
// except there (conv_transpose3d_gradients_cuda.cu).
bool tap_columns_takes(const GatherProblem& problem, const DeviceInfo& device,
                       const at::Tensor& output);

// One line: the form, its tiles and the fold, as ct3d.explain prints it.
std::string describe(const GemmPlan& plan);

// The float16 / bfloat16 forms (one half wgmma per multiply-add into float32), or
// kWidened: none takes the problem, and the op widens it to the float32 engine.
enum class HalfForm { kWidened, kShiftedWindow, kTapRows, kGather };

// The problem itself is not kept: the launch takes the one the plan was made for
// (OpPlan::gather), so that a call copies no per-dimension phase lists.
struct HalfPlan {
  HalfForm form = HalfForm::kWidened;
  PhaseProblem phase{};  // the window forms' (the gather plans its own)
  ShiftedWindowPlan window;
  TapRowsPlan tap_rows;
};

// The plan of a float16 / bfloat16 problem (groups unfolded; the forward, or the input
// gradient with its roles swapped) whose target is `output` as allocated (the window's
// parked epilogue wants its lines 16-byte aligned; a meta tensor stands for one the op
// allocates). within_limits: the engine's index
// limits hold (implicit_gemm_fits: the same for both element sizes).
HalfPlan plan_half_gemm(const GatherProblem& problem, const DeviceInfo& device,
                        const at::Tensor& output, bool within_limits);

// One line, as ct3d.explain prints it ("widened to float32" for kWidened).
std::string describe(const HalfPlan& plan);

// The width-reuse blocks' shape (WgmmaReuseConfig; its launch asserts they agree): two
// m-tiles per warpgroup up to 64 channels (KERNEL_LOG "64 channels on one m-tile": one m-tile for
// 64 channels was 12 % slower on 68), one above; 32 producer row slots x 18.
constexpr int width_reuse_m_tiles(int channels) { return channels <= 64 ? 2 : 1; }
constexpr int width_reuse_block_positions(int channels) {
  return 128 * width_reuse_m_tiles(channels);
}
constexpr int kWidthReuseMaxTileRows = 32 * 18;

}  // namespace ct3d::cuda
