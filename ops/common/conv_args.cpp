#include "ops/common/conv_args.h"

namespace ct3d {

namespace {

std::vector<c10::SymInt> activation_shape(const ConvTranspose3dArgs& args, int64_t channels,
                                          const std::array<c10::SymInt, kSpatialDims>& extents) {
  std::vector<c10::SymInt> shape;
  if (args.batched) {
    shape.push_back(args.batch);
  }
  shape.emplace_back(channels);
  shape.insert(shape.end(), extents.begin(), extents.end());
  return shape;
}

}  // namespace

std::vector<c10::SymInt> ConvTranspose3dArgs::input_shape() const {
  return activation_shape(*this, in_channels, input_size);
}

std::vector<c10::SymInt> ConvTranspose3dArgs::output_shape() const {
  return activation_shape(*this, out_channels, output_size);
}

std::vector<c10::SymInt> ConvTranspose3dArgs::weight_shape() const {
  return {c10::SymInt(in_channels), c10::SymInt(out_channels_per_group()),
          c10::SymInt(kernel_size[0]), c10::SymInt(kernel_size[1]), c10::SymInt(kernel_size[2])};
}

Int3 ConvTranspose3dArgs::concrete_input_size() const {
  return {input_size[0].expect_int(), input_size[1].expect_int(), input_size[2].expect_int()};
}

Int3 ConvTranspose3dArgs::concrete_output_size() const {
  return {output_size[0].expect_int(), output_size[1].expect_int(), output_size[2].expect_int()};
}

}  // namespace ct3d
