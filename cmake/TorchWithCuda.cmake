# torch's own CMake package, for a build with the CUDA kernels: it adds the CUDA
# libraries and the -gencode flags of TORCH_CUDA_ARCH_LIST. Sets TORCH_LIBRARIES.
list(APPEND CMAKE_PREFIX_PATH "${CT3D_TORCH_CMAKE_PREFIX}")
# torch's CMake config finds CUDA through the old FindCUDA module: point it at the
# toolkit of the nvcc in use. A toolkit without NVRTC (a compiler-only install) can
# borrow the one that ships in the pip wheels torch depends on.
find_package(CUDAToolkit REQUIRED)
if(NOT CUDA_TOOLKIT_ROOT_DIR)
  get_filename_component(CUDA_TOOLKIT_ROOT_DIR "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
find_library(CUDA_nvrtc_LIBRARY nvrtc HINTS "${CUDAToolkit_LIBRARY_DIR}")
if(NOT CUDA_nvrtc_LIBRARY)
  file(GLOB _ct3d_wheel_nvrtc
       "${CT3D_TORCH_DIR}/../nvidia/cu*/lib/libnvrtc.so*"
       "${CT3D_TORCH_DIR}/../nvidia/cuda_nvrtc/lib/libnvrtc.so*")
  if(_ct3d_wheel_nvrtc)
    list(SORT _ct3d_wheel_nvrtc)
    list(GET _ct3d_wheel_nvrtc 0 _ct3d_wheel_nvrtc)
    set(CUDA_nvrtc_LIBRARY "${_ct3d_wheel_nvrtc}" CACHE FILEPATH "NVRTC from the torch wheels" FORCE)
  endif()
endif()
find_package(Torch REQUIRED)
