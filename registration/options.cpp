// ct3d::set_option and ct3d::options: the user's options (ops/options/options.h) from Python,
// torch.ops.ct3d.set_option("winograd", "off"), as ct3d.set_option wraps them.
#include "ops/options/options.h"

#include <torch/library.h>

#include <string>

namespace {

void set_option(std::string name, std::string value) { ct3d::set_option(name, value); }

std::string describe() { return ct3d::describe_options(); }

}  // namespace

TORCH_LIBRARY_FRAGMENT(ct3d, m) {
  m.def("set_option(str name, str value) -> ()", &set_option);
  m.def("options() -> str", &describe);
}
