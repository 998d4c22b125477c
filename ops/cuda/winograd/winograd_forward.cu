// Host side of the Winograd forward: the plan, the three transforms' launches around
// the engine's GEMM, and the exact rerun behind them for non-finite values.
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "ops/cuda/device_capability.h"
#include "ops/cuda/direct_kernel.h"
#include "ops/cuda/engine/gather/gather_operands.h"
#include "ops/cuda/engine/gather/implicit_gemm.h"
#include "ops/cuda/engine/instructions/wgmma_available.h"
#include "ops/cuda/engine/window/window_tensor_map.h"
#include "ops/cuda/winograd/winograd_forward.h"
#include "ops/cuda/winograd/winograd_transforms.cuh"
#include "ops/options/form_choice.h"
#include "ops/options/options.h"

namespace ct3d::cuda {
namespace {

constexpr int kTransformThreads = 128;
constexpr int64_t kMaxGridYZ = 65535;

// Calls f with the point counts as compile-time constants (1, 4, 6 or 8 each; not both 1).
template <class F>
void with_points(int points_h, int points_w, F&& f) {
  const auto along_w = [&](auto h) {
    switch (points_w) {
      case 1:
        if constexpr (decltype(h)::value != 1) f(h, std::integral_constant<int, 1>{});
        break;
      case 4:
        f(h, std::integral_constant<int, 4>{});
        break;
      case 6:
        f(h, std::integral_constant<int, 6>{});
        break;
      default:
        f(h, std::integral_constant<int, 8>{});
        break;
    }
  };
  switch (points_h) {
    case 1:
      along_w(std::integral_constant<int, 1>{});
      break;
    case 4:
      along_w(std::integral_constant<int, 4>{});
      break;
    case 6:
      along_w(std::integral_constant<int, 6>{});
      break;
    default:
      along_w(std::integral_constant<int, 8>{});
      break;
  }
}

// The outputs per tile: the kernel's default in both dimensions when forced on (the
// tests' force_form=winograd), and by the rule only where
// it was measured faster (KERNEL_LOG "Winograd F(m, r)"): both dimensions where both kernels have 3
// or 5 taps and the engine's reduction (input channels x depth taps) is at least kMinReduction,
// else the height alone where it has 5 taps. Below that reduction the GEMM's blocks are too short
// to pay for their loads and epilogue, and the width taps are better left to the engine's width-tap
// forms (L1-68, 32 channels x 3 depth taps: 8.97 ms in height alone against 10.55 in both).
constexpr int64_t kMinReduction = 192;

void requested_tiles(const ConvGeometry& g, FormChoice choice, int& tile_h, int& tile_w) {
  tile_h = default_winograd_tile(g.dim[1].kernel);
  tile_w = default_winograd_tile(g.dim[2].kernel);
  if (choice == FormChoice::kRule) {
    const auto measured = [](int64_t kernel) { return kernel == 3 || kernel == 5; };
    const bool both = measured(g.dim[1].kernel) && measured(g.dim[2].kernel) &&
                      g.in_channels_per_group() * g.dim[0].kernel >= kMinReduction;
    if (!both) {
      tile_w = 1;
      if (g.dim[1].kernel != 5) tile_h = 1;
    }
  }
}

void copy_matrix(const double (&from)[kMaxWinogradPoints][kMaxWinogradPoints],
                 float (&to)[kMaxWinogradPoints][kMaxWinogradPoints]) {
  for (int i = 0; i < kMaxWinogradPoints; ++i) {
    for (int j = 0; j < kMaxWinogradPoints; ++j) to[i][j] = static_cast<float>(from[i][j]);
  }
}

// The transformed weights' layout (winograd_weight_kernel): [group][cout_g][cin_g][taps].
WeightLayout winograd_weight_layout(const ConvGeometry& reduced) {
  const int64_t taps = reduced.taps();
  return WeightLayout{reduced.in_channels_per_group() * reduced.out_channels_per_group() * taps,
                      taps, reduced.in_channels_per_group() * taps};
}

// The least workspace a chunk may take (256 MiB): each chunk packs the transformed
// weights again, which on small layers cost more than the memory saved (KERNEL_LOG "Winograd F(m,
// r)": W-128-128-k5-s1 2.23 ms in chunks of 64 MiB, 1.28 in 256 MiB, 1.11 whole).
constexpr int64_t kMinWorkspaceFloats = int64_t{64} << 20;

// The workspace a call may take, in floats: the option winograd_workspace_mib where set
// (ops/options/options.h), else half the layer's input and output, at least
// kMinWorkspaceFloats. Unchunked, the transformed input and products (2.25x the input and
// the output for F(4, 3) in both dimensions) raised training steps' peak memory to 2-3x
// the default path's (KERNEL_LOG "Winograd F(m, r)").
int64_t workspace_budget_floats(const ConvGeometry& g) {
  const int64_t chosen_mib = options().winograd_workspace_mib;
  if (chosen_mib > 0) return chosen_mib << 18;
  return std::max<int64_t>((g.input_elements() + g.output_elements()) / 2, kMinWorkspaceFloats);
}

// Floats a sample of a chunk takes beyond the layer's own tensors: the transformed
// input (staged by the transform, or in planes that the engine stages again, counted
// twice for the split copy its stride-1 forms make) and the products.
int64_t workspace_floats_per_sample(const WinogradPlan& plan, const StagedLayout& layout,
                                    bool staged_here) {
  const ConvGeometry& r = plan.reduced;
  const int64_t planes = r.in_channels * r.dim[0].input * r.dim[1].input * r.dim[2].input;
  const int64_t staged = layout.staged_positions() * layout.padded_channels();
  const int64_t products = r.out_channels * r.dim[0].output * r.dim[1].output * r.dim[2].output;
  return (staged_here ? staged : planes + 2 * staged) + products;
}

unsigned blocks_for(int64_t positions) {
  return static_cast<unsigned>((positions + kTransformThreads - 1) / kTransformThreads);
}

at::Tensor transform_weights(const WinogradPlan& plan, const ConvGeometry& g,
                             const at::Tensor& weight, int* nonfinite, cudaStream_t stream) {
  WinogradWeightArgs a{};
  for (int i = 0; i < 2; ++i) {
    for (int r = 0; r < kMaxWinogradPoints; ++r) {
      for (int c = 0; c < kMaxWinogradPoints; ++c) {
        a.filter[i][r][c] = plan.dim[i].filter_transform[r][c];
      }
    }
  }
  for (int i = 0; i < 3; ++i) {
    a.kernel[i] = static_cast<int>(g.dim[i].kernel);
    a.reduced_kernel[i] = static_cast<int>(plan.reduced.dim[i].kernel);
  }
  a.in_channels_per_group = static_cast<int>(g.in_channels_per_group());
  a.out_channels_per_group = static_cast<int>(g.out_channels_per_group());
  const at::Tensor transformed =
      at::empty({plan.reduced.in_channels * a.out_channels_per_group * plan.reduced.taps()},
                weight.options());
  a.windows = static_cast<int>(transformed.numel() / plan.points());
  with_points(plan.dim[0].points, plan.dim[1].points, [&](auto h, auto w) {
    winograd_weight_kernel<decltype(h)::value, decltype(w)::value>
        <<<blocks_for(a.windows), kTransformThreads, 0, stream>>>(
            a, weight.const_data_ptr<float>(), transformed.mutable_data_ptr<float>(), nonfinite);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return transformed;
}

// The fields both transforms' arguments have: one side's matrices (BT of the input side,
// AT of the output side), tiles and extents.
template <class Args>
void set_tile_shape(Args& a, const WinogradPlan& plan, const ConvGeometry& g, bool input_side) {
  for (int i = 0; i < 2; ++i) {
    const WinogradDim& d = plan.dim[i];
    const DimGeometry& reduced = plan.reduced.dim[1 + i];
    copy_matrix(input_side ? d.input_transform : d.output_transform, a.transform[i]);
    a.tile[i] = d.tile;
    a.tiles[i] = static_cast<int>(input_side ? reduced.input : reduced.output);
  }
  const auto extent = [&](int i) {
    return static_cast<int>(input_side ? g.dim[i].input : g.dim[i].output);
  };
  a.depth = extent(0);
  a.height = extent(1);
  a.width = extent(2);
  a.plane_positions = a.depth * a.tiles[0] * a.tiles[1];
}

WinogradInputArgs input_args(const WinogradPlan& plan, const ConvGeometry& g) {
  WinogradInputArgs a{};
  set_tile_shape(a, plan, g, true);
  for (int i = 0; i < 2; ++i) a.input_offset[i] = static_cast<int>(plan.dim[i].input_offset);
  a.in_channels_per_group = g.in_channels_per_group();
  a.channels = g.in_channels;
  return a;
}

at::Tensor transform_input(const WinogradPlan& plan, const ConvGeometry& g, const at::Tensor& input,
                           int* nonfinite, cudaStream_t stream) {
  const WinogradInputArgs a = input_args(plan, g);
  at::Tensor transformed = at::empty(
      {g.batch, plan.reduced.in_channels, a.depth, a.tiles[0], a.tiles[1]}, input.options());
  const dim3 grid(blocks_for(a.plane_positions), static_cast<unsigned>(g.in_channels),
                  static_cast<unsigned>(g.batch));
  with_points(plan.dim[0].points, plan.dim[1].points, [&](auto h, auto w) {
    winograd_input_kernel<decltype(h)::value, decltype(w)::value>
        <<<grid, kTransformThreads, 0, stream>>>(a, input.const_data_ptr<float>(),
                                                 transformed.mutable_data_ptr<float>(), nonfinite);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return transformed;
}

// Whether the input transform may write the engine's staged source itself: both
// dimensions transformed (the engine then runs its gathering mainloop over depth taps
// only, the form it takes with a staged source) and no halo but the depth's.
bool stages_itself(const WinogradPlan& plan, const StagedLayout& layout) {
  return plan.dim[0].transformed() && plan.dim[1].transformed() &&
         layout.staged_extent[1] == layout.extent[1] &&
         layout.staged_extent[2] == layout.extent[2] &&
         layout.padded_channels_per_group % kStagedChannels == 0;
}

at::Tensor transform_input_staged(const WinogradPlan& plan, const ConvGeometry& g,
                                  const StagedLayout& layout, const at::Tensor& input,
                                  int* nonfinite, cudaStream_t stream) {
  const WinogradInputArgs a = input_args(plan, g);
  WinogradStagedArgs s{};
  s.padded_channels_per_group = layout.padded_channels_per_group;
  s.row_floats = layout.padded_channels();
  s.sample_floats = layout.staged_positions() * s.row_floats;
  const int64_t plane_rows = layout.staged_extent[1] * layout.staged_extent[2];
  s.halo_rows = layout.halo_low[0] * plane_rows;
  s.channel_chunks = static_cast<int>(layout.padded_channels_per_group / kStagedChannels);
  at::Tensor staged = at::empty({g.batch * s.sample_floats}, input.options());
  // The depth halo planes, below and above the input's: zero, read by the border taps.
  const int64_t high_rows =
      (layout.staged_extent[0] - layout.halo_low[0] - layout.extent[0]) * plane_rows;
  float* base = staged.mutable_data_ptr<float>();
  const size_t pitch = sizeof(float) * s.sample_floats;
  if (s.halo_rows > 0) {
    C10_CUDA_CHECK(cudaMemset2DAsync(base, pitch, 0, sizeof(float) * s.halo_rows * s.row_floats,
                                     g.batch, stream));
  }
  if (high_rows > 0) {
    C10_CUDA_CHECK(cudaMemset2DAsync(base + (s.halo_rows + a.plane_positions) * s.row_floats, pitch,
                                     0, sizeof(float) * high_rows * s.row_floats, g.batch, stream));
  }
  const dim3 grid((a.plane_positions + kStagedPositions - 1) / kStagedPositions,
                  static_cast<unsigned>(g.groups * s.channel_chunks),
                  static_cast<unsigned>(g.batch));
  const dim3 block(kStagedPositions, kStagedChannels);
  with_points(plan.dim[0].points, plan.dim[1].points, [&](auto h, auto w) {
    constexpr int kH = decltype(h)::value, kW = decltype(w)::value;
    if constexpr (kH > 1 && kW > 1) {
      auto kernel = winograd_staged_input_kernel<kH, kW>;
      const int shared_bytes = static_cast<int>(winograd_staged_shared_bytes<kH, kW>());
      C10_CUDA_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes));
      kernel<<<grid, block, shared_bytes, stream>>>(a, s, input.const_data_ptr<float>(), base,
                                                    nonfinite);
    }
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return staged;
}

void transform_output(const WinogradPlan& plan, const ConvGeometry& g, const at::Tensor& products,
                      const at::Tensor& bias, at::Tensor& output, int* nonfinite,
                      cudaStream_t stream) {
  WinogradOutputArgs a{};
  set_tile_shape(a, plan, g, false);
  a.out_channels_per_group = g.out_channels_per_group();
  a.channels = g.out_channels;
  for (int i = 0; i < 5; ++i) a.stride[i] = output.stride(i);
  // Vector stores where every row of a tile starts on a vector boundary: dense rows,
  // the other strides and the base aligned, tiles a multiple of the vector.
  a.vector_width = 1;
  for (const int width : {4, 2}) {
    bool aligned = a.stride[4] == 1 && a.tile[1] % width == 0 &&
                   reinterpret_cast<uintptr_t>(output.data_ptr()) % (4 * width) == 0;
    for (int i = 0; i < 4; ++i) aligned = aligned && a.stride[i] % width == 0;
    if (aligned) {
      a.vector_width = width;
      break;
    }
  }
  const dim3 grid(blocks_for(a.plane_positions), static_cast<unsigned>(g.out_channels),
                  static_cast<unsigned>(g.batch));
  with_points(plan.dim[0].points, plan.dim[1].points, [&](auto h, auto w) {
    winograd_output_kernel<decltype(h)::value, decltype(w)::value>
        <<<grid, kTransformThreads, 0, stream>>>(
            a, products.const_data_ptr<float>(),
            bias.defined() ? bias.const_data_ptr<float>() : nullptr,
            output.mutable_data_ptr<float>(), nonfinite);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// The transforms' grids (channels and samples on y and z, one plane's positions in
// 32-bit) and the engine's limits on its problem.
bool fits_launches(const WinogradPlan& plan, const ConvGeometry& g, const GatherProblem& problem,
                   const DeviceInfo& device) {
  const int64_t planes[2] = {
      g.dim[0].input * plan.reduced.dim[1].input * plan.reduced.dim[2].input,
      g.dim[0].output * plan.reduced.dim[1].output * plan.reduced.dim[2].output};
  for (int i = 0; i < 3; ++i) {
    if (g.dim[i].input >= INT_MAX || g.dim[i].output >= INT_MAX) return false;
  }
  const int64_t weight_windows = g.in_channels * g.out_channels_per_group() * plan.reduced.taps();
  return planes[0] < INT_MAX - kTransformThreads && planes[1] < INT_MAX - kTransformThreads &&
         weight_windows < INT_MAX - kTransformThreads && g.in_channels <= kMaxGridYZ &&
         g.out_channels <= kMaxGridYZ && g.batch <= kMaxGridYZ && device.engine &&
         implicit_gemm_fits(problem);
}

// The engine's problem of a plan: the reduced geometry's forward, on the transformed
// weights' layout.
GatherProblem winograd_problem(const WinogradPlan& plan) {
  GatherProblem problem = forward_gather(plan.reduced);
  problem.weight = winograd_weight_layout(plan.reduced);
  return problem;
}

}  // namespace

bool winograd_pays(const ConvGeometry& geometry, const DeviceInfo& device) {
  return device.wgmma && geometry.in_channels_per_group() >= 32 &&
         geometry.out_channels_per_group() >= 64;
}

std::optional<WinogradForwardPlan> plan_winograd_forward(const ConvGeometry& geometry,
                                                         const DeviceInfo& device,
                                                         bool output_contiguous) {
  const FormChoice choice = form_choice(FormSwitch::kWinograd);
  if (choice == FormChoice::kNever || !output_contiguous) return std::nullopt;
  if (choice == FormChoice::kRule && !winograd_pays(geometry, device)) return std::nullopt;
  int tile_h = 1, tile_w = 1;
  requested_tiles(geometry, choice, tile_h, tile_w);
  const std::optional<WinogradPlan> plan = plan_winograd(geometry, tile_h, tile_w);
  if (!plan || !fits_launches(*plan, geometry, winograd_problem(*plan), device)) {
    return std::nullopt;
  }
  const GatherProblem problem = winograd_problem(*plan);
  const StagedLayout layout = gather_staged_layout(problem);
  const bool staged_here = stages_itself(*plan, layout);
  const int64_t per_sample = workspace_floats_per_sample(*plan, layout, staged_here);
  const int64_t chunk =
      std::clamp<int64_t>(workspace_budget_floats(geometry) / per_sample, 1, geometry.batch);
  // A chunk's source: the staged copy the input transform writes (the gathering
  // mainloops read it, groups unfolded), or the transformed input, a fresh contiguous
  // tensor. No exact rerun behind the GEMM (the direct kernel could not read the
  // transformed weights' layout): groups are never folded.
  GemmOperands operands;
  operands.prestaged = staged_here;
  operands.source_fits_boxes =
      !staged_here && channels_fit_boxes(problem.groups, problem.reduce_channels);
  return WinogradForwardPlan{*plan, staged_here,
                             plan_chunk_gemms(problem, chunk, device, operands)};
}

void launch_winograd_forward(const WinogradForwardPlan& forward, const ConvGeometry& geometry,
                             const at::Tensor& input, const at::Tensor& weight,
                             const at::Tensor& bias, at::Tensor& output, cudaStream_t stream) {
  const WinogradPlan& plan = forward.transforms;

  // Set by any transform that meets a non-finite value; the direct kernel queued last
  // then recomputes the output exactly (and returns at once when it is not set).
  const at::Tensor nonfinite = at::zeros({1}, input.options().dtype(at::kInt));
  int* flag = nonfinite.mutable_data_ptr<int>();
  const at::Tensor transformed_weight = transform_weights(plan, geometry, weight, flag, stream);
  const StagedLayout layout = gather_staged_layout(winograd_problem(plan));
  // A chunk of samples at a time, as planned (workspace_budget_floats).
  const int64_t batch = geometry.batch;
  const int64_t chunk = forward.chunk_samples();
  TORCH_INTERNAL_ASSERT(chunk >= 1, "launch_winograd_forward: a plan without its chunks");
  for (int64_t n0 = 0; n0 < batch; n0 += chunk) {
    const int64_t samples = std::min(chunk, batch - n0);
    WinogradPlan part = plan;
    part.reduced.batch = samples;
    ConvGeometry part_geometry = geometry;
    part_geometry.batch = samples;
    const at::Tensor part_input = input.narrow(0, n0, samples);
    at::Tensor part_output = output.narrow(0, n0, samples);
    const ConvGeometry& reduced = part.reduced;
    at::Tensor products = at::empty({samples, reduced.out_channels, reduced.dim[0].output,
                                     reduced.dim[1].output, reduced.dim[2].output},
                                    input.options());
    const GemmPlan& gemm = forward.gemm.of_chunk(samples);
    if (forward.transform_stages_input) {
      const at::Tensor staged =
          transform_input_staged(part, part_geometry, layout, part_input, flag, stream);
      launch_gemm_plan(gemm, staged, transformed_weight, at::Tensor(), products, stream,
                       kUnlimitedStaging, nullptr, staged);
    } else {
      const at::Tensor transformed_input =
          transform_input(part, part_geometry, part_input, flag, stream);
      launch_gemm_plan(gemm, transformed_input, transformed_weight, at::Tensor(), products,
                       stream, kUnlimitedStaging);
    }
    transform_output(part, part_geometry, products, bias, part_output, flag, stream);
  }
  launch_direct_conv_transpose3d(geometry, input, weight, bias, output, stream, flag);
}

}  // namespace ct3d::cuda

namespace ct3d::cuda {

std::optional<ConvGeometry> input_gradient_as_forward(const ConvGeometry& geometry) {
  // grad_input[i] = sum over k of grad_output[i - p + k d] w[k]: with stride 1 the
  // transposed convolution of grad_output with the weights flipped, their channels
  // swapped within each group, and padding (k - 1) d - p, whose output extent is the
  // input's when there is no output padding.
  ConvGeometry swapped = geometry;
  swapped.in_channels = geometry.out_channels;
  swapped.out_channels = geometry.in_channels;
  for (int i = 0; i < 3; ++i) {
    const DimGeometry& d = geometry.dim[i];
    const int64_t padding = (d.kernel - 1) * d.dilation - d.padding;
    if (d.stride != 1 || padding < 0 ||
        d.output - (d.kernel - 1) * d.dilation + 2 * d.padding != d.input) {
      return std::nullopt;
    }
    swapped.dim[i] = DimGeometry{d.output, d.input, d.kernel, 1, padding, d.dilation};
  }
  return swapped;
}

void launch_winograd_input_gradient(const WinogradForwardPlan& plan,
                                    const ConvGeometry& geometry,
                                    const at::Tensor& grad_output, const at::Tensor& weight,
                                    at::Tensor& grad_input, cudaStream_t stream) {
  const std::optional<ConvGeometry> swapped = input_gradient_as_forward(geometry);
  TORCH_INTERNAL_ASSERT(swapped, "launch_winograd_input_gradient: not a stride-1 layer");
  const int64_t groups = geometry.groups;
  const at::Tensor swapped_weight =
      weight
          .view({groups, geometry.in_channels_per_group(), geometry.out_channels_per_group(),
                 geometry.dim[0].kernel, geometry.dim[1].kernel, geometry.dim[2].kernel})
          .transpose(1, 2)
          .flip({3, 4, 5})
          .reshape({geometry.out_channels, geometry.in_channels_per_group(), geometry.dim[0].kernel,
                    geometry.dim[1].kernel, geometry.dim[2].kernel})
          .contiguous();
  launch_winograd_forward(plan, *swapped, grad_output, swapped_weight, at::Tensor(), grad_input,
                          stream);
}

}  // namespace ct3d::cuda
