// GridSample's attributes and per-axis sampling taps, shared by the reference kernel and the CPU
// device's, so that both sample exactly alike (padding, rounding, Keys' cubic weights).
#pragma once

#include <array>
#include <cstdint>

#include "core/graph/graph.h"
#include "core/status.h"

namespace chipfit {

enum class GridMode { kNearest, kLinear, kCubic };
enum class GridPadding { kZeros, kBorder, kReflection };

struct GridSampleAttrs {
  GridMode mode = GridMode::kLinear;
  GridPadding padding = GridPadding::kZeros;
  bool align_corners = false;
};

// mode, padding_mode and align_corners as `opset` names them (opset 20 renamed the modes).
Result<GridSampleAttrs> ReadGridSample(const Node& node, int64_t opset);

// The taps of one grid coordinate along one spatial axis of `size` samples: up to four (index,
// weight) pairs (nearest 1, linear 2, cubic 4); index -1 reads zero.
struct GridAxisTaps {
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
  int count = 0;
};

// `normalized` in [-1, 1] (outside: padding); `round_half_away`: nearest rounds half away from zero
// (PyTorch's 3-D grids) instead of half to even (2-D).
GridAxisTaps GridTapsAlong(const GridSampleAttrs& a, double normalized, int64_t size, bool round_half_away);

}  // namespace chipfit
