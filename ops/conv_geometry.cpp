#include "ops/conv_geometry.h"

namespace ct3d {
namespace {

ConvGeometry make_geometry(const c10::SymInt& batch, int64_t in_channels, int64_t out_channels,
                           int64_t groups, const Int3& input, const Int3& output,
                           const Int3& kernel, const Int3& stride, const Int3& padding,
                           const Int3& dilation) {
  ConvGeometry g;
  g.batch = batch.expect_int();
  g.in_channels = in_channels;
  g.out_channels = out_channels;
  g.groups = groups;
  for (int i = 0; i < kSpatialDims; ++i) {
    g.dim[i] = {input[i], output[i], kernel[i], stride[i], padding[i], dilation[i]};
  }
  return g;
}

}  // namespace

ConvGeometry geometry_of(const ConvTranspose3dArgs& args) {
  return make_geometry(args.batch, args.in_channels, args.out_channels, args.groups,
                       args.concrete_input_size(), args.concrete_output_size(), args.kernel_size,
                       args.stride, args.padding, args.dilation);
}

ConvGeometry geometry_of(const BackwardProblem& problem) {
  return make_geometry(problem.batch, problem.in_channels, problem.out_channels, problem.groups,
                       problem.concrete_in_size(), problem.concrete_out_size(), problem.kernel,
                       problem.stride, problem.padding, problem.dilation);
}

}  // namespace ct3d
