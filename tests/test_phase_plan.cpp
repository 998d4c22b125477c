// The stride-phase plan must reproduce o = i * stride - padding + k * dilation.
#include <random>
#include <set>

#include "catch.h"
#include "ops/common/phase_plan.h"

TEST_CASE("phases cover every output index once and every landing tap") {
  std::mt19937 rng(12345);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 500; ++trial) {
    const int64_t in = pick(1, 9), kernel = pick(1, 7), stride = pick(1, 4), dilation = pick(1, 3);
    const int64_t padding = pick(0, 4), output_padding = pick(0, std::max(stride, dilation) - 1);
    const int64_t out =
        (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1;
    if (out <= 0) continue;
    const auto phases = ct3d::plan_phases({in, out, kernel, stride, padding, dilation});
    REQUIRE(static_cast<int64_t>(phases.size()) == stride);

    int64_t covered = 0;
    std::set<std::pair<int64_t, int64_t>> planned;  // (output index, kernel tap)
    for (const auto& phase : phases) {
      covered += phase.positions;
      for (int64_t q = 0; q < phase.positions; ++q) {
        const int64_t o = q * stride + phase.residue;
        for (size_t t = 0; t < phase.taps.size(); ++t) {
          const int64_t i = q + phase.input_shift[t];
          if (i >= 0 && i < in) {
            CHECK(i * stride - padding + phase.taps[t] * dilation == o);
            planned.insert({o, phase.taps[t]});
          }
        }
      }
    }
    CHECK(covered == out);
    // Every (input, tap) pair that lands inside the output appears in the plan.
    for (int64_t i = 0; i < in; ++i) {
      for (int64_t k = 0; k < kernel; ++k) {
        const int64_t o = i * stride - padding + k * dilation;
        if (o >= 0 && o < out) CHECK(planned.count({o, k}) == 1);
      }
    }
  }
}
