// The half forms' shared-memory layouts (ops/cuda/engine/staging/half_stage_layout.h): every
// piece of a row has its own place in the row, and each 8-row ldmatrix phase falls in
// 8 different groups of 4 banks (no conflicts).
#include <set>

#include "catch.h"
#include "ops/cuda/engine/staging/half_stage_layout.h"

using ct3d::cuda::bulk_staging_pitch;
using ct3d::cuda::half_segment_pitch;
using ct3d::cuda::half_stage_piece_offset;

namespace {

template <int kPieces>
void check_stage_rows() {
  for (int row = 0; row < 512; ++row) {
    std::set<uint32_t> places;
    for (int piece = 0; piece < kPieces; ++piece) {
      const uint32_t offset = half_stage_piece_offset<kPieces>(row, piece);
      CHECK(offset % 16 == 0);
      CHECK(offset >= static_cast<uint32_t>(row * 16 * kPieces));
      CHECK(offset < static_cast<uint32_t>((row + 1) * 16 * kPieces));
      places.insert(offset);
    }
    CHECK(static_cast<int>(places.size()) == kPieces);
  }
  // ldmatrix: rows r0..r0 + 7 (r0 a multiple of 8) of one piece.
  for (int row0 = 0; row0 < 512; row0 += 8) {
    for (int piece = 0; piece < kPieces; ++piece) {
      std::set<uint32_t> groups;
      for (int r = 0; r < 8; ++r) {
        groups.insert(half_stage_piece_offset<kPieces>(row0 + r, piece) / 16 % 8);
      }
      CHECK(groups.size() == 8);
    }
  }
}

}  // namespace

TEST_CASE("the half gathering stage's rows: a place per piece, ldmatrix phases conflict-free") {
  check_stage_rows<2>();
  check_stage_rows<4>();
}

TEST_CASE("the half weight gradient's segment pitch") {
  for (int64_t channels = 1; channels <= 300; ++channels) {
    for (const int64_t stride : {1, 2, 3, 4}) {
      const int64_t pitch = half_segment_pitch(channels, stride);
      CHECK(pitch >= channels);
      CHECK(pitch % 8 == 0);
      CHECK(pitch < channels + 24);
      // The 8 rows of an ldmatrix.trans phase: positions 0..7, stride x pitch apart;
      // conflict-free where any pitch could be (odd strides), else at stride 1.
      const int64_t step = stride % 2 == 1 ? stride : 1;
      std::set<int64_t> groups;
      for (int64_t i = 0; i < 8; ++i) groups.insert(i * step * pitch * 2 / 16 % 8);
      CHECK(groups.size() == 8);
      // Bulk staging: that pitch, where the padding is none or small.
      const int64_t bulk = bulk_staging_pitch(channels, stride);
      CHECK((bulk == 0 || bulk == pitch));
      CHECK((bulk != 0) == (pitch == (channels + 7) / 8 * 8 || channels >= 48));
    }
  }
}
