#include "ops/cpu/cpu_plan.h"

#include "ops/cpu/gemm_avx512.h"
#include "ops/cpu/scatter_forward.h"
#include "ops/options/form_choice.h"

namespace ct3d::cpu {
namespace {

bool stride_one(const ConvGeometry& g) {
  for (const DimGeometry& d : g.dim) {
    if (d.stride != 1) return false;
  }
  return true;
}

const char* form_name(CpuForm form) {
  switch (form) {
    case CpuForm::kDirectCorrelation:
      return "direct correlation";
    case CpuForm::kScatterGemm:
      return "input-stationary (scatter) GEMM";
    case CpuForm::kGatherGemm:
      return "output-stationary (gather) GEMM";
    case CpuForm::kShiftedGemm:
      return "shifted GEMM";
  }
  return "";
}

}  // namespace

CpuPlan plan_cpu(const ConvGeometry& geometry) {
  CpuPlan plan;
  plan.avx512_gemm = has_avx512();
  // Both need AVX-512 (the direct correlation's kernels, the scatter's GEMM).
  if (!plan.avx512_gemm) return plan;
  if (stride_one(geometry) && form_choice(FormSwitch::kCpuDirect) != FormChoice::kNever) {
    plan.forward = plan.input_gradient = CpuForm::kDirectCorrelation;
    return plan;
  }
  const FormChoice scatter = form_choice(FormSwitch::kCpuScatter);
  const bool scatter_pays =
      scatter == FormChoice::kRule
          ? scatter_forward_products(geometry) < gather_forward_products(geometry)
          : scatter == FormChoice::kAlways;
  if (scatter_pays) plan.forward = CpuForm::kScatterGemm;
  return plan;
}

std::string describe(const CpuPlan& plan) {
  // Text by concatenation, not iostreams (ops/common/error_message.h says why).
  const std::string gemm = plan.avx512_gemm ? " on ct3d's AVX-512 GEMM" : " on BLAS";
  const auto line = [&](const char* op, CpuForm form) {
    return std::string(op) + ": " + form_name(form) +
           (form == CpuForm::kDirectCorrelation ? "" : gemm) + "\n";
  };
  return line("forward", plan.forward) + line("input gradient", plan.input_gradient) +
         line("weight gradient", plan.weight_gradient);
}

}  // namespace ct3d::cpu
