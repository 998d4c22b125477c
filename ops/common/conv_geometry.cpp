#include "ops/common/conv_geometry.h"

namespace ct3d {

ConvGeometry geometry_of(const ConvTranspose3dArgs& args) {
  ConvGeometry g;
  g.batch = args.batch.expect_int();
  g.in_channels = args.in_channels;
  g.out_channels = args.out_channels;
  g.groups = args.groups;
  const Int3 input = args.concrete_input_size(), output = args.concrete_output_size();
  for (int i = 0; i < kSpatialDims; ++i) {
    g.dim[i] = {input[i],       output[i],       args.kernel_size[i],
                args.stride[i], args.padding[i], args.dilation[i]};
  }
  return g;
}

}  // namespace ct3d
