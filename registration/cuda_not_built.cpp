// For a library built without its CUDA kernels (CMake found no CUDA toolkit, or
// torch is a CPU build): CUDA tensors get an error that says so and how to fix it,
// not the dispatcher's "could not run ... with arguments from the 'CUDA' backend".
#include <torch/library.h>

#include <string>

namespace {

[[noreturn]] void refuse(const char* op) {
  TORCH_CHECK(false, op,
              ": this ct3d library was built without its CUDA kernels (no CUDA toolkit, or a "
              "CPU build of torch, at build time), so it takes CPU tensors only; rebuild ct3d "
              "beside a CUDA toolkit and a CUDA build of torch to run it on the GPU");
}

at::Tensor forward(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                   c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymInt,
                   c10::SymIntArrayRef) {
  refuse("ct3d::conv_transpose3d");
}

at::Tensor input_backward(const at::Tensor&, const at::Tensor&, c10::SymIntArrayRef,
                          c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymInt,
                          c10::SymIntArrayRef) {
  refuse("ct3d::conv_transpose3d_input_backward");
}

at::Tensor weight_backward(const at::Tensor&, const at::Tensor&, c10::SymIntArrayRef,
                           c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymInt,
                           c10::SymIntArrayRef) {
  refuse("ct3d::conv_transpose3d_weight_backward");
}

std::string explain(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                    c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymInt,
                    c10::SymIntArrayRef) {
  refuse("ct3d::explain");
}

}  // namespace

TORCH_LIBRARY_IMPL(ct3d, CUDA, m) {
  m.impl("conv_transpose3d", &forward);
  m.impl("conv_transpose3d_input_backward", &input_backward);
  m.impl("conv_transpose3d_weight_backward", &weight_backward);
  m.impl("explain", &explain);
}
