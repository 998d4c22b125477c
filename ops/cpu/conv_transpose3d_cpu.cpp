// CPU kernel: the stride-phase decomposition of the CUDA engine (ops/common/phase_plan.h),
// each phase a sum of dense GEMMs over shifted windows of the zero-padded input
// (shifted_gemm.h). Tasks (sample, group, phase, block of phase planes) own their
// outputs, so threads never share one; each keeps a tile of outputs and runs its
// GEMMs single-threaded, in a fixed order (the result does not depend on the
// thread count's scheduling).
#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "ops/common/conv_geometry.h"
#include "ops/common/conv_transpose3d_args.h"
#include "ops/common/error_message.h"
#include "ops/common/phase_plan.h"
#include "ops/common/reduced_precision.h"
#include "ops/conv_transpose3d.h"
#include "ops/cpu/cpu_plan.h"
#include "ops/cpu/direct_correlation.h"
#include "ops/cpu/scatter_forward.h"
#include "ops/cpu/shifted_gemm.h"

namespace ct3d {
namespace {

struct Phase {
  std::array<const PhaseDimPlan*, 3> dim;
};

template <typename scalar_t>
void conv_transpose3d_cpu_kernel(const ConvGeometry& g, const at::Tensor& input,
                                 const at::Tensor& weight, const scalar_t* bias,
                                 at::Tensor& output) {
  std::array<std::vector<PhaseDimPlan>, 3> plans;
  std::array<int64_t, 3> low{}, extent{};
  for (int i = 0; i < 3; ++i) {
    plans[i] = plan_phases(g.dim[i]);
    int64_t high = 0, most_positions = 0;
    for (const PhaseDimPlan& plan : plans[i]) {
      most_positions = std::max(most_positions, plan.positions);
      for (const int64_t shift : plan.input_shift) {
        low[i] = std::max(low[i], -shift);
        high = std::max(high, plan.positions - 1 + shift - (g.dim[i].input - 1));
      }
    }
    // A task's tile numbers its phase positions on the box's pitch, so the box is
    // at least as wide as every phase, also one that no tap reaches (its positions
    // are the bias alone: output_padding beside a dilated or strided kernel).
    extent[i] = std::max(g.dim[i].input + low[i] + high, most_positions);
  }
  const int64_t cin_g = g.in_channels_per_group(), cout_g = g.out_channels_per_group();
  const cpu::PaddedVolume padded = cpu::padded_copy(input, {1, 1, 1}, extent, low);
  const at::Tensor packed = cpu::tap_major_weights(weight, g.groups);

  std::vector<Phase> phases;
  for (const auto& pd : plans[0])
    for (const auto& ph : plans[1])
      for (const auto& pw : plans[2])
        if (pd.positions > 0 && ph.positions > 0 && pw.positions > 0)
          phases.push_back({{&pd, &ph, &pw}});
  // Per phase, its taps (kernel index and window offset at phase plane 0) and its
  // weights side by side: (group, cout_g, phase taps x cin_g).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> phase_taps(phases.size());
  std::vector<at::Tensor> phase_weights(phases.size());
  for (size_t ph = 0; ph < phases.size(); ++ph) {
    const PhaseDimPlan &pd = *phases[ph].dim[0], &pv = *phases[ph].dim[1], &pw = *phases[ph].dim[2];
    std::vector<at::Tensor> matrices;
    for (size_t td = 0; td < pd.taps.size(); ++td)
      for (size_t th = 0; th < pv.taps.size(); ++th)
        for (size_t tw = 0; tw < pw.taps.size(); ++tw) {
          const int64_t tap =
              (int64_t(pd.taps[td]) * g.dim[1].kernel + pv.taps[th]) * g.dim[2].kernel +
              pw.taps[tw];
          phase_taps[ph].push_back(
              {tap, padded.offset(pd.input_shift[td] + low[0], pv.input_shift[th] + low[1],
                                  pw.input_shift[tw] + low[2])});
          matrices.push_back(packed.select(1, tap));
        }
    if (!matrices.empty()) phase_weights[ph] = at::cat(matrices, 2);
  }
  const int64_t plane = padded.plane();
  const int64_t planes_per_tile =
      std::max<int64_t>(1, cpu::kTileBytes / (int64_t(sizeof(scalar_t)) * cout_g * plane));
  struct Task {
    int64_t n, group, phase, plane0;
  };
  std::vector<Task> tasks;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t group = 0; group < g.groups; ++group)
      for (int64_t ph = 0; ph < int64_t(phases.size()); ++ph)
        for (int64_t q0 = 0; q0 < phases[ph].dim[0]->positions; q0 += planes_per_tile)
          tasks.push_back({n, group, ph, q0});

  scalar_t* out = output.mutable_data_ptr<scalar_t>();
  const std::array<int64_t, 3> out_extent = {g.dim[0].output, g.dim[1].output, g.dim[2].output};
  const int64_t out_plane = out_extent[1] * out_extent[2];
  at::parallel_for(0, int64_t(tasks.size()), 1, [&](int64_t first, int64_t last) {
    std::vector<scalar_t> column_buffer;
    for (int64_t index = first; index < last; ++index) {
      const Task& task = tasks[index];
      const Phase& phase = phases[task.phase];
      const PhaseDimPlan &pd = *phase.dim[0], &ph = *phase.dim[1], &pw = *phase.dim[2];
      const int64_t tile_planes = std::min(planes_per_tile, pd.positions - task.plane0);
      const int64_t columns = tile_planes * plane;
      at::Tensor tile = at::empty({cout_g, columns}, output.options());
      const auto& taps_here = phase_taps[task.phase];
      // Depth taps are outermost in a phase's tap order: those whose windows read
      // only the zero halo for every plane of this tile are a prefix and a suffix,
      // skipped (a stride-1 layer's border planes have fewer taps).
      const int64_t per_depth_tap = int64_t(ph.taps.size() * pw.taps.size());
      int64_t first_tap = 0, end_tap = 0;
      for (size_t td = 0; td < pd.taps.size(); ++td) {
        const int64_t lowest = task.plane0 + pd.input_shift[td];
        const bool reaches = lowest + tile_planes > 0 && lowest < g.dim[0].input;
        if (!reaches) continue;
        if (end_tap == first_tap) first_tap = int64_t(td) * per_depth_tap;
        end_tap = (int64_t(td) + 1) * per_depth_tap;
      }
      const scalar_t* sample = cpu::volume_data<scalar_t>(padded, task.n, 0, task.group * cin_g);
      cpu::multiply_taps<scalar_t>(
          tile,
          end_tap == first_tap ? at::Tensor()
                               : phase_weights[task.phase]
                                     .select(0, task.group)
                                     .narrow(1, first_tap * cin_g, (end_tap - first_tap) * cin_g),
          end_tap - first_tap, cin_g,
          [&](int64_t t) { return sample + taps_here[first_tap + t].second + task.plane0 * plane; },
          padded.channel_stride(), column_buffer);
      const scalar_t* tile_data = tile.const_data_ptr<scalar_t>();
      // Valid phase positions only, to output index q * stride + residue.
      for (int64_t co = 0; co < cout_g; ++co) {
        const int64_t channel = task.group * cout_g + co;
        const scalar_t shift = bias != nullptr ? bias[channel] : scalar_t(0);
        scalar_t* out_channel =
            out + (task.n * g.out_channels + channel) * out_extent[0] * out_plane;
        const scalar_t* row_tile = tile_data + co * columns;
        for (int64_t qd = 0; qd < tile_planes; ++qd) {
          const int64_t od = (task.plane0 + qd) * g.dim[0].stride + pd.residue;
          for (int64_t qh = 0; qh < ph.positions; ++qh) {
            const int64_t oh = qh * g.dim[1].stride + ph.residue;
            scalar_t* out_row = out_channel + od * out_plane + oh * out_extent[2] + pw.residue;
            const scalar_t* tile_row = row_tile + qd * plane + qh * padded.extent[2];
            for (int64_t qw = 0; qw < pw.positions; ++qw) {
              out_row[qw * g.dim[2].stride] = tile_row[qw] + shift;
            }
          }
        }
      }
    }
  });
}

}  // namespace

at::Tensor conv_transpose3d_cpu(const at::Tensor& input, const at::Tensor& weight,
                                const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                                c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                                c10::SymInt groups, c10::SymIntArrayRef dilation) {
  const ConvTranspose3dArgs args = check_conv_transpose3d_args(input, weight, bias, stride, padding,
                                                               output_padding, groups, dilation);
  check_dtype_supported(input, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}, "CPU");
  CT3D_CHECK(input.is_cpu(), "conv_transpose3d (CPU kernel): input must be a CPU tensor, got ",
             input.device());
  if (is_reduced_precision(input)) {
    return conv_transpose3d_cpu(widened(input), widened(weight), widened(bias), stride, padding,
                                output_padding, groups, dilation)
        .to(input.scalar_type());
  }

  const at::Tensor input5 = (args.batched ? input : input.unsqueeze(0)).contiguous();
  const at::Tensor weight_c = weight.contiguous();
  const at::Tensor bias_c = args.has_bias ? bias->contiguous() : at::Tensor();
  // The kernel writes a contiguous tensor; a channels-last result is a copy of it.
  at::Tensor output = at::empty_symint(args.output_shape(), input.options());
  at::Tensor output5 = args.batched ? output : output.unsqueeze(0);
  const at::MemoryFormat memory_format = output_memory_format(args, input, weight);
  if (output.numel() > 0) {
    const ConvGeometry geometry = geometry_of(args);
    const cpu::CpuForm form = cpu::plan_cpu(geometry).forward;
    AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "ct3d_conv_transpose3d_cpu", [&] {
      const scalar_t* bias_data = args.has_bias ? bias_c.const_data_ptr<scalar_t>() : nullptr;
      switch (form) {
        case cpu::CpuForm::kDirectCorrelation:
          cpu::direct_forward<scalar_t>(geometry, input5, weight_c, bias_data, output5);
          break;
        case cpu::CpuForm::kScatterGemm:
          cpu::scatter_forward<scalar_t>(geometry, input5, weight_c, bias_data, output5);
          break;
        default:
          conv_transpose3d_cpu_kernel<scalar_t>(geometry, input5, weight_c, bias_data, output5);
      }
    });
  }
  return output.contiguous(memory_format);
}

}  // namespace ct3d
