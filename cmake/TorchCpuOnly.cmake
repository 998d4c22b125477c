# torch's headers and CPU libraries, for a build without the CUDA kernels. torch's
# own CMake package cannot serve here: a CUDA build of torch asks it for a CUDA
# toolkit, which a CPU-only build is made precisely because it lacks. Sets
# TORCH_LIBRARIES (an interface target with torch's include folders, C++ ABI and
# the libraries the CPU kernels link).
add_library(ct3d_torch_cpu INTERFACE)
target_include_directories(ct3d_torch_cpu SYSTEM INTERFACE
  "${CT3D_TORCH_DIR}/include"
  "${CT3D_TORCH_DIR}/include/torch/csrc/api/include")
target_compile_definitions(ct3d_torch_cpu INTERFACE
  _GLIBCXX_USE_CXX11_ABI=${CT3D_TORCH_CXX11_ABI})
foreach(_ct3d_lib torch torch_cpu c10)
  find_library(CT3D_TORCH_LIB_${_ct3d_lib} ${_ct3d_lib}
               PATHS "${CT3D_TORCH_DIR}/lib" NO_DEFAULT_PATH REQUIRED)
  target_link_libraries(ct3d_torch_cpu INTERFACE "${CT3D_TORCH_LIB_${_ct3d_lib}}")
endforeach()
set(TORCH_LIBRARIES ct3d_torch_cpu)
