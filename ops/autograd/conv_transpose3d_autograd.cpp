// Autograd for ct3d: one torch::autograd::Function per op. Every gradient is
// computed by ct3d's own ops, called through the dispatcher, so the backward is
// itself differentiable (gradgradcheck) and runs on ct3d's kernels. The forward's
// backward is one call of the all-gradients op (conv_transpose3d_backward), whose
// autograd kernel (below) runs its composite form when its own gradient is needed.
//
// With y = T(x, w) (the forward), C(g, w) = input_backward and W(x, g) =
// weight_backward, all three bilinear:
//   T: dx = C(g, w),  dw = W(x, g),  db = sum of g over batch and positions
//   C(g, w) with upstream u (shaped like x): dg = T(u, w),  dw = W(u, g)
//   W(x, g) with upstream v (shaped like w): dx = C(g, v),  dg = T(x, v)
#include "ops/autograd/conv_transpose3d_autograd.h"

#include <torch/autograd.h>

#include <vector>

#include "ops/composite/op_handles.h"

namespace ct3d {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The parameters every op shares, kept in the autograd context.
struct Params {
  std::vector<c10::SymInt> stride, padding, dilation;
  c10::SymInt groups;

  void save(AutogradContext* ctx) const {
    ctx->saved_data["stride"] = c10::SymIntArrayRef(stride);
    ctx->saved_data["padding"] = c10::SymIntArrayRef(padding);
    ctx->saved_data["dilation"] = c10::SymIntArrayRef(dilation);
    ctx->saved_data["groups"] = groups;
  }

  static Params load(AutogradContext* ctx) {
    return {ctx->saved_data["stride"].toSymIntVector(), ctx->saved_data["padding"].toSymIntVector(),
            ctx->saved_data["dilation"].toSymIntVector(), ctx->saved_data["groups"].toSymInt()};
  }
};

std::vector<c10::SymInt> to_vector(c10::SymIntArrayRef values) {
  return std::vector<c10::SymInt>(values.begin(), values.end());
}

// A parameter list of 1 or 3 values, as 3 values.
c10::SymInt value_at(const std::vector<c10::SymInt>& values, int i) {
  return values.size() == 1 ? values[0] : values[i];
}

// T(x, w) whose output has the spatial size of `like`: output_padding is whatever
// makes the sizes match (it was valid for the original forward).
at::Tensor transposed_conv_like(const at::Tensor& x, const at::Tensor& w, const at::Tensor& like,
                                const Params& p) {
  std::vector<c10::SymInt> output_padding;
  for (int i = 0; i < 3; ++i) {
    const c10::SymInt input_extent = x.sym_size(2 + i);
    const c10::SymInt kernel = w.sym_size(2 + i);
    const c10::SymInt natural = (input_extent - 1) * value_at(p.stride, i) -
                                2 * value_at(p.padding, i) +
                                value_at(p.dilation, i) * (kernel - 1) + 1;
    output_padding.push_back(like.sym_size(2 + i) - natural);
  }
  return forward_op().call(x, w, std::nullopt, p.stride, p.padding, output_padding, p.groups,
                           p.dilation);
}

at::Tensor input_backward(const at::Tensor& grad_output, const at::Tensor& weight,
                          const at::Tensor& like_input, const Params& p) {
  return input_backward_op().call(grad_output, weight, like_input.sym_sizes().slice(2), p.stride,
                                  p.padding, p.groups, p.dilation);
}

at::Tensor weight_backward(const at::Tensor& input, const at::Tensor& grad_output,
                           const at::Tensor& like_weight, const Params& p) {
  return weight_backward_op().call(input, grad_output, like_weight.sym_sizes().slice(2), p.stride,
                                   p.padding, p.groups, p.dilation);
}

class ConvTranspose3dFunction : public torch::autograd::Function<ConvTranspose3dFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& weight,
                            const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                            c10::SymIntArrayRef padding, c10::SymIntArrayRef output_padding,
                            c10::SymInt groups, c10::SymIntArrayRef dilation) {
    at::AutoDispatchBelowADInplaceOrView guard;
    at::Tensor output =
        forward_op().call(input, weight, bias, stride, padding, output_padding, groups, dilation);
    ctx->save_for_backward({input, weight});
    Params{to_vector(stride), to_vector(padding), to_vector(dilation), groups}.save(ctx);
    // Gradient slots exist only for tensors that were passed (not for bias=None).
    ctx->saved_data["has_bias"] = bias.has_value() && bias->defined();
    return output;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const Params p = Params::load(ctx);
    // The backward ops are batched only: give unbatched (4-D) calls a batch of 1.
    const bool unbatched = saved[0].dim() == 4;
    const at::Tensor input = unbatched ? saved[0].unsqueeze(0) : saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor grad = unbatched ? grad_outputs[0].unsqueeze(0) : grad_outputs[0];
    const bool needs_bias = ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2);
    auto [grad_input, grad_weight, grad_bias] =
        backward_op().call(grad, input, weight, p.stride, p.padding, p.groups, p.dilation,
                           {ctx->needs_input_grad(0), ctx->needs_input_grad(1), needs_bias});
    if (unbatched && grad_input.defined()) grad_input = grad_input.squeeze(0);
    return {grad_input,   grad_weight,  grad_bias,    at::Tensor(),
            at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// Forward of a backward op: runs it below autograd and keeps its two tensor inputs
// and the shared parameters for its own backward.
at::Tensor run_backward_op(AutogradContext* ctx,
                           const c10::TypedOperatorHandle<BackwardSignature>& op,
                           const at::Tensor& first, const at::Tensor& second,
                           c10::SymIntArrayRef sizes, c10::SymIntArrayRef stride,
                           c10::SymIntArrayRef padding, const c10::SymInt& groups,
                           c10::SymIntArrayRef dilation) {
  at::AutoDispatchBelowADInplaceOrView guard;
  at::Tensor result = op.call(first, second, sizes, stride, padding, groups, dilation);
  ctx->save_for_backward({first, second});
  Params{to_vector(stride), to_vector(padding), to_vector(dilation), groups}.save(ctx);
  return result;
}

// A backward op's gradients: its two tensors, then nothing for its 5 parameters.
variable_list tensor_gradients(at::Tensor first, at::Tensor second) {
  return {std::move(first), std::move(second), at::Tensor(), at::Tensor(),
          at::Tensor(),     at::Tensor(),      at::Tensor()};
}

class InputBackwardFunction : public torch::autograd::Function<InputBackwardFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& grad_output,
                            const at::Tensor& weight, c10::SymIntArrayRef input_size,
                            c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                            c10::SymInt groups, c10::SymIntArrayRef dilation) {
    return run_backward_op(ctx, input_backward_op(), grad_output, weight, input_size, stride,
                           padding, groups, dilation);
  }

  // Upstream u is shaped like the convolution's input: dg = T(u, w), dw = W(u, g).
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const Params p = Params::load(ctx);
    const at::Tensor &grad_output = saved[0], &weight = saved[1], &upstream = grad_outputs[0];
    at::Tensor d_grad_output, d_weight;
    if (ctx->needs_input_grad(0)) {
      d_grad_output = transposed_conv_like(upstream, weight, grad_output, p);
    }
    if (ctx->needs_input_grad(1)) d_weight = weight_backward(upstream, grad_output, weight, p);
    return tensor_gradients(d_grad_output, d_weight);
  }
};

class WeightBackwardFunction : public torch::autograd::Function<WeightBackwardFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input,
                            const at::Tensor& grad_output, c10::SymIntArrayRef kernel_size,
                            c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                            c10::SymInt groups, c10::SymIntArrayRef dilation) {
    return run_backward_op(ctx, weight_backward_op(), input, grad_output, kernel_size, stride,
                           padding, groups, dilation);
  }

  // Upstream v is shaped like the weight: dx = C(g, v), dg = T(x, v).
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const Params p = Params::load(ctx);
    const at::Tensor &input = saved[0], &grad_output = saved[1], &upstream = grad_outputs[0];
    at::Tensor d_input, d_grad_output;
    if (ctx->needs_input_grad(0)) d_input = input_backward(grad_output, upstream, input, p);
    if (ctx->needs_input_grad(1)) {
      d_grad_output = transposed_conv_like(input, upstream, grad_output, p);
    }
    return tensor_gradients(d_input, d_grad_output);
  }
};

}  // namespace

at::Tensor conv_transpose3d_autograd(const at::Tensor& input, const at::Tensor& weight,
                                     const std::optional<at::Tensor>& bias,
                                     c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                     c10::SymIntArrayRef output_padding, c10::SymInt groups,
                                     c10::SymIntArrayRef dilation) {
  return ConvTranspose3dFunction::apply(input, weight, bias, stride, padding, output_padding,
                                        std::move(groups), dilation);
}

Gradients conv_transpose3d_backward_autograd(const at::Tensor& grad_output, const at::Tensor& input,
                                             const at::Tensor& weight, c10::SymIntArrayRef stride,
                                             c10::SymIntArrayRef padding, c10::SymInt groups,
                                             c10::SymIntArrayRef dilation,
                                             std::array<bool, 3> output_mask) {
  // Differentiated itself (create_graph): the composite form, whose two ops carry
  // their own autograd. Otherwise the backend's kernel, fused where it has one.
  const bool differentiable =
      at::GradMode::is_enabled() &&
      (grad_output.requires_grad() || input.requires_grad() || weight.requires_grad());
  if (differentiable) {
    return conv_transpose3d_backward_composite(grad_output, input, weight, stride, padding,
                                               std::move(groups), dilation, output_mask);
  }
  at::AutoDispatchBelowADInplaceOrView guard;
  return backward_op().call(grad_output, input, weight, stride, padding, std::move(groups),
                            dilation, output_mask);
}

at::Tensor conv_transpose3d_input_backward_autograd(const at::Tensor& grad_output,
                                                    const at::Tensor& weight,
                                                    c10::SymIntArrayRef input_size,
                                                    c10::SymIntArrayRef stride,
                                                    c10::SymIntArrayRef padding, c10::SymInt groups,
                                                    c10::SymIntArrayRef dilation) {
  return InputBackwardFunction::apply(grad_output, weight, input_size, stride, padding,
                                      std::move(groups), dilation);
}

at::Tensor conv_transpose3d_weight_backward_autograd(
    const at::Tensor& input, const at::Tensor& grad_output, c10::SymIntArrayRef kernel_size,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, c10::SymInt groups,
    c10::SymIntArrayRef dilation) {
  return WeightBackwardFunction::apply(input, grad_output, kernel_size, stride, padding,
                                       std::move(groups), dilation);
}

}  // namespace ct3d
