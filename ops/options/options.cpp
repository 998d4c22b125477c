#include "ops/options/options.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ops/common/error_message.h"
#include "ops/options/forced_form.h"

namespace ct3d {
namespace {

struct OptionText {
  const char* name;      // set_option's name; the variable is CT3D_ + its upper case
  const char* variable;  // the environment variable read when the library loads
  const char* values;    // what it takes, for the error message
};

constexpr OptionText kOptions[] = {
    {"max_capability", "CT3D_MAX_CAPABILITY", "a compute capability such as 8.0 or 9.0"},
    {"winograd", "CT3D_WINOGRAD", "auto or off"},
    {"winograd_workspace_mib", "CT3D_WINOGRAD_WORKSPACE_MIB", "a whole number of MiB, at least 1"},
    {"cpu_isa", "CT3D_CPU_ISA", "auto or generic"},
    {"force_form", "CT3D_FORCE_FORM", "forms' names, comma-separated (tests only)"},
};

std::string all_names() {
  std::string names;
  for (const OptionText& option : kOptions) {
    if (!names.empty()) names += ", ";
    names += option.name;
  }
  return names;
}

[[noreturn]] void bad_value(const OptionText& option, const std::string& value) {
  TORCH_CHECK(false, detail::message("ct3d option ", option.name, " (", option.variable,
                                     "): expected ", option.values, ", got '", value, "'"));
}

// "8.0" or "80" -> 80.
int parse_capability(const OptionText& option, const std::string& value) {
  int major = 0, minor = 0;
  char rest = 0;
  if (std::sscanf(value.c_str(), "%d.%d%c", &major, &minor, &rest) == 2 && major > 0 &&
      minor >= 0 && minor < 10) {
    return 10 * major + minor;
  }
  char* end = nullptr;
  const long plain = std::strtol(value.c_str(), &end, 10);
  if (end != value.c_str() && *end == '\0' && plain >= 10 && plain < 1000) {
    return static_cast<int>(plain);
  }
  bad_value(option, value);
}

void apply(Options& options, const OptionText& option, const std::string& value) {
  const std::string name = option.name;
  if (name == "max_capability") {
    options.max_capability = value.empty() ? 0 : parse_capability(option, value);
  } else if (name == "winograd") {
    if (value.empty() || value == "auto") {
      options.winograd = WinogradUse::kAuto;
    } else if (value == "off" || value == "0") {
      options.winograd = WinogradUse::kOff;
    } else {
      bad_value(option, value);
    }
  } else if (name == "winograd_workspace_mib") {
    char* end = nullptr;
    const long long mib = value.empty() ? 0 : std::strtoll(value.c_str(), &end, 10);
    if (!value.empty() && (end == value.c_str() || *end != '\0' || mib < 1 || mib > (1 << 24))) {
      bad_value(option, value);
    }
    options.winograd_workspace_mib = mib;
  } else if (name == "cpu_isa") {
    if (value.empty() || value == "auto") {
      options.cpu_isa = CpuIsa::kAuto;
    } else if (value == "generic") {
      options.cpu_isa = CpuIsa::kGeneric;
    } else {
      bad_value(option, value);
    }
  } else if (name == "force_form") {
    Options forced;
    size_t start = 0;
    while (start < value.size()) {
      const size_t comma = std::min(value.find(',', start), value.size());
      if (forced.forced_count == Options::kMaxForcedForms) bad_value(option, value);
      forced.forced_forms[forced.forced_count++] =
          forced_form_index(value.substr(start, comma - start));
      start = comma + 1;
    }
    std::copy(forced.forced_forms, forced.forced_forms + Options::kMaxForcedForms,
              options.forced_forms);
    options.forced_count = forced.forced_count;
  }
}

const OptionText& option_named(const std::string& name) {
  for (const OptionText& option : kOptions) {
    if (name == option.name) return option;
  }
  TORCH_CHECK(false,
              detail::message("ct3d has no option '", name, "'; its options are ", all_names()));
}

// The environment's options, read once (a bad value raises when the first call asks).
Options from_environment() {
  Options options;
  for (const OptionText& option : kOptions) {
    const char* value = std::getenv(option.variable);
    if (value != nullptr) apply(options, option, value);
  }
  return options;
}

// Every call asks the options at several places, so a read takes no lock: the current
// options are an immutable snapshot behind an atomic pointer. set_option (rare: the tests,
// the A/B scripts) publishes a new one under the writers' lock; the snapshots it replaces
// stay alive (a few dozen bytes each), since a call may still be reading one.
std::mutex writers_mutex;
std::atomic<const Options*> published{nullptr};
std::vector<std::unique_ptr<const Options>> snapshots;  // under writers_mutex

// Publishes `value` as the current options (the caller holds writers_mutex).
const Options& publish(const Options& value) {
  snapshots.push_back(std::make_unique<const Options>(value));
  published.store(snapshots.back().get(), std::memory_order_release);
  return *snapshots.back();
}

// The published options, read from the environment on first use (a bad value raises,
// and the next call tries again).
const Options& current_options() {
  if (const Options* current = published.load(std::memory_order_acquire)) return *current;
  std::lock_guard<std::mutex> lock(writers_mutex);
  if (const Options* current = published.load(std::memory_order_acquire)) return *current;
  return publish(from_environment());
}

}  // namespace

const Options& options() { return current_options(); }

void set_option(const std::string& name, const std::string& value) {
  const OptionText& option = option_named(name);
  current_options();  // the environment's first (a bad value there raises here)
  std::lock_guard<std::mutex> lock(writers_mutex);
  Options changed = *published.load(std::memory_order_acquire);
  apply(changed, option, value);
  publish(changed);
}

std::string describe_options() {
  const Options& o = options();
  std::string text;
  const auto line = [&](const char* name, const std::string& value) {
    text += std::string(name) + "=" + value + "\n";
  };
  line("max_capability", o.max_capability == 0 ? std::string("device")
                                               : std::to_string(o.max_capability / 10) + "." +
                                                     std::to_string(o.max_capability % 10));
  line("winograd", o.winograd == WinogradUse::kAuto ? "auto" : "off");
  line("winograd_workspace_mib", o.winograd_workspace_mib == 0
                                     ? std::string("auto")
                                     : std::to_string(o.winograd_workspace_mib));
  line("cpu_isa", o.cpu_isa == CpuIsa::kAuto ? "auto" : "generic");
  std::string forced;
  for (int i = 0; i < o.forced_count; ++i) {
    if (i > 0) forced += ',';
    forced += forced_form_name(o.forced_forms[i]);
  }
  line("force_form", forced);
  return text;
}

}  // namespace ct3d
