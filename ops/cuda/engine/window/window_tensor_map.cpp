#include "ops/cuda/engine/window/window_tensor_map.h"

#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

namespace ct3d::cuda {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver's encoder, found through the runtime once (no link to libcuda).
EncodeTiled encoder() {
  static const EncodeTiled encode = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
    const cudaError_t status = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function,
                                                                12000, cudaEnableDefault, &found);
#else  // before CUDA 12.5: the entry point of the driver's own version
    const cudaError_t status =
        cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &function, cudaEnableDefault, &found);
#endif
    TORCH_CHECK(status == cudaSuccess && found == cudaDriverEntryPointSuccess && function,
                "ct3d: the CUDA driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<EncodeTiled>(function);
  }();
  return encode;
}

}  // namespace

bool channels_fit_boxes(int64_t groups, int64_t channels_per_group) {
  // A stage's box holds 16 channels (8 with two m-tiles): with one group the channels
  // past the source read zero; with more, a box must not reach the next group's.
  return groups == 1 || channels_per_group % 16 == 0;
}

bool source_fits_boxes(const at::Tensor& source, int64_t groups, int64_t channels_per_group) {
  return source.scalar_type() == at::kFloat && source.dim() == 5 && source.numel() > 0 &&
         source.is_contiguous() && reinterpret_cast<uintptr_t>(source.const_data_ptr()) % 16 == 0 &&
         channels_fit_boxes(groups, channels_per_group);
}

namespace {

// The map of `source` (N, C, D, H, W contiguous float32) as a 5-D tensor, innermost
// first (W, H, D, C, N), boxes `box` in that order, out-of-bounds elements read as zero.
CUtensorMap encode_ncdhw_map(const at::Tensor& source, const cuuint32_t (&box)[5]) {
  CUtensorMap map{};
  const cuuint64_t extents[5] = {
      static_cast<cuuint64_t>(source.size(4)), static_cast<cuuint64_t>(source.size(3)),
      static_cast<cuuint64_t>(source.size(2)), static_cast<cuuint64_t>(source.size(1)),
      static_cast<cuuint64_t>(source.size(0))};
  // Bytes between consecutive elements of dimensions 1-4 (contiguous source).
  cuuint64_t strides[4];
  cuuint64_t stride = 4;
  for (int i = 0; i < 4; ++i) {
    stride *= extents[i];
    strides[i] = stride;
  }
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUresult status = encoder()(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 5, const_cast<void*>(source.const_data_ptr()), extents,
      strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  TORCH_CHECK(status == CUDA_SUCCESS, "ct3d: cuTensorMapEncodeTiled failed (", status,
              ") for a source of sizes ", source.sizes(), " and a box of ", box[0], " x ", box[1],
              " x ", box[2], " x ", box[3], " x ", box[4]);
  return map;
}

}  // namespace

CUtensorMap encode_window_map(const at::Tensor& source, int box_width, int box_lines,
                              int box_channels) {
  const cuuint32_t box[5] = {static_cast<cuuint32_t>(box_width), static_cast<cuuint32_t>(box_lines),
                             1, static_cast<cuuint32_t>(box_channels), 1};
  return encode_ncdhw_map(source, box);
}

}  // namespace ct3d::cuda
