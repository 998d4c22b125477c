// The CPU's planner: which form each op of a layer takes, the one place that chooses
// (the entry points conv_transpose3d_cpu.cpp and conv_transpose3d_backward_cpu.cpp, and
// ct3d.explain, ask it). A pure function of the layer's geometry, the CPU (AVX-512 or
// not, and the option cpu_isa) and the tests' forced forms (forced_form.h: cpu-direct,
// cpu-gather, cpu-scatter).
#pragma once

#include <string>

#include "ops/common/conv_geometry.h"

namespace ct3d::cpu {

enum class CpuForm {
  kDirectCorrelation,  // direct_correlation.h: stride 1, no GEMM (forward, input gradient)
  kScatterGemm,        // scatter_forward.h: the input-stationary forward
  kGatherGemm,         // the output-stationary (phase-gathering) forward
  kShiftedGemm,        // the gradients' GEMMs over grad_output split by stride residue
};

struct CpuPlan {
  CpuForm forward = CpuForm::kGatherGemm;
  CpuForm input_gradient = CpuForm::kShiftedGemm;
  CpuForm weight_gradient = CpuForm::kShiftedGemm;
  // The GEMMs on ct3d's AVX-512 kernel (gemm_avx512.h), else on BLAS: has_avx512(),
  // which the shifted GEMMs' calls ask as they multiply (one answer per process and
  // option, so the plan and the kernels agree).
  bool avx512_gemm = false;
};

// The rules: on an AVX-512 CPU a stride-1 layer's forward and input gradient run as
// direct correlations (as fast as the GEMM forms or faster on every stride-1 shape of
// the CPU table, 3x on the 16-channel ones: KERNEL_LOG "a direct stride-1
// correlation"); a strided forward runs input-stationary where that multiplies fewer
// products than the gather (scatter_forward_products); without AVX-512, the gather and
// the shifted GEMMs on BLAS.
CpuPlan plan_cpu(const ConvGeometry& geometry);

// The three lines ct3d.explain prints ("forward: ...\ninput gradient: ...\nweight
// gradient: ...\n").
std::string describe(const CpuPlan& plan);

}  // namespace ct3d::cpu
