# Whether this build holds the CUDA kernels. CT3D_CUDA=AUTO (the default) builds
# them where both a CUDA toolkit and a CUDA build of torch are found, and otherwise
# builds the CPU path alone, saying why; ON stops with that reason instead; OFF
# builds the CPU path alone. Sets CT3D_WITH_CUDA.
set(CT3D_CUDA "AUTO" CACHE STRING "Build the CUDA kernels: AUTO, ON or OFF")
set_property(CACHE CT3D_CUDA PROPERTY STRINGS AUTO ON OFF)
# nvcc 12.0 is the first that assembles every instruction the Hopper kernels use
# (wgmma, setmaxnreg, the bulk tensor copies) and knows C++20.
set(CT3D_MIN_NVCC_VERSION 12.0)

set(CT3D_WITH_CUDA OFF)
set(_ct3d_no_cuda_reason "")
if(CT3D_CUDA STREQUAL "OFF")
  set(_ct3d_no_cuda_reason "CT3D_CUDA=OFF")
elseif(CT3D_TORCH_CUDA STREQUAL "")
  set(_ct3d_no_cuda_reason
      "torch ${CT3D_TORCH_VERSION} is a CPU build (torch.version.cuda is None)")
else()
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
     AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    set(_ct3d_no_cuda_reason "no CUDA toolkit was found (no nvcc on PATH, in \
/usr/local/cuda/bin, CUDACXX or CMAKE_CUDA_COMPILER)")
  endif()
endif()

if(_ct3d_no_cuda_reason STREQUAL "")
  set(CT3D_WITH_CUDA ON)
elseif(CT3D_CUDA STREQUAL "ON")
  message(FATAL_ERROR "CT3D_CUDA=ON, but ${_ct3d_no_cuda_reason}.")
elseif(CT3D_CUDA STREQUAL "OFF")
  message(STATUS "ct3d: building the CPU path only (CT3D_CUDA=OFF)")
else()
  message(WARNING
    "ct3d: building the CPU path only: ${_ct3d_no_cuda_reason}. "
    "torch.ops.ct3d.conv_transpose3d will run on CPU tensors and reject CUDA tensors. "
    "For the GPU kernels install a CUDA toolkit (nvcc ${CT3D_MIN_NVCC_VERSION} or newer) "
    "beside a CUDA build of torch and rebuild.")
endif()
