// The planner of the weight gradient's mainloop: the one place that chooses whether a
// call's weight gradient runs on wgmma (sm_90a) or mma.sync, with which block shape and
// stages, and whether a second launch takes the lines' last positions. A pure host
// function of the plan of the call (weight_gradient_plan.h: the fold and the staged
// layouts), the device and a few facts of the call's tensors; the launchers
// (weight_gradient_launch.cu, weight_gradient_wgmma_launch.cu) launch what it plans.
#pragma once

#include <string>

#include "ops/cuda/engine/planner/device_info.h"
#include "ops/cuda/engine/planner/weight_gradient_split.h"
#include "ops/cuda/engine/weight_gradient/weight_gradient_plan.h"
#include "ops/cuda/engine/weight_gradient/wgmma_weight_gradient_problem.h"

namespace ct3d::cuda {

enum class WgradForm {
  kWgmma,    // sm_90a: 3xTF32 for float32, one product for float16 / bfloat16
  kMmaSync,  // float32 on any tensor-core GPU (weight_gradient_kernel.cuh)
  kWidened,  // float16 / bfloat16 the wgmma form does not take: float32 on widened copies
};

const char* wgrad_form_name(WgradForm form);

// The facts of a call's tensors that choose the mainloop.
struct WgradOperands {
  int element_bytes = 4;  // 4: float32; 2: float16 or bfloat16
  // The input's data (as the kernel reads it, contiguous) is 16-byte aligned: the wgmma
  // form loads a line's positions 16 bytes at a time.
  bool input_aligned = true;
  // The fused backward hands the staged grad_output to the input gradient, which reads
  // it in the staging's own layout, not at the wgmma segments' pitch.
  bool shares_staged_output = false;
};

// One launch of the wgmma kernel: its problem, the block's input channels (wgmma N) and
// m-tiles per compute warpgroup; fits: within the kernel's shared-memory slots, pairs
// and grid.
struct WgmmaWgradLaunch {
  WgradWgmmaProblem p{};
  int channels = 0, m_tiles = 0;  // (the stage's positions: p.positions)
  int max_pairs = 0;
  bool fits = false;
  WgradSplit split;  // of a chunk's reduction (plan_wgmma_wgrad_split)
};

struct WgradMainloopPlan {
  WgradForm form = WgradForm::kMmaSync;
  // The call's plan as the mainloop stages grad_output (kWgmma: at its segments' pitch
  // where a pair's segment is copied whole).
  WeightGradientPlan staged;
  // kWgmma: the launch over the lines' width tiles, and where with_tail, a second one
  // over the lines' last positions on 16-position stages.
  WgmmaWgradLaunch launch;
  bool with_tail = false;
  WgmmaWgradLaunch tail;
  // kMmaSync: m-tiles of 16 input channels a block covers (1 to 4), and the split of a
  // chunk's reduction (plan_mma_wgrad_split).
  int mma_m_tiles = 0;
  WgradSplit mma_split;
  // Samples staged a chunk (kWgmma and kMmaSync): their staged copies (grad_output's, and
  // kMmaSync's staged input) within staged.staging_floats. The fused backward runs the
  // input gradient's chunks on the same samples.
  int64_t chunk_samples = 0;
};

// The mainloop of the call planned by `plan` (within weight_gradient_fits' limits).
WgradMainloopPlan plan_weight_gradient_mainloop(const WeightGradientPlan& plan,
                                                const DeviceInfo& device,
                                                const WgradOperands& operands);

// The fused backward's rule: whether handing the staged grad_output to the input
// gradient pays (on sm_90a the wgmma weight gradient then reads it in cp.async pieces,
// not by one bulk copy a pair, which only strided layers below 64 input channels make
// up for; KERNEL_LOG "shares its staged grad_output").
bool sharing_staged_output_pays(const WeightGradientPlan& plan, const DeviceInfo& device);

// One line, as ct3d.explain prints it.
std::string describe(const WgradMainloopPlan& plan);

}  // namespace ct3d::cuda
