// The environment switches that pick between two mainloops (CT3D_WIDTH_REUSE,
// CT3D_WGRAD_WGMMA, CT3D_SHIFTED_WINDOW, CT3D_TAP_ROWS, CT3D_TAP_COLUMNS (the tap-rows
// form with its rows on N), CT3D_TAP_COLUMNS_RAW (that form's window unsplit, split in
// registers, against both operands from shared memory); for the
// half forms against the widened path, CT3D_HALF_WINDOW and CT3D_HALF_WGRAD): "0"
// never, any other value always where it applies, unset or empty where it measured
// faster. Read on every call, so that one benchmark process can time both mainloops.
#pragma once

#include <cstdlib>

namespace ct3d::cuda {

enum class MainloopSwitch { kNever, kAlways, kWherePays };

inline MainloopSwitch mainloop_switch(const char* variable) {
  const char* value = std::getenv(variable);
  if (value == nullptr || value[0] == '\0') return MainloopSwitch::kWherePays;
  return value[0] == '0' ? MainloopSwitch::kNever : MainloopSwitch::kAlways;
}

}  // namespace ct3d::cuda
