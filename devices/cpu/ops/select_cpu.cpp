// Selection ops on the CPU (kernel_groups.h): Unique, Compress, ReverseSequence, MaxUnpool and Det,
// each matching its reference kernel (core/reference/selection.cpp, linalg.cpp).
//
// Unique, Compress and ReverseSequence move elements as DTypeSize() bytes, so they serve every
// fixed-size dtype; MaxUnpool copies the float types the reference takes the same way. Unique sorts
// one order-preserving 64-bit key per element (NaN after every number and equal to every NaN, -0 equal
// to +0, as the reference's comparison), ties broken by position, which gives the reference's stable
// order and first occurrences; the sort runs in per-thread chunks merged pairwise. Unique and Compress
// size their outputs themselves (IKernel::AllocatesOutputs): the op's shape function would otherwise
// redo the whole selection. Det eliminates in double with the reference's pivots and operations in its
// order, so results agree to the last bit on the same compiler flags.
//
// Index values and lengths are all checked before anything is written; the first one out of range in
// the reference's order is reported with the reference's message. Attributes and ranks the reference
// rejects are refused at Init, so that its error is the one the user sees.
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ref_util.h"
#include "devices/cpu/ops/kernel_groups.h"
#include "devices/cpu/ops/parallel_chunks.h"

namespace chipfit::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<IKernel>>;

// Below this much work (bytes moved, elements visited) one thread does it all.
constexpr int64_t kParallelFrom = int64_t{1} << 18;
// Elements from which Unique's sort is split between threads.
constexpr int64_t kParallelSortFrom = int64_t{1} << 15;
// Multiply-adds of one Det elimination step from which its rows are split between threads.
constexpr int64_t kParallelLuFrom = int64_t{1} << 15;

// ---------------------------------------------------------------------------------------------
// Shared helpers

const ValueInfo* InputInfo(const KernelInit& init, size_t i) {
  return i < init.inputs.size() ? init.inputs[i] : nullptr;
}

std::string DTypeString(DType dtype) { return std::string(DTypeName(dtype)); }

// Bytes per element of an input whose elements are moved unchanged; strings and unknown dtypes refused.
Result<size_t> MovedBytes(const ValueInfo* v, const std::string& name) {
  if (v == nullptr) return Unsupported("input '" + name + "' is missing");
  const size_t bytes = DTypeSize(v->dtype);
  if (bytes == 0) return Unsupported(DTypeString(v->dtype) + " input '" + name + "'");
  return bytes;
}

// Output row r (`block` bytes at dst + r·block) = the block at src_of(r), for r in [0, rows); blocks of
// one 1/2/4/8-byte element copy as one move.
template <typename SrcOf>
void CopyRows(char* dst, int64_t rows, size_t block, const SrcOf& src_of) {
  if (block == 0 || rows <= 0) return;
  auto run = [&](auto size) {
    constexpr size_t kSize = decltype(size)::value;
    ForChunks(rows, rows * static_cast<int64_t>(block), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        std::memcpy(dst + static_cast<size_t>(r) * block, src_of(r), kSize != 0 ? kSize : block);
      }
    });
  };
  switch (block) {
    case 1: run(std::integral_constant<size_t, 1>{}); return;
    case 2: run(std::integral_constant<size_t, 2>{}); return;
    case 4: run(std::integral_constant<size_t, 4>{}); return;
    case 8: run(std::integral_constant<size_t, 8>{}); return;
    default: run(std::integral_constant<size_t, 0>{}); return;
  }
}

void ZeroBytes(void* dst, size_t bytes) {
  constexpr int64_t kChunk = int64_t{1} << 16;
  const auto n = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  ForChunks(n, static_cast<int64_t>(bytes), [&](int64_t b, int64_t e) {
    const auto from = static_cast<size_t>(b * kChunk);
    const size_t to = std::min(bytes, static_cast<size_t>(e * kChunk));
    std::memset(static_cast<char*>(dst) + from, 0, to - from);
  });
}

// Output i with this dtype and shape: allocated when the executor handed an empty Tensor
// (AllocatesOutputs), else the one it planned, which must agree. nullptr when the output is omitted.
Result<Tensor*> MakeOutput(KernelContext& ctx, size_t i, DType dtype, const Shape& shape) {
  Tensor* t = ctx.output(i);
  if (t == nullptr) return t;
  if (!t->defined()) {
    *t = Tensor(dtype, shape);
  } else if (t->dtype() != dtype || t->shape() != shape) {
    return Internal(ctx.node().Describe() + ": output " + std::to_string(i) + " was sized " + DescribeTensor(*t) +
                    " but the kernel made " + DTypeString(dtype) + "[" + ShapeToString(shape) + "]");
  }
  return t;
}

// A tensor seen as outer x len x inner around one axis (the flattened tensor is 1 x numel x 1).
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisView ViewAround(const Shape& shape, std::optional<int64_t> axis) {
  if (!axis) return {1, NumElements(shape), 1};
  const auto a = static_cast<size_t>(*axis);
  return {Product(shape, 0, a), shape[a], Product(shape, a + 1)};
}

// The optional `axis` of Unique and Compress in [0, rank) (nullopt: flatten); one the reference
// rejects is refused.
Result<std::optional<int64_t>> OptionalAxis(const Node& node, int64_t rank) {
  if (!node.Has("axis")) return std::optional<int64_t>{};
  const int64_t axis = node.GetInt("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank) {
    return Unsupported("axis " + std::to_string(axis) + " is outside rank " + std::to_string(rank) +
                       " (the reference reports it)");
  }
  return std::optional<int64_t>{axis < 0 ? axis + rank : axis};
}

// ---------------------------------------------------------------------------------------------
// Unique

// A key whose unsigned order is the reference's order of values of T (selection.cpp Compare): signed
// integers offset by the sign bit; floats (the 16-bit ones through float, as the reference compares
// them) by their IEEE bits, negatives flipped, -0 as +0, every NaN as the largest key.
template <typename T>
uint64_t OrderKey(T v) {
  constexpr uint64_t kSign = uint64_t{1} << 63;
  if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v)) ^ kSign;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(v);
  } else {
    double d = 0;
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      d = static_cast<float>(v);
    } else {
      d = static_cast<double>(v);
    }
    if (std::isnan(d)) return ~uint64_t{0};
    if (d == 0) d = 0;  // -0 compares equal to +0
    const auto bits = std::bit_cast<uint64_t>(d);
    return (bits & kSign) != 0 ? ~bits : bits | kSign;
  }
}

// std::sort of v by `less` (a strict total order), in per-thread chunks merged pairwise when large.
template <typename T, typename Less>
void SortInChunks(std::vector<T>& v, const Less& less) {
  const auto n = static_cast<int64_t>(v.size());
  const int64_t parts = std::min<int64_t>(omp_get_max_threads(), n / (kParallelSortFrom / 2));
  if (n < kParallelSortFrom || parts < 2) {
    std::sort(v.begin(), v.end(), less);
    return;
  }
  std::vector<int64_t> bounds(static_cast<size_t>(parts) + 1);
  for (int64_t p = 0; p <= parts; ++p) bounds[static_cast<size_t>(p)] = n * p / parts;
  auto at = [&](std::vector<T>& w, int64_t p) {
    return w.begin() + static_cast<std::ptrdiff_t>(bounds[static_cast<size_t>(std::min(p, parts))]);
  };
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < parts; ++p) std::sort(at(v, p), at(v, p + 1), less);
  std::vector<T> merged(v.size());
  for (int64_t width = 1; width < parts; width *= 2) {
    const int64_t pairs = (parts + 2 * width - 1) / (2 * width);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t q = 0; q < pairs; ++q) {
      const int64_t p = q * 2 * width;
      std::merge(at(v, p), at(v, p + width), at(v, p + width), at(v, p + 2 * width), at(merged, p), less);
    }
    v.swap(merged);
  }
}

class UniqueKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    RETURN_IF_ERROR(MovedBytes(x, "X").status());
    const int64_t sorted = init.node.GetInt("sorted", 1);
    if (sorted != 0 && sorted != 1) {
      return Unsupported("sorted " + std::to_string(sorted) + " is not 0 or 1 (the reference reports it)");
    }
    ASSIGN_OR_RETURN(std::optional<int64_t> axis, OptionalAxis(init.node, static_cast<int64_t>(x->shape.size())));
    return std::unique_ptr<IKernel>(new UniqueKernel(axis, sorted == 1));
  }
  bool AllocatesOutputs() const override { return true; }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const AxisView v = ViewAround(x.shape(), axis_);
    RETURN_IF_ERROR(SortSlices(ctx.node(), x, v));
    const int64_t len = v.len;

    // Groups of equal slices: runs in the sorted order, each led by its first occurrence.
    std::vector<int64_t> starts;
    for (int64_t k = 0; k < len; ++k) {
      if (k == 0 || !SameSlice(order_[static_cast<size_t>(k - 1)], order_[static_cast<size_t>(k)])) {
        starts.push_back(k);
      }
    }
    const auto unique = static_cast<int64_t>(starts.size());
    starts.push_back(len);
    auto first_of = [&](int64_t g) { return order_[static_cast<size_t>(starts[static_cast<size_t>(g)])]; };
    // Output position of each group: sorted order, or the order of first occurrence.
    std::vector<int64_t> position(static_cast<size_t>(unique));
    std::iota(position.begin(), position.end(), int64_t{0});
    if (!sorted_) {
      std::vector<int64_t> by_first(position);
      std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return first_of(a) < first_of(b); });
      for (int64_t p = 0; p < unique; ++p) position[static_cast<size_t>(by_first[static_cast<size_t>(p)])] = p;
    }

    Shape y_shape = {unique};
    if (axis_) {
      y_shape = x.shape();
      y_shape[static_cast<size_t>(*axis_)] = unique;
    }
    ASSIGN_OR_RETURN(Tensor * y, MakeOutput(ctx, 0, x.dtype(), y_shape));
    ASSIGN_OR_RETURN(Tensor * indices, MakeOutput(ctx, 1, DType::kI64, {unique}));
    ASSIGN_OR_RETURN(Tensor * inverse, MakeOutput(ctx, 2, DType::kI64, {len}));
    ASSIGN_OR_RETURN(Tensor * counts, MakeOutput(ctx, 3, DType::kI64, {unique}));

    // first[p]: the first occurrence of the group at output position p.
    std::vector<int64_t> first(static_cast<size_t>(unique));
    for (int64_t g = 0; g < unique; ++g) {
      const auto p = static_cast<size_t>(position[static_cast<size_t>(g)]);
      first[p] = first_of(g);
      if (counts != nullptr) {
        counts->data<int64_t>()[p] = starts[static_cast<size_t>(g) + 1] - starts[static_cast<size_t>(g)];
      }
    }
    if (indices != nullptr) std::copy(first.begin(), first.end(), indices->data<int64_t>());
    if (inverse != nullptr) {
      int64_t* inv = inverse->data<int64_t>();
      ForChunks(unique, len, [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
          for (int64_t k = starts[static_cast<size_t>(g)]; k < starts[static_cast<size_t>(g) + 1]; ++k) {
            inv[order_[static_cast<size_t>(k)]] = position[static_cast<size_t>(g)];
          }
        }
      });
    }
    if (y != nullptr) {
      const size_t block = static_cast<size_t>(v.inner) * DTypeSize(x.dtype());
      const auto* src = static_cast<const char*>(x.raw_data());
      CopyRows(static_cast<char*>(y->raw_data()), v.outer * unique, block, [&](int64_t r) {
        const int64_t o = r / unique;
        const int64_t k = first[static_cast<size_t>(r - o * unique)];
        return src + static_cast<size_t>(o * len + k) * block;
      });
    }
    return Status();
  }

 private:
  UniqueKernel(std::optional<int64_t> axis, bool sorted) : axis_(axis), sorted_(sorted) {}

  // order_ = the positions along the axis sorted by their slices (compared element by element in
  // row-major order of the other dims, as the reference does), ties by position.
  Status SortSlices(const Node& node, const Tensor& x, const AxisView& v) {
    const int64_t len = v.len;
    width_ = v.outer * v.inner;
    keys_.resize(static_cast<size_t>(len * width_));
    RETURN_IF_ERROR(VisitKernelDType(node, x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* p = x.data<T>();
      uint64_t* keys = keys_.data();
      ForChunks(len, len * width_, [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) {
          uint64_t* row = keys + j * width_;
          for (int64_t o = 0; o < v.outer; ++o) {
            const T* in = p + (o * len + j) * v.inner;
            for (int64_t i = 0; i < v.inner; ++i) row[o * v.inner + i] = OrderKey(in[i]);
          }
        }
      });
      return Status();
    }));
    order_.resize(static_cast<size_t>(len));
    if (width_ == 1) {  // one key per position: sort (key, position) pairs, contiguous in memory
      std::vector<std::pair<uint64_t, int64_t>> pairs(static_cast<size_t>(len));
      for (int64_t j = 0; j < len; ++j) pairs[static_cast<size_t>(j)] = {keys_[static_cast<size_t>(j)], j};
      SortInChunks(pairs, std::less<>());
      for (int64_t j = 0; j < len; ++j) order_[static_cast<size_t>(j)] = pairs[static_cast<size_t>(j)].second;
      return Status();
    }
    std::iota(order_.begin(), order_.end(), int64_t{0});
    const uint64_t* keys = keys_.data();
    const int64_t w = width_;
    SortInChunks(order_, [keys, w](int64_t a, int64_t b) {
      const uint64_t* ka = keys + a * w;
      const uint64_t* kb = keys + b * w;
      for (int64_t q = 0; q < w; ++q) {
        if (ka[q] != kb[q]) return ka[q] < kb[q];
      }
      return a < b;
    });
    return Status();
  }

  bool SameSlice(int64_t a, int64_t b) const {
    const uint64_t* keys = keys_.data();
    return std::equal(keys + a * width_, keys + (a + 1) * width_, keys + b * width_);
  }

  std::optional<int64_t> axis_;
  bool sorted_;
  int64_t width_ = 0;           // keys per slice
  std::vector<uint64_t> keys_;  // per position along the axis, its slice's keys
  std::vector<int64_t> order_;
};

// ---------------------------------------------------------------------------------------------
// Compress

class CompressKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    ASSIGN_OR_RETURN(size_t bytes, MovedBytes(x, "input"));
    const ValueInfo* condition = InputInfo(init, 1);
    if (condition == nullptr) return Unsupported("input 'condition' is missing");
    if (condition->dtype != DType::kBool || condition->shape.size() != 1) {
      return Unsupported(DTypeString(condition->dtype) + "[" + ShapeToString(condition->shape) +
                         "] condition, not 1-D bool (the reference reports it)");
    }
    ASSIGN_OR_RETURN(std::optional<int64_t> axis, OptionalAxis(init.node, static_cast<int64_t>(x->shape.size())));
    return std::unique_ptr<IKernel>(new CompressKernel(bytes, axis));
  }
  bool AllocatesOutputs() const override { return true; }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& condition = *ctx.input(1);
    if (condition.dtype() != DType::kBool) {
      return ctx.Error("condition must be bool, got " + DTypeString(condition.dtype()));
    }
    if (condition.rank() != 1) return ctx.Error("condition must be 1-D, got shape " + ShapeToString(condition.shape()));
    const AxisView v = ViewAround(x.shape(), axis_);
    // A condition longer than the axis may hold only false past its end (the reference's rule).
    const bool* c = condition.data<bool>();
    picks_.clear();
    for (int64_t i = 0; i < condition.numel(); ++i) {
      if (!c[i]) continue;
      if (i >= v.len) {
        return ctx.Error("condition selects index " + std::to_string(i) + " but the selected axis has only " +
                         std::to_string(v.len) + " entries");
      }
      picks_.push_back(i);
    }
    const auto count = static_cast<int64_t>(picks_.size());
    Shape shape = {count};
    if (axis_) {
      shape = x.shape();
      shape[static_cast<size_t>(*axis_)] = count;
    }
    ASSIGN_OR_RETURN(Tensor * y, MakeOutput(ctx, 0, x.dtype(), shape));
    if (y == nullptr || count == 0) return Status();
    const size_t block = static_cast<size_t>(v.inner) * bytes_;
    const auto* src = static_cast<const char*>(x.raw_data());
    CopyRows(static_cast<char*>(y->raw_data()), v.outer * count, block, [&](int64_t r) {
      const int64_t o = r / count;
      return src + static_cast<size_t>(o * v.len + picks_[static_cast<size_t>(r - o * count)]) * block;
    });
    return Status();
  }

 private:
  CompressKernel(size_t bytes, std::optional<int64_t> axis) : bytes_(bytes), axis_(axis) {}
  size_t bytes_;
  std::optional<int64_t> axis_;
  std::vector<int64_t> picks_;  // the kept indices along the axis
};

// ---------------------------------------------------------------------------------------------
// ReverseSequence: over dims 0 and 1 (batch and time, in either order), the first sequence_lens[b]
// time steps of batch b reversed, the rest copied; each (batch, time) row is one block of the dims after.

class ReverseSequenceKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    ASSIGN_OR_RETURN(size_t bytes, MovedBytes(x, "input"));
    const ValueInfo* lens = InputInfo(init, 1);
    if (lens == nullptr) return Unsupported("input 'sequence_lens' is missing");
    if (lens->dtype != DType::kI64) {
      return Unsupported(DTypeString(lens->dtype) + " sequence_lens (i64 expected; the reference reports it)");
    }
    const int64_t batch_axis = init.node.GetInt("batch_axis", 1);
    const int64_t time_axis = init.node.GetInt("time_axis", 0);
    if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) || batch_axis == time_axis ||
        x->shape.size() < 2) {
      return Unsupported("batch_axis " + std::to_string(batch_axis) + " and time_axis " + std::to_string(time_axis) +
                         " over rank " + std::to_string(x->shape.size()) + " (the reference reports it)");
    }
    return std::unique_ptr<IKernel>(new ReverseSequenceKernel(bytes, batch_axis == 0));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& lens_t = *ctx.input(1);
    const int64_t batches = x.dim(batch_major_ ? 0 : 1);
    const int64_t steps = x.dim(batch_major_ ? 1 : 0);
    if (lens_t.numel() != batches) {
      return ctx.Error("sequence_lens has shape " + ShapeToString(lens_t.shape()) +
                       " but needs one length per batch (" + std::to_string(batches) + ")");
    }
    const int64_t* lens = lens_t.data<int64_t>();
    for (int64_t b = 0; b < batches; ++b) {
      if (lens[b] < 0 || lens[b] > steps) {
        return ctx.Error("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) + " is outside [0, " +
                         std::to_string(steps) + "]");
      }
    }
    const size_t block = static_cast<size_t>(Product(x.shape(), 2)) * bytes_;
    const auto* src = static_cast<const char*>(x.raw_data());
    const int64_t inner_dim = x.dim(1);
    CopyRows(static_cast<char*>(ctx.output(0)->raw_data()), batches * steps, block, [&](int64_t r) {
      const int64_t d0 = r / inner_dim;
      const int64_t d1 = r - d0 * inner_dim;
      const int64_t b = batch_major_ ? d0 : d1;
      const int64_t t = batch_major_ ? d1 : d0;
      const int64_t len = lens[b];
      const int64_t from = t < len ? len - 1 - t : t;
      return src + static_cast<size_t>(batch_major_ ? b * steps + from : from * batches + b) * block;
    });
    return Status();
  }

 private:
  ReverseSequenceKernel(size_t bytes, bool batch_major) : bytes_(bytes), batch_major_(batch_major) {}
  size_t bytes_;
  bool batch_major_;  // batch_axis 0, time_axis 1
};

// ---------------------------------------------------------------------------------------------
// MaxUnpool: zeros, then X[i] stored at flat position I[i] of the default unpooled shape (X's spatial
// dims grown back by the pool window), placed at the start of every dim of a larger output_shape, as the
// reference does. Indices that stay in their (n, c) plane (what MaxPool gives) let the planes run in
// parallel; otherwise one thread writes in index order, so that the last write to a position wins as
// in the reference.

// The reference's unpooled shape and its errors (selection.cpp UnpoolShape without output_shape).
Result<Shape> UnpooledShape(const Node& node, const Shape& x) {
  if (x.size() < 3) {
    return InvalidArgument(node.Describe() + ": input X must be N x C x D1 ... (rank >= 3), got " + ShapeToString(x));
  }
  if (!node.Has("kernel_shape")) return InvalidArgument(node.Describe() + ": attribute kernel_shape is required");
  ASSIGN_OR_RETURN(const Window w, ReadWindow(node, Shape(x.begin() + 2, x.end()), node.GetInts("kernel_shape")));
  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < w.rank(); ++i) {
    const int64_t d = (w.in[i] - 1) * w.strides[i] + w.kernel[i] - w.pad_begin[i] - w.pad_end[i];
    if (d < 0) {
      return InvalidArgument(node.Describe() + ": pads " + JoinInts(node.GetInts("pads")) +
                             " leave no output in spatial dim " + std::to_string(i));
    }
    out.push_back(d);
  }
  return out;
}

class MaxUnpoolKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    const ValueInfo* indices = InputInfo(init, 1);
    if (x == nullptr || indices == nullptr) return Unsupported("inputs 'X' and 'I' are needed");
    if (!IsFloatingDType(x->dtype)) {
      return Unsupported(DTypeString(x->dtype) + " X (f32, f64, f16 or bf16 expected)");
    }
    if (indices->dtype != DType::kI64) return Unsupported(DTypeString(indices->dtype) + " I (i64 expected)");
    if (x->shape.size() < 3 || indices->shape.size() != x->shape.size() || !init.node.Has("kernel_shape")) {
      return Unsupported("X of rank " + std::to_string(x->shape.size()) + ", I of rank " +
                         std::to_string(indices->shape.size()) + ", kernel_shape " +
                         (init.node.Has("kernel_shape") ? "given" : "missing") + " (the reference reports it)");
    }
    auto window = ReadWindow(init.node, Shape(x->shape.begin() + 2, x->shape.end()), init.node.GetInts("kernel_shape"));
    if (!window.ok()) return Unsupported(window.status().message() + " (the reference reports it)");
    return std::unique_ptr<IKernel>(new MaxUnpoolKernel(DTypeSize(x->dtype)));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    if (indices.shape() != x.shape()) {
      return ctx.Error("I has shape " + ShapeToString(indices.shape()) + " but X has " + ShapeToString(x.shape()));
    }
    ASSIGN_OR_RETURN(const Shape unpooled, UnpooledShape(ctx.node(), x.shape()));
    Tensor& y = *ctx.output(0);
    bool fits = y.shape().size() == unpooled.size();
    for (size_t d = 0; d < unpooled.size() && fits; ++d) {
      fits = d < 2 ? y.shape()[d] == unpooled[d] : y.shape()[d] >= unpooled[d];
    }
    if (!fits) {
      return ctx.Error("output_shape " + ShapeToString(y.shape()) + " is smaller than the unpooled shape " +
                       ShapeToString(unpooled) + " (or changes N or C)");
    }
    const int64_t n = x.numel();
    const int64_t total = NumElements(unpooled);
    const int64_t* at = indices.data<int64_t>();
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t in_plane = planes > 0 ? n / planes : 0;
    const int64_t out_plane = planes > 0 ? total / planes : 0;
    int64_t first_bad = n;
    int64_t crossing = 0;  // 1 when an index leaves its (n, c) plane
#pragma omp parallel for schedule(static) reduction(min : first_bad) reduction(max : crossing) if (n >= kParallelFrom)
    for (int64_t i = 0; i < n; ++i) {
      if (at[i] < 0 || at[i] >= total) {
        first_bad = std::min(first_bad, i);
      } else if (at[i] / out_plane != i / in_plane) {
        crossing = 1;
      }
    }
    if (first_bad < n) {
      return ctx.Error("index " + std::to_string(at[first_bad]) + " at I[" + std::to_string(first_bad) +
                       "] is outside the unpooled " + ShapeToString(unpooled) + " (" + std::to_string(total) +
                       " elements)");
    }
    ZeroBytes(y.raw_data(), y.nbytes());  // all-zero bytes are 0.0 in every float type
    if (n == 0) return Status();

    // Position in y of flat position p of the unpooled shape: p itself when the shapes agree.
    const bool same = y.shape() == unpooled;
    const std::vector<int64_t> from_strides = Strides(unpooled);
    const std::vector<int64_t> to_strides = Strides(y.shape());
    auto target = [&](int64_t p) {
      if (same) return p;
      int64_t t = 0;
      for (size_t d = 0; d < from_strides.size(); ++d) {
        t += p / from_strides[d] * to_strides[d];
        p %= from_strides[d];
      }
      return t;
    };
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* dst = static_cast<char*>(y.raw_data());
    auto scatter = [&](auto size, int64_t i0, int64_t i1) {
      constexpr size_t kSize = decltype(size)::value;
      for (int64_t i = i0; i < i1; ++i) {
        std::memcpy(dst + static_cast<size_t>(target(at[i])) * kSize, src + static_cast<size_t>(i) * kSize, kSize);
      }
    };
    auto run = [&](auto size) {
      if (crossing != 0) {
        scatter(size, 0, n);
        return;
      }
      ForChunks(planes, n * static_cast<int64_t>(bytes_),
                [&](int64_t p0, int64_t p1) { scatter(size, p0 * in_plane, p1 * in_plane); });
    };
    switch (bytes_) {
      case 2: run(std::integral_constant<size_t, 2>{}); break;
      case 4: run(std::integral_constant<size_t, 4>{}); break;
      default: run(std::integral_constant<size_t, 8>{}); break;
    }
    return Status();
  }

 private:
  explicit MaxUnpoolKernel(size_t bytes) : bytes_(bytes) {}
  size_t bytes_;  // 2, 4 or 8: the float types
};

// ---------------------------------------------------------------------------------------------
// Det: per matrix, Gaussian elimination with partial pivoting in double (the first row of largest
// magnitude is the pivot, a zero pivot gives 0), the determinant the product of the pivots negated
// once per swap: the reference's LuDeterminant. Matrices run in parallel; a large single matrix
// splits each elimination step's rows instead.

double LuDeterminant(double* a, int64_t m, bool threaded) {
  double det = 1;
  for (int64_t k = 0; k < m; ++k) {
    double* row_k = a + k * m;
    int64_t pivot = k;
    for (int64_t r = k + 1; r < m; ++r) {
      if (std::fabs(a[r * m + k]) > std::fabs(a[pivot * m + k])) pivot = r;
    }
    if (a[pivot * m + k] == 0) return 0;
    if (pivot != k) {
      // Columns before k are never read again.
      std::swap_ranges(row_k + k, row_k + m, a + pivot * m + k);
      det = -det;
    }
    det *= row_k[k];
    const int64_t rest = m - k - 1;
#pragma omp parallel for schedule(static) if (threaded && rest * rest >= kParallelLuFrom)
    for (int64_t r = k + 1; r < m; ++r) {
      double* row = a + r * m;
      const double f = row[k] / row_k[k];
      for (int64_t c = k + 1; c < m; ++c) row[c] -= f * row_k[c];
    }
  }
  return det;
}

class DetKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    if (x == nullptr) return Unsupported("input 'X' is missing");
    if (!IsFloatingDType(x->dtype)) {
      return Unsupported(DTypeString(x->dtype) + " X (f32, f64, f16 or bf16 expected)");
    }
    const Shape& s = x->shape;
    const size_t r = s.size();
    if (r < 2 || (s[r - 1] >= 0 && s[r - 2] >= 0 && s[r - 1] != s[r - 2])) {
      return Unsupported("input " + ShapeToString(s) + " is not [*, M, M] (the reference reports it)");
    }
    return std::unique_ptr<IKernel>(new DetKernel());
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const int64_t rank = x.rank();
    if (rank < 2 || x.dim(rank - 1) != x.dim(rank - 2)) {
      return ctx.Error("input must be [*, M, M], got " + ShapeToString(x.shape()));
    }
    const int64_t m = x.dim(rank - 1);
    const int64_t size = m * m;
    const int64_t batch = Product(x.shape(), 0, static_cast<size_t>(rank - 2));
    Tensor& y = *ctx.output(0);
    if (y.numel() != batch) return ctx.Error("output " + DescribeTensor(y) + " does not hold one value per matrix");
    return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Float16> ||
                    std::is_same_v<T, BFloat16>) {
        const T* in = x.data<T>();
        T* out = y.data<T>();
        const int threads = omp_get_max_threads();
        // Matrices split between threads when there are enough of them (or each is small); else
        // each one's elimination does.
        const bool across = batch >= threads || m < 64;
        const int64_t work = batch * size * m;
        auto one = [&](int64_t b, std::vector<double>& a, bool threaded) {
          const T* from = in + b * size;
          for (int64_t k = 0; k < size; ++k) {
            if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
              a[static_cast<size_t>(k)] = static_cast<float>(from[k]);
            } else {
              a[static_cast<size_t>(k)] = static_cast<double>(from[k]);
            }
          }
          out[b] = FromDouble<T>(LuDeterminant(a.data(), m, threaded));
        };
        if (across) {
#pragma omp parallel if (batch > 1 && work >= kParallelFrom)
          {
            std::vector<double> a(static_cast<size_t>(size));
#pragma omp for schedule(static)
            for (int64_t b = 0; b < batch; ++b) one(b, a, false);
          }
        } else {
          std::vector<double> a(static_cast<size_t>(size));
          for (int64_t b = 0; b < batch; ++b) one(b, a, true);
        }
        return Status();
      } else {
        return Unsupported(ctx.node().Describe() + ": dtype " + DTypeString(x.dtype()) + " is not supported");
      }
    });
  }

 private:
  DetKernel() = default;
};

template <typename K>
KernelResult Create(const KernelInit& init) {
  return K::Create(init);
}

}  // namespace

void AddSelectKernels(KernelTable& t) {
  constexpr auto kCpu = DeviceKind::kCpu;
  constexpr auto kFp32 = Precision::kFp32;
  // fp32 entries serve the other precisions too: placement tries a device's fp32 kernels after its
  // target precision's (core/runtime/compile_steps.cpp Place).
  t.Add("Unique", "", kCpu, kFp32, {"cpu:unique", Create<UniqueKernel>});
  t.Add("Compress", "", kCpu, kFp32, {"cpu:compress", Create<CompressKernel>});
  t.Add("ReverseSequence", "", kCpu, kFp32, {"cpu:reverse-sequence", Create<ReverseSequenceKernel>});
  t.Add("MaxUnpool", "", kCpu, kFp32, {"cpu:max-unpool", Create<MaxUnpoolKernel>});
  t.Add("Det", "", kCpu, kFp32, {"cpu:det", Create<DetKernel>});
}

}  // namespace chipfit::cpu
