# Asks the Python interpreter for the torch it has: its version, the CUDA it was
# built for (empty for a CPU build), its CMake prefix, its folder and C++ ABI.
# Sets CT3D_TORCH_VERSION, CT3D_TORCH_CUDA, CT3D_TORCH_DIR, CT3D_TORCH_CMAKE_PREFIX
# and CT3D_TORCH_CXX11_ABI, or stops with a message that says what to install.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
execute_process(
  COMMAND ${Python3_EXECUTABLE} -c
    "import os, torch, torch.utils; print(torch.__version__); print(torch.version.cuda or ''); print(torch.utils.cmake_prefix_path); print(os.path.dirname(torch.__file__)); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
  OUTPUT_VARIABLE _ct3d_torch_facts
  ERROR_VARIABLE _ct3d_torch_error
  RESULT_VARIABLE _ct3d_torch_result
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _ct3d_torch_result EQUAL 0)
  message(FATAL_ERROR
    "ct3d builds against an installed PyTorch, but `${Python3_EXECUTABLE} -c 'import torch'` "
    "failed:\n${_ct3d_torch_error}\n"
    "Install torch first (pip install torch), then build ct3d with "
    "`pip install --no-build-isolation .`.")
endif()
string(REPLACE "\n" ";" _ct3d_torch_facts "${_ct3d_torch_facts}")
list(GET _ct3d_torch_facts 0 CT3D_TORCH_VERSION)
list(GET _ct3d_torch_facts 1 CT3D_TORCH_CUDA)
list(GET _ct3d_torch_facts 2 CT3D_TORCH_CMAKE_PREFIX)
list(GET _ct3d_torch_facts 3 CT3D_TORCH_DIR)
list(GET _ct3d_torch_facts 4 CT3D_TORCH_CXX11_ABI)
# "CUDA: 13.0" reads oddly as a list element when empty.
if(CT3D_TORCH_CUDA STREQUAL "")
  set(CT3D_TORCH_CUDA "")
endif()
if(CT3D_TORCH_VERSION VERSION_LESS 2.4)
  message(FATAL_ERROR "ct3d needs torch 2.4 or newer, found torch ${CT3D_TORCH_VERSION}")
endif()
