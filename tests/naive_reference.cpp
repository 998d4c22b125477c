#include "naive_reference.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include <random>

namespace ct3d::test {

at::Tensor naive_conv_transpose3d(const at::Tensor& input_any, const at::Tensor& weight_any,
                                  const at::Tensor& bias_any, const ConvCase& c) {
  const at::Tensor x = input_any.to(at::kCPU, at::kDouble).contiguous();
  const at::Tensor w = weight_any.to(at::kCPU, at::kDouble).contiguous();
  std::array<int64_t, 3> out{};
  for (int i = 0; i < 3; ++i) {
    out[i] = (c.input[i] - 1) * c.stride[i] - 2 * c.padding[i] + c.dilation[i] * (c.kernel[i] - 1) +
             c.output_padding[i] + 1;
  }
  at::Tensor y = at::zeros({c.batch, c.out_channels, out[0], out[1], out[2]}, at::kDouble);
  auto X = x.accessor<double, 5>();
  auto W = w.accessor<double, 5>();
  auto Y = y.accessor<double, 5>();
  const int64_t cin_g = c.in_channels / c.groups, cout_g = c.out_channels / c.groups;
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t ic = 0; ic < c.in_channels; ++ic)
      for (int64_t id = 0; id < c.input[0]; ++id)
        for (int64_t ih = 0; ih < c.input[1]; ++ih)
          for (int64_t iw = 0; iw < c.input[2]; ++iw)
            for (int64_t j = 0; j < cout_g; ++j)
              for (int64_t kd = 0; kd < c.kernel[0]; ++kd)
                for (int64_t kh = 0; kh < c.kernel[1]; ++kh)
                  for (int64_t kw = 0; kw < c.kernel[2]; ++kw) {
                    const int64_t od = id * c.stride[0] - c.padding[0] + kd * c.dilation[0];
                    const int64_t oh = ih * c.stride[1] - c.padding[1] + kh * c.dilation[1];
                    const int64_t ow = iw * c.stride[2] - c.padding[2] + kw * c.dilation[2];
                    if (od < 0 || oh < 0 || ow < 0 || od >= out[0] || oh >= out[1] || ow >= out[2])
                      continue;
                    const int64_t oc = (ic / cin_g) * cout_g + j;
                    Y[n][oc][od][oh][ow] += X[n][ic][id][ih][iw] * W[ic][j][kd][kh][kw];
                  }
  if (bias_any.defined()) {
    y += bias_any.to(at::kCPU, at::kDouble).view({1, -1, 1, 1, 1});
  }
  return y;
}

std::array<at::Tensor, 3> random_tensors(const ConvCase& c, at::ScalarType dtype, uint64_t seed) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto opts = at::TensorOptions().dtype(at::kDouble);
  at::Tensor x = at::randn({c.batch, c.in_channels, c.input[0], c.input[1], c.input[2]}, gen, opts);
  at::Tensor w = at::randn(
      {c.in_channels, c.out_channels / c.groups, c.kernel[0], c.kernel[1], c.kernel[2]}, gen, opts);
  at::Tensor b = c.bias ? at::randn({c.out_channels}, gen, opts) : at::Tensor();
  return {x.to(dtype), w.to(dtype), b.defined() ? b.to(dtype) : b};
}

double relative_error(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor a64 = a.to(at::kCPU, at::kDouble), b64 = b.to(at::kCPU, at::kDouble);
  return (a64 - b64).norm().item<double>() / std::max(b64.norm().item<double>(), 1e-300);
}

ConvCase random_case(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  ConvCase c{};
  c.groups = pick(1, 3);
  c.batch = pick(1, 2);
  c.in_channels = c.groups * pick(1, 3);
  c.out_channels = c.groups * pick(1, 3);
  c.bias = pick(0, 1) == 1;
  for (int i = 0; i < 3; ++i) {
    c.input[i] = pick(1, 5);
    c.kernel[i] = pick(1, 3);
    c.stride[i] = pick(1, 3);
    c.dilation[i] = pick(1, 2);
    c.output_padding[i] = pick(0, std::max(c.stride[i], c.dilation[i]) - 1);
    c.padding[i] = pick(0, 2);
    const int64_t out = (c.input[i] - 1) * c.stride[i] - 2 * c.padding[i] +
                        c.dilation[i] * (c.kernel[i] - 1) + c.output_padding[i] + 1;
    if (out <= 0) c.padding[i] = 0;
  }
  return c;
}

}  // namespace ct3d::test
