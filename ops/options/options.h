// The options a user sets on purpose (README, "Options"): one structure for the
// process, read from the environment when the library loads and settable between
// calls through the op ct3d::set_option (Python: ct3d.set_option). Which kernel form
// runs is the rules' choice, not an option; `force_form` pins one for the tests
// (forced_form.h).
#pragma once

#include <cstdint>
#include <string>

namespace ct3d {

enum class WinogradUse { kAuto, kOff };
enum class CpuIsa { kAuto, kGeneric };

struct Options {
  // CT3D_MAX_CAPABILITY ("8.0", "9.0"): the device is taken for at most this compute
  // capability (runs the Ampere-class kernels on a Hopper GPU); 0: the device's own.
  int max_capability = 0;
  // CT3D_WINOGRAD (auto|off): Winograd's transforms where the rule takes them, or never.
  WinogradUse winograd = WinogradUse::kAuto;
  // CT3D_WINOGRAD_WORKSPACE_MIB: the most memory Winograd's transformed tensors take
  // per chunk of samples; 0: the rule's (winograd_forward.cu).
  int64_t winograd_workspace_mib = 0;
  // CT3D_CPU_ISA (auto|generic): generic leaves ct3d's AVX-512 kernels aside and runs
  // the CPU forms on BLAS alone.
  CpuIsa cpu_isa = CpuIsa::kAuto;
  // CT3D_FORCE_FORM (tests only): forms of forced_form.cpp's table, by index, in the
  // order given (a comma-separated list: "tap-columns,half-widened").
  static constexpr int kMaxForcedForms = 4;
  int forced_forms[kMaxForcedForms] = {};
  int forced_count = 0;
};

// The current options: an immutable snapshot, read without a lock (set_option publishes
// a new one; a call keeps reading the one it started with if it holds the reference).
const Options& options();

// Sets one option by its name (the environment variable's, without CT3D_ and in lower
// case: "max_capability", "winograd", ...) from its text; an empty value restores the
// default. A name or value it does not know raises an error that lists the valid ones.
void set_option(const std::string& name, const std::string& value);

// "name=value" per option, one a line (ct3d.options()).
std::string describe_options();

}  // namespace ct3d
