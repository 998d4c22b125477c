// The gathering GEMMs' reduction step, shared by the host's plans and the kernels.
#pragma once

namespace ct3d::cuda {

constexpr int kBlockK = 16;  // input channels of one tap per pipeline stage

}  // namespace ct3d::cuda
