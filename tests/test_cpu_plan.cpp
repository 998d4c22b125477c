// The CPU's planner (ops/cpu/cpu_plan.h): the direct correlation for stride-1 layers and
// the input-stationary forward where it multiplies fewer products, on AVX-512 CPUs; the
// gather and the shifted GEMMs on BLAS elsewhere (the option cpu_isa=generic stands for a
// CPU without AVX-512); the tests' forced forms. Pure host code.
#include "ops/cpu/cpu_plan.h"
#include "ops/cpu/gemm_avx512.h"
#include "ops/cpu/scatter_forward.h"
#include "ops/options/options.h"
#include "tests/catch.h"

namespace {

using ct3d::cpu::CpuForm;

ct3d::ConvGeometry layer(int64_t stride, int64_t kernel, int64_t extent) {
  ct3d::ConvGeometry g;
  g.batch = 2;
  g.in_channels = g.out_channels = 16;
  for (ct3d::DimGeometry& d : g.dim) {
    d = ct3d::DimGeometry{extent, (extent - 1) * stride + kernel, kernel, stride, 0, 1};
  }
  return g;
}

struct DefaultsAfter {
  ~DefaultsAfter() {
    ct3d::set_option("cpu_isa", "");
    ct3d::set_option("force_form", "");
  }
};

}  // namespace

TEST_CASE("the CPU planner: direct, scatter or gather by the rules", "[cpu]") {
  DefaultsAfter restore;
  const ct3d::ConvGeometry stride1 = layer(1, 3, 8), stride2 = layer(2, 3, 8);
  // Kernel 1: both forms multiply the same products, and the gather keeps the layer;
  // kernel 5 over 2 positions: the gather's halo products, the scatter's fewer.
  const ct3d::ConvGeometry exact = layer(2, 1, 8), haloed = layer(2, 5, 2);
  if (ct3d::cpu::has_avx512()) {
    const ct3d::cpu::CpuPlan direct = ct3d::cpu::plan_cpu(stride1);
    CHECK(direct.forward == CpuForm::kDirectCorrelation);
    CHECK(direct.input_gradient == CpuForm::kDirectCorrelation);
    CHECK(direct.weight_gradient == CpuForm::kShiftedGemm);
    CHECK(direct.avx512_gemm);
    for (const ct3d::ConvGeometry& g : {stride2, exact, haloed}) {
      const bool fewer = ct3d::cpu::scatter_forward_products(g) <
                         ct3d::cpu::gather_forward_products(g);
      CHECK(ct3d::cpu::plan_cpu(g).forward ==
            (fewer ? CpuForm::kScatterGemm : CpuForm::kGatherGemm));
      CHECK(ct3d::cpu::plan_cpu(g).input_gradient == CpuForm::kShiftedGemm);
    }
    CHECK(ct3d::cpu::plan_cpu(haloed).forward == CpuForm::kScatterGemm);
    CHECK(ct3d::cpu::plan_cpu(exact).forward == CpuForm::kGatherGemm);
    CHECK(ct3d::cpu::describe(direct) ==
          "forward: direct correlation\ninput gradient: direct correlation\n"
          "weight gradient: shifted GEMM on ct3d's AVX-512 GEMM\n");
    // The tests' forced forms.
    ct3d::set_option("force_form", "cpu-gather");
    CHECK(ct3d::cpu::plan_cpu(stride1).forward == CpuForm::kGatherGemm);
    CHECK(ct3d::cpu::plan_cpu(stride1).input_gradient == CpuForm::kShiftedGemm);
    CHECK(ct3d::cpu::plan_cpu(haloed).forward == CpuForm::kGatherGemm);
    ct3d::set_option("force_form", "cpu-scatter");
    CHECK(ct3d::cpu::plan_cpu(stride1).forward == CpuForm::kScatterGemm);
    CHECK(ct3d::cpu::plan_cpu(exact).forward == CpuForm::kScatterGemm);
    ct3d::set_option("force_form", "");
  }
  // Without AVX-512 (or with cpu_isa=generic): the gather and the shifted GEMMs, on BLAS.
  ct3d::set_option("cpu_isa", "generic");
  for (const ct3d::ConvGeometry& g : {stride1, stride2, exact, haloed}) {
    const ct3d::cpu::CpuPlan plan = ct3d::cpu::plan_cpu(g);
    CHECK(plan.forward == CpuForm::kGatherGemm);
    CHECK(plan.input_gradient == CpuForm::kShiftedGemm);
    CHECK_FALSE(plan.avx512_gemm);
  }
  CHECK(ct3d::cpu::describe(ct3d::cpu::plan_cpu(stride1)) ==
        "forward: output-stationary (gather) GEMM on BLAS\ninput gradient: shifted GEMM on "
        "BLAS\nweight gradient: shifted GEMM on BLAS\n");
}
