// Where the wgmma mainloop (wgmma_kernel.cuh) finds each packed weight, in both
// directions; host and device code, so the unit tests can check the round trip.
//
// One (tap, 16-channel chunk) block of packed weights holds, for blocks of n output
// channels: [channel block][hi, lo][k-step s][8-channel group][half][channel % 8][e]
// for in-chunk input channel kk with e = kk / 4, s = kk / 2 % 2, half = kk % 2. That
// is wgmma's K-major core matrices (8 channels x 4 values), the two halves of a
// k-step 128 bytes apart and the 8-channel groups 256 bytes apart, in the K order
// under which a lane's values of a staged row are 4 consecutive floats.
#pragma once

#include "ops/common/conv_geometry.h"  // CT3D_HOST_DEVICE

namespace ct3d::cuda {

constexpr int kWgmmaChunkChannels = 16;  // = kBlockK: input channels per stage

struct WgmmaWeightElement {
  int channel;   // output channel, within the block's (tap, chunk)
  int in_chunk;  // input channel within the chunk, 0..15
  bool lo;       // the TF32 low part (else the high part)
};

CT3D_HOST_DEVICE int wgmma_weight_offset(int channel, int in_chunk, bool lo, int n) {
  const int block = channel / n, cb = channel % n;
  const int e = in_chunk >> 2, s = (in_chunk >> 1) & 1, half = in_chunk & 1;
  return block * n * 2 * kWgmmaChunkChannels + (lo ? n * kWgmmaChunkChannels : 0) +
         ((s * (n / 8) + cb / 8) * 2 + half) * 32 + (cb % 8) * 4 + e;
}

CT3D_HOST_DEVICE WgmmaWeightElement wgmma_weight_element(int offset, int n) {
  const int block = offset / (2 * kWgmmaChunkChannels * n);
  int rest = offset % (2 * kWgmmaChunkChannels * n);
  const bool lo = rest >= kWgmmaChunkChannels * n;
  rest %= kWgmmaChunkChannels * n;
  const int e = rest & 3, row = (rest >> 2) & 7;
  int core = rest >> 5;
  const int half = core & 1;
  core >>= 1;
  const int group8 = core % (n / 8), s = core / (n / 8);
  return {block * n + group8 * 8 + row, 4 * e + 2 * s + half, lo};
}

}  // namespace ct3d::cuda
