// Error messages built without iostreams.
//
// TORCH_CHECK formats its arguments with a std::ostringstream compiled into the
// calling library. On the H200 image (gcc 13 headers, torch 2.11, Python 3.12) the
// Python process runs another libstdc++ than the one those headers describe, and
// formatting an integer through the stream crashed the process (SIGSEGV in
// ostream::_M_insert<long>, 2026-11-30). Building the text with std::to_string and
// string concatenation, and handing TORCH_CHECK one finished string, avoids that.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/core/SymInt.h>
#include <c10/core/SymIntArrayRef.h>
#include <c10/util/Exception.h>

#include <string>
#include <type_traits>

namespace ct3d::detail {

inline void append(std::string& text, const char* value) { text += value; }
inline void append(std::string& text, const std::string& value) { text += value; }
inline void append(std::string& text, at::ScalarType value) { text += c10::toString(value); }
inline void append(std::string& text, const c10::Device& value) { text += value.str(); }

template <typename Integer, typename = std::enable_if_t<std::is_integral_v<Integer>>>
void append(std::string& text, Integer value) {
  text += std::to_string(value);
}

inline void append(std::string& text, const c10::SymInt& value) {
  const auto concrete = value.maybe_as_int();
  text += concrete ? std::to_string(*concrete) : std::string("<symbolic>");
}

template <typename T>
void append(std::string& text, c10::ArrayRef<T> values) {
  text += "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ", ";
    append(text, values[i]);
  }
  text += "]";
}

template <typename... Args>
std::string message(const Args&... args) {
  std::string text;
  (append(text, args), ...);
  return text;
}

}  // namespace ct3d::detail

// TORCH_CHECK / TORCH_SYM_CHECK whose message is formatted only on failure, by
// ct3d::detail::message.
#define CT3D_CHECK(condition, ...) TORCH_CHECK(condition, ::ct3d::detail::message(__VA_ARGS__))
#define CT3D_SYM_CHECK(condition, ...) \
  TORCH_SYM_CHECK(condition, ::ct3d::detail::message(__VA_ARGS__))
