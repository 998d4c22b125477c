// ct3d::explain on the CPU: which form each op takes for a layer's tensors (the rules of
// conv_transpose3d_cpu.cpp and conv_transpose3d_backward_cpu.cpp), computing nothing.
#include <string>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/conv_transpose3d.h"
#include "ops/cpu/direct_correlation.h"
#include "ops/cpu/gemm_avx512.h"
#include "ops/cpu/scatter_forward.h"

namespace ct3d {

std::string explain_cpu(const at::Tensor& input, const at::Tensor& weight,
                        const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                        c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                        c10::SymInt groups, c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args = check_conv_transpose3d_args(input, weight, bias, stride, padding,
                                                               output_padding, groups, dilation);
  const ConvGeometry geometry = geometry_of(args);
  const bool direct = cpu::use_direct_correlation(geometry);
  const char* gemm = cpu::has_avx512() ? "ct3d's AVX-512 GEMM" : "BLAS";
  // Text by concatenation, not iostreams (ops/common/error_message.h says why).
  const std::string forward = direct ? "direct correlation"
                              : cpu::use_scatter_forward(geometry)
                                  ? "input-stationary (scatter) GEMM"
                                  : "output-stationary (gather) GEMM";
  return "forward: " + forward + (direct ? "" : std::string(" on ") + gemm) + "\ninput gradient: " +
         (direct ? std::string("direct correlation") : std::string("shifted GEMM on ") + gemm) +
         "\nweight gradient: shifted GEMM on " + gemm + "\n";
}

}  // namespace ct3d
