#include "ops/conv_geometry.h"

namespace ct3d {

ConvGeometry geometry_of(const ConvTranspose3dArgs& args) {
  ConvGeometry g;
  g.batch = args.batch.expect_int();
  g.in_channels = args.in_channels;
  g.out_channels = args.out_channels;
  g.groups = args.groups;
  const Int3 in = args.concrete_input_size(), out = args.concrete_output_size();
  for (int i = 0; i < kSpatialDims; ++i) {
    g.dim[i] = {in[i],           out[i], args.kernel_size[i], args.stride[i], args.padding[i],
                args.dilation[i]};
  }
  return g;
}

ConvGeometry geometry_of(const BackwardProblem& problem) {
  ConvGeometry g;
  g.batch = problem.batch.expect_int();
  g.in_channels = problem.in_channels;
  g.out_channels = problem.out_channels;
  g.groups = problem.groups;
  const Int3 in = problem.concrete_in_size(), out = problem.concrete_out_size();
  for (int i = 0; i < kSpatialDims; ++i) {
    g.dim[i] = {in[i],
                out[i],
                problem.kernel[i],
                problem.stride[i],
                problem.padding[i],
                problem.dilation[i]};
  }
  return g;
}

}  // namespace ct3d
