// ct3d::explain on the CPU: the form each op takes for a layer's tensors, as the CPU's
// planner (cpu_plan.h) chooses it for the ops, computing nothing.
#include <string>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/conv_transpose3d.h"
#include "ops/cpu/cpu_plan.h"

namespace ct3d {

std::string explain_cpu(const at::Tensor& input, const at::Tensor& weight,
                        const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                        c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                        c10::SymInt groups, c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args = check_conv_transpose3d_args(input, weight, bias, stride, padding,
                                                               output_padding, groups, dilation);
  return cpu::describe(cpu::plan_cpu(geometry_of(args)));
}

}  // namespace ct3d
