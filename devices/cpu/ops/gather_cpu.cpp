// Index and shape ops on the CPU (kernel_groups.h): Gather, GatherElements, GatherND, Scatter,
// ScatterElements, ScatterND, ArgMax/ArgMin, TopK, CumSum, Trilu, Expand, Tile, Split, DepthToSpace,
// SpaceToDepth, OneHot, EyeLike, Range, ConstantOfShape and Shape.
//
// Ops that only move elements copy DTypeSize() bytes, so they serve every fixed-size dtype; the ones
// that compare or add (ArgMax, TopK, CumSum, the scatter reductions) do it in the types and the order
// the reference kernels do (core/reference/tensor_ops.cpp, reduce.cpp), so results match bit for bit.
// The geometry is taken from the tensors at run time, so dims known only then are fine; parameters
// that decide an output shape (Split sizes, Tile repeats, Expand's shape, TopK's K, OneHot's depth,
// Range's inputs, ConstantOfShape's shape) must be constants, else the factory refuses. Index values
// are all checked before anything is written, and the first one out of range in the reference's
// order is reported with the reference's message. Large work is split between OpenMP threads.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cpu/ops/kernel_groups.h"
#include "devices/cpu/ops/parallel_chunks.h"

namespace chipfit::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<IKernel>>;

// Below this much work (bytes moved, elements visited) one thread does it all.
constexpr int64_t kParallelFrom = int64_t{1} << 18;

// ---------------------------------------------------------------------------------------------
// Shared helpers

const ValueInfo* InputInfo(const KernelInit& init, size_t i) {
  return i < init.inputs.size() ? init.inputs[i] : nullptr;
}

// The contents of input i when they are known at compile time, else nullptr.
const Tensor* ConstantInput(const KernelInit& init, size_t i) {
  const ValueInfo* v = InputInfo(init, i);
  return v == nullptr ? nullptr : v->value;
}

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end && d < shape.size(); ++d) n *= shape[d];
  return n;
}

int64_t Rank(const ValueInfo& v) { return static_cast<int64_t>(v.shape.size()); }

// Bytes per element of an input whose elements are moved unchanged; strings and unknown dtypes refused.
Result<size_t> MovedBytes(const ValueInfo* v, const std::string& name) {
  if (v == nullptr) return Unsupported("input '" + name + "' is missing");
  const size_t bytes = DTypeSize(v->dtype);
  if (bytes == 0) return Unsupported(std::string(DTypeName(v->dtype)) + " input '" + name + "'");
  return bytes;
}

bool IsIndexDType(DType dtype) { return dtype == DType::kI32 || dtype == DType::kI64; }

Status CheckIndexInput(const ValueInfo* v, const std::string& name) {
  if (v == nullptr) return Unsupported("input '" + name + "' is missing");
  if (!IsIndexDType(v->dtype)) {
    return Unsupported(std::string(DTypeName(v->dtype)) + " " + name + " (int32 or int64 expected)");
  }
  return Status();
}

// axis in [-rank, rank) → [0, rank); an axis outside is left to the reference, which reports it.
Result<int64_t> AxisIn(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return Unsupported("axis " + std::to_string(axis) + " is outside rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

// The columns [c0, c1) of an [outer, len, inner] view (column c = o·inner + i runs along len), as
// f(o, i_begin, i_end) per outer index.
template <typename F>
void ForColumnRange(int64_t c0, int64_t c1, int64_t inner, const F& f) {
  for (int64_t o = c0 / inner; o * inner < c1; ++o) {
    f(o, std::max<int64_t>(c0 - o * inner, 0), std::min<int64_t>(c1 - o * inner, inner));
  }
}

// One element of N bytes (N = 0: `size` bytes, known only at run time); fixed sizes copy as one move.
template <size_t N>
struct Element {
  size_t size;
  void Copy(char* to, const char* from) const {
    if constexpr (N != 0) {
      std::memcpy(to, from, N);
    } else {
      std::memcpy(to, from, size);
    }
  }
  void Fill(char* to, int64_t count, const char* value) const {
    for (int64_t j = 0; j < count; ++j) Copy(to + static_cast<size_t>(j) * size, value);
  }
};

template <typename F>
void WithElement(size_t bytes, const F& f) {
  switch (bytes) {
    case 1: f(Element<1>{1}); return;
    case 2: f(Element<2>{2}); return;
    case 4: f(Element<4>{4}); return;
    case 8: f(Element<8>{8}); return;
    default: f(Element<0>{bytes}); return;
  }
}

// `count` copies of the element at `value`, written by several threads when large.
void FillElements(char* to, int64_t count, const char* value, size_t bytes) {
  WithElement(bytes, [&](auto element) {
    ForChunks(count, count * static_cast<int64_t>(bytes),
              [&](int64_t b, int64_t e) { element.Fill(to + static_cast<size_t>(b) * bytes, e - b, value); });
  });
}

// f(pointer to the index values) for an int32 or int64 tensor.
template <typename F>
Status WithIndices(const Node& node, const Tensor& indices, const F& f) {
  if (indices.dtype() == DType::kI32) return f(indices.data<int32_t>());
  if (indices.dtype() == DType::kI64) return f(indices.data<int64_t>());
  return InvalidArgument(node.Describe() + ": indices must be int32 or int64, got " +
                         std::string(DTypeName(indices.dtype())));
}

// Position of the first index value outside [-dim, dim) (dim_at(position)), in flat order; -1 if none.
template <typename I, typename DimAt>
int64_t FirstOutOfRange(const I* idx, int64_t n, const DimAt& dim_at) {
  int64_t first = n;
#pragma omp parallel for schedule(static) reduction(min : first) if (n >= kParallelFrom)
  for (int64_t p = 0; p < n; ++p) {
    const auto v = static_cast<int64_t>(idx[p]);
    const int64_t dim = dim_at(p);
    if ((v < -dim || v >= dim) && p < first) first = p;
  }
  return first < n ? first : -1;
}

// The reference's message for Gather, GatherElements and ScatterElements.
Status IndexOutOfRange(const Node& node, int64_t index, int64_t dim) {
  return InvalidArgument(node.Describe() + ": index " + std::to_string(index) + " is out of range for a dim of " +
                         std::to_string(dim));
}

template <typename T>
constexpr bool kHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// What values of T are compared as: float for the 16-bit floats (as their operator float does), T else.
template <typename T>
using Compared = std::conditional_t<kHalf<T>, float, T>;

template <typename C>
bool IsNan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// A strided view of the input laid over the output: output element (row-major over dims) reads input
// element Σ coord·stride. Expand, Tile, DepthToSpace and SpaceToDepth are each one such copy.
struct StridedCopy {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;

  // Drops dims of 1 and merges dims that step through the input contiguously.
  void Simplify() {
    std::vector<int64_t> d2, s2;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == 1) continue;
      if (!d2.empty() && s2.back() == strides[d] * dims[d]) {
        d2.back() *= dims[d];
        s2.back() = strides[d];
        continue;
      }
      d2.push_back(dims[d]);
      s2.push_back(strides[d]);
    }
    if (d2.empty()) {
      d2 = {1};
      s2 = {0};
    }
    dims = std::move(d2);
    strides = std::move(s2);
  }

  void Run(const char* in, char* out, size_t bytes) {
    for (int64_t d : dims) {
      if (d == 0) return;
    }
    Simplify();
    const size_t k = dims.size();
    const int64_t last = dims.back();
    const int64_t step = strides.back();
    const int64_t rows = Product(dims, 0, k - 1);
    const auto row_bytes = static_cast<size_t>(last) * bytes;
    WithElement(bytes, [&](auto element) {
      ForChunks(rows, rows * static_cast<int64_t>(row_bytes), [&](int64_t r0, int64_t r1) {
        // Coordinates of row r0 over dims[0, k-1), advanced like an odometer.
        std::vector<int64_t> c(k - 1, 0);
        int64_t base = 0;
        for (int64_t rest = r0, d = static_cast<int64_t>(k) - 2; d >= 0; --d) {
          const auto du = static_cast<size_t>(d);
          c[du] = rest % dims[du];
          rest /= dims[du];
          base += c[du] * strides[du];
        }
        for (int64_t r = r0; r < r1; ++r) {
          char* to = out + static_cast<size_t>(r) * row_bytes;
          const char* from = in + static_cast<size_t>(base) * bytes;
          if (step == 1) {
            std::memcpy(to, from, row_bytes);
          } else if (step == 0) {
            element.Fill(to, last, from);
          } else {
            for (int64_t j = 0; j < last; ++j) {
              element.Copy(to + static_cast<size_t>(j) * bytes, from + static_cast<size_t>(j * step) * bytes);
            }
          }
          for (size_t d = k - 1; d-- > 0;) {
            base += strides[d];
            if (++c[d] < dims[d]) break;
            base -= strides[d] * dims[d];
            c[d] = 0;
          }
        }
      });
    });
  }
};

// ---------------------------------------------------------------------------------------------
// Gather

class GatherKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    ASSIGN_OR_RETURN(size_t bytes, MovedBytes(x, "data"));
    RETURN_IF_ERROR(CheckIndexInput(InputInfo(init, 1), "indices"));
    if (x->shape.empty()) return Unsupported("scalar data (the reference reports it)");
    ASSIGN_OR_RETURN(int64_t axis, AxisIn(init.node.GetInt("axis", 0), Rank(*x)));
    return std::unique_ptr<IKernel>(new GatherKernel(bytes, axis));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    const int64_t dim = x.dim(axis_);
    const int64_t outer = Product(x.shape(), 0, static_cast<size_t>(axis_));
    const int64_t inner = Product(x.shape(), static_cast<size_t>(axis_) + 1, x.shape().size());
    const int64_t n = indices.numel();
    return WithIndices(ctx.node(), indices, [&](const auto* idx) -> Status {
      const int64_t bad = FirstOutOfRange(idx, n, [dim](int64_t) { return dim; });
      if (bad >= 0) return IndexOutOfRange(ctx.node(), static_cast<int64_t>(idx[bad]), dim);
      const auto block = static_cast<size_t>(inner) * bytes_;
      if (block == 0) return Status();
      const char* src = static_cast<const char*>(x.raw_data());
      char* dst = static_cast<char*>(ctx.output(0)->raw_data());
      WithElement(bytes_, [&](auto element) {
        ForChunks(outer * n, outer * n * static_cast<int64_t>(block), [&](int64_t r0, int64_t r1) {
          // Row r copies block idx[j] of outer slice o, r = o·n + j.
          int64_t o = r0 / n;
          int64_t j = r0 - o * n;
          for (int64_t r = r0; r < r1; ++r) {
            auto i = static_cast<int64_t>(idx[j]);
            if (i < 0) i += dim;
            const char* from = src + static_cast<size_t>(o * dim + i) * block;
            char* to = dst + static_cast<size_t>(r) * block;
            if (inner == 1) {
              element.Copy(to, from);
            } else {
              std::memcpy(to, from, block);
            }
            if (++j == n) {
              j = 0;
              ++o;
            }
          }
        });
      });
      return Status();
    });
  }

 private:
  GatherKernel(size_t bytes, int64_t axis) : bytes_(bytes), axis_(axis) {}
  size_t bytes_;
  int64_t axis_;
};

// ---------------------------------------------------------------------------------------------
// GatherElements, ScatterElements (and Scatter, its opset 9–10 name)

// indices [outer, len, inner] around `axis` over data of the same rank: element (o, j, i) addresses
// data at outer_at[o] + value·axis_stride + inner_at[i].
struct ElementsPlan {
  int64_t outer = 1, len = 1, inner = 1, dim = 0, axis_stride = 0;
  std::vector<int64_t> outer_at, inner_at;
};

Result<ElementsPlan> PlanElements(const Node& node, const Shape& data, const Shape& indices, int64_t axis) {
  if (data.size() != indices.size()) {
    return InvalidArgument(node.Describe() + ": indices " + ShapeToString(indices) + " do not fit data " +
                           ShapeToString(data));
  }
  const auto a = static_cast<size_t>(axis);
  const std::vector<int64_t> strides = Strides(data);
  ElementsPlan p;
  p.outer = Product(indices, 0, a);
  p.len = indices[a];
  p.inner = Product(indices, a + 1, indices.size());
  p.dim = data[a];
  p.axis_stride = strides[a];
  // Data offsets of the coordinates before and after the axis, each walked in row-major order.
  auto offsets = [&](size_t begin, size_t end, int64_t count) {
    std::vector<int64_t> at(static_cast<size_t>(count), 0);
    std::vector<int64_t> c(end - begin, 0);
    int64_t offset = 0;
    for (int64_t f = 0; f < count; ++f) {
      at[static_cast<size_t>(f)] = offset;
      for (size_t d = end; d-- > begin;) {
        offset += strides[d];
        if (++c[d - begin] < indices[d]) break;
        offset -= strides[d] * indices[d];
        c[d - begin] = 0;
      }
    }
    return at;
  };
  p.outer_at = offsets(0, a, p.outer);
  p.inner_at = offsets(a + 1, indices.size(), p.inner);
  return p;
}

class GatherElementsKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    ASSIGN_OR_RETURN(size_t bytes, MovedBytes(x, "data"));
    RETURN_IF_ERROR(CheckIndexInput(InputInfo(init, 1), "indices"));
    if (x->shape.empty() || InputInfo(init, 1)->shape.size() != x->shape.size()) {
      return Unsupported("data and indices of different ranks (the reference reports it)");
    }
    ASSIGN_OR_RETURN(int64_t axis, AxisIn(init.node.GetInt("axis", 0), Rank(*x)));
    return std::unique_ptr<IKernel>(new GatherElementsKernel(bytes, axis));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    ASSIGN_OR_RETURN(ElementsPlan p, PlanElements(ctx.node(), x.shape(), indices.shape(), axis_));
    return WithIndices(ctx.node(), indices, [&](const auto* idx) -> Status {
      const int64_t n = indices.numel();
      const int64_t dim = p.dim;
      const int64_t bad = FirstOutOfRange(idx, n, [dim](int64_t) { return dim; });
      if (bad >= 0) return IndexOutOfRange(ctx.node(), static_cast<int64_t>(idx[bad]), dim);
      const char* src = static_cast<const char*>(x.raw_data());
      char* dst = static_cast<char*>(ctx.output(0)->raw_data());
      const size_t es = bytes_;
      WithElement(es, [&](auto element) {
        ForChunks(p.outer * p.inner, n * static_cast<int64_t>(es), [&](int64_t c0, int64_t c1) {
          ForColumnRange(c0, c1, p.inner, [&](int64_t o, int64_t ib, int64_t ie) {
            const int64_t base = p.outer_at[static_cast<size_t>(o)];
            for (int64_t j = 0; j < p.len; ++j) {
              const int64_t row = (o * p.len + j) * p.inner;
              for (int64_t i = ib; i < ie; ++i) {
                auto v = static_cast<int64_t>(idx[row + i]);
                if (v < 0) v += dim;
                const int64_t from = base + v * p.axis_stride + p.inner_at[static_cast<size_t>(i)];
                element.Copy(dst + static_cast<size_t>(row + i) * es, src + static_cast<size_t>(from) * es);
              }
            }
          });
        });
      });
      return Status();
    });
  }

 private:
  GatherElementsKernel(size_t bytes, int64_t axis) : bytes_(bytes), axis_(axis) {}
  size_t bytes_;
  int64_t axis_;
};

// Scatter reductions: "none" overwrites; add and mul came with opset 16, max and min with 18.
enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Result<Reduction> ScatterReduction(const Node& node, int64_t opset) {
  const std::string name = node.GetString("reduction", "none");
  Reduction r = Reduction::kNone;
  int64_t since = 1;
  if (name == "add" || name == "mul") {
    r = name == "add" ? Reduction::kAdd : Reduction::kMul;
    since = 16;
  } else if (name == "max" || name == "min") {
    r = name == "max" ? Reduction::kMax : Reduction::kMin;
    since = 18;
  } else if (name != "none") {
    return Unsupported("reduction '" + name + "' (the reference reports it)");
  }
  if (opset < since || (node.op_type == "Scatter" && r != Reduction::kNone)) {
    return Unsupported("reduction '" + name + "' at opset " + std::to_string(opset) + " (the reference reports it)");
  }
  return r;
}

// slot ∘ update as the reference combines them: bool as or/and, numbers in their own type, the 16-bit
// floats through float (even "none").
template <Reduction R, typename T>
T Combine(T slot, T update) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (R == Reduction::kAdd || R == Reduction::kMax) return slot || update;
    if constexpr (R == Reduction::kMul || R == Reduction::kMin) return slot && update;
    return update;
  } else if constexpr (std::is_arithmetic_v<T>) {
    if constexpr (R == Reduction::kAdd) return static_cast<T>(slot + update);
    if constexpr (R == Reduction::kMul) return static_cast<T>(slot * update);
    if constexpr (R == Reduction::kMax) return std::max(slot, update);
    if constexpr (R == Reduction::kMin) return std::min(slot, update);
    return update;
  } else {
    return T(Combine<R, float>(static_cast<float>(slot), static_cast<float>(update)));
  }
}

// f(tag, std::integral_constant<Reduction, R>) for the node's dtype and reduction.
template <typename F>
Status WithReduction(const Node& node, DType dtype, Reduction r, const F& f) {
  return VisitKernelDType(node, dtype, [&](auto tag) -> Status {
    switch (r) {
      case Reduction::kAdd: return f(tag, std::integral_constant<Reduction, Reduction::kAdd>{});
      case Reduction::kMul: return f(tag, std::integral_constant<Reduction, Reduction::kMul>{});
      case Reduction::kMax: return f(tag, std::integral_constant<Reduction, Reduction::kMax>{});
      case Reduction::kMin: return f(tag, std::integral_constant<Reduction, Reduction::kMin>{});
      case Reduction::kNone: break;
    }
    return f(tag, std::integral_constant<Reduction, Reduction::kNone>{});
  });
}

class ScatterElementsKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    const ValueInfo* updates = InputInfo(init, 2);
    RETURN_IF_ERROR(MovedBytes(x, "data").status());
    RETURN_IF_ERROR(CheckIndexInput(InputInfo(init, 1), "indices"));
    if (updates == nullptr || updates->dtype != x->dtype) return Unsupported("updates missing or of another dtype");
    if (x->shape.empty() || InputInfo(init, 1)->shape.size() != x->shape.size()) {
      return Unsupported("data and indices of different ranks (the reference reports it)");
    }
    ASSIGN_OR_RETURN(int64_t axis, AxisIn(init.node.GetInt("axis", 0), Rank(*x)));
    ASSIGN_OR_RETURN(Reduction r, ScatterReduction(init.node, init.opset));
    return std::unique_ptr<IKernel>(new ScatterElementsKernel(axis, r));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    const Tensor& updates = *ctx.input(2);
    Tensor& y = *ctx.output(0);
    ASSIGN_OR_RETURN(ElementsPlan p, PlanElements(ctx.node(), x.shape(), indices.shape(), axis_));
    if (updates.numel() != indices.numel()) return ctx.Error("updates must match indices");
    return WithIndices(ctx.node(), indices, [&](const auto* idx) -> Status {
      const int64_t n = indices.numel();
      const int64_t dim = p.dim;
      const int64_t bad = FirstOutOfRange(idx, n, [dim](int64_t) { return dim; });
      if (bad >= 0) return IndexOutOfRange(ctx.node(), static_cast<int64_t>(idx[bad]), dim);
      CopyBytes(y.raw_data(), x.raw_data(), x.nbytes());
      return WithReduction(ctx.node(), y.dtype(), reduction_, [&](auto tag, auto reduction) -> Status {
        using T = decltype(tag);
        constexpr Reduction R = decltype(reduction)::value;
        const T* u = updates.data<T>();
        T* out = y.data<T>();
        // Elements of one column (o, i) all differ from another column's in a coordinate off the
        // axis, so columns run in parallel; along a column the updates apply in the reference's order.
        ForChunks(p.outer * p.inner, n, [&](int64_t c0, int64_t c1) {
          ForColumnRange(c0, c1, p.inner, [&](int64_t o, int64_t ib, int64_t ie) {
            const int64_t base = p.outer_at[static_cast<size_t>(o)];
            for (int64_t j = 0; j < p.len; ++j) {
              const int64_t row = (o * p.len + j) * p.inner;
              for (int64_t i = ib; i < ie; ++i) {
                auto v = static_cast<int64_t>(idx[row + i]);
                if (v < 0) v += dim;
                T& slot = out[base + v * p.axis_stride + p.inner_at[static_cast<size_t>(i)]];
                slot = Combine<R>(slot, u[row + i]);
              }
            }
          });
        });
        return Status();
      });
    });
  }

 private:
  ScatterElementsKernel(int64_t axis, Reduction r) : axis_(axis), reduction_(r) {}
  int64_t axis_;
  Reduction reduction_;
};

// ---------------------------------------------------------------------------------------------
// GatherND, ScatterND

// indices [batch…, M…, k] address slices of data [batch…, k dims…, slice…].
struct NDPlan {
  int64_t batch = 1, per_batch = 1, k = 0, slice = 1, data_batch = 1;
};

Result<NDPlan> PlanND(const Node& node, const Shape& data, const Shape& indices, int64_t b) {
  const auto r = static_cast<int64_t>(data.size());
  const auto q = static_cast<int64_t>(indices.size());
  if (q < 1 || b < 0 || b >= std::min(r, q) || indices.back() > r - b) {
    return InvalidArgument(node.Describe() + ": indices " + ShapeToString(indices) + " do not fit data " +
                           ShapeToString(data) + " with batch_dims " + std::to_string(b));
  }
  const auto ub = static_cast<size_t>(b);
  NDPlan p;
  p.k = indices.back();
  p.batch = Product(data, 0, ub);
  p.per_batch = Product(indices, ub, indices.size() - 1);
  p.slice = Product(data, ub + static_cast<size_t>(p.k), data.size());
  p.data_batch = Product(data, ub, data.size());
  return p;
}

// The data offset of each (batch, index tuple)'s slice; the first index out of range is reported as
// the reference reports it.
Result<std::vector<int64_t>> NDOffsets(const Node& node, const Tensor& data, const Tensor& indices, int64_t b,
                                       const NDPlan& p) {
  const int64_t tuples = p.batch * p.per_batch;
  std::vector<int64_t> offsets(static_cast<size_t>(tuples));
  const std::vector<int64_t> strides = Strides(data.shape());
  const auto ub = static_cast<size_t>(b);
  RETURN_IF_ERROR(WithIndices(node, indices, [&](const auto* idx) -> Status {
    const int64_t n = indices.numel();
    const int64_t k = p.k;
    auto dim_at = [&](int64_t pos) { return data.dim(b + pos % k); };
    const int64_t bad = n == 0 ? -1 : FirstOutOfRange(idx, n, dim_at);
    if (bad >= 0) {
      return InvalidArgument(node.Describe() + ": index " + std::to_string(static_cast<int64_t>(idx[bad])) +
                             " is out of range for dim " + std::to_string(b + bad % k) + " of size " +
                             std::to_string(dim_at(bad)));
    }
    ForChunks(tuples, tuples * std::max<int64_t>(k, 1), [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        int64_t at = (t / p.per_batch) * p.data_batch;
        for (int64_t j = 0; j < k; ++j) {
          const auto d = ub + static_cast<size_t>(j);
          auto v = static_cast<int64_t>(idx[t * k + j]);
          if (v < 0) v += data.shape()[d];
          at += v * strides[d];
        }
        offsets[static_cast<size_t>(t)] = at;
      }
    });
    return Status();
  }));
  return offsets;
}

class GatherNDKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    ASSIGN_OR_RETURN(size_t bytes, MovedBytes(x, "data"));
    const ValueInfo* indices = InputInfo(init, 1);
    RETURN_IF_ERROR(CheckIndexInput(indices, "indices"));
    const int64_t b = init.opset >= 12 ? init.node.GetInt("batch_dims", 0) : 0;
    if (indices->shape.empty() || b < 0 || b >= std::min(Rank(*x), Rank(*indices))) {
      return Unsupported("batch_dims " + std::to_string(b) + " does not fit (the reference reports it)");
    }
    return std::unique_ptr<IKernel>(new GatherNDKernel(bytes, b));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    ASSIGN_OR_RETURN(NDPlan p, PlanND(ctx.node(), x.shape(), indices.shape(), batch_dims_));
    ASSIGN_OR_RETURN(std::vector<int64_t> offsets, NDOffsets(ctx.node(), x, indices, batch_dims_, p));
    const auto block = static_cast<size_t>(p.slice) * bytes_;
    if (block == 0) return Status();
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(ctx.output(0)->raw_data());
    const auto tuples = static_cast<int64_t>(offsets.size());
    ForChunks(tuples, tuples * static_cast<int64_t>(block), [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        std::memcpy(dst + static_cast<size_t>(t) * block,
                    src + static_cast<size_t>(offsets[static_cast<size_t>(t)]) * bytes_, block);
      }
    });
    return Status();
  }

 private:
  GatherNDKernel(size_t bytes, int64_t batch_dims) : bytes_(bytes), batch_dims_(batch_dims) {}
  size_t bytes_;
  int64_t batch_dims_;
};

class ScatterNDKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    const ValueInfo* updates = InputInfo(init, 2);
    RETURN_IF_ERROR(MovedBytes(x, "data").status());
    const ValueInfo* indices = InputInfo(init, 1);
    RETURN_IF_ERROR(CheckIndexInput(indices, "indices"));
    if (updates == nullptr || updates->dtype != x->dtype) return Unsupported("updates missing or of another dtype");
    if (indices->shape.empty() || x->shape.empty()) return Unsupported("scalar data or indices");
    ASSIGN_OR_RETURN(Reduction r, ScatterReduction(init.node, init.opset));
    return std::unique_ptr<IKernel>(new ScatterNDKernel(r));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    const Tensor& updates = *ctx.input(2);
    Tensor& y = *ctx.output(0);
    ASSIGN_OR_RETURN(NDPlan p, PlanND(ctx.node(), x.shape(), indices.shape(), 0));
    ASSIGN_OR_RETURN(std::vector<int64_t> offsets, NDOffsets(ctx.node(), x, indices, 0, p));
    const auto tuples = static_cast<int64_t>(offsets.size());
    if (updates.numel() != tuples * p.slice) return ctx.Error("updates do not match indices");
    CopyBytes(y.raw_data(), x.raw_data(), x.nbytes());
    return WithReduction(ctx.node(), y.dtype(), reduction_, [&](auto tag, auto reduction) -> Status {
      using T = decltype(tag);
      constexpr Reduction R = decltype(reduction)::value;
      const T* u = updates.data<T>();
      T* out = y.data<T>();
      // Slices start at multiples of the slice size, so element e of one slice can only meet element
      // e of another: threads split the slice, each applies every update to its part in order.
      const int64_t slice = p.slice;
      const int64_t parts = slice * static_cast<int64_t>(sizeof(T)) >= 4096 ? slice : 1;
      ForChunks(parts, tuples * slice, [&](int64_t e0, int64_t e1) {
        const int64_t from = parts == 1 ? 0 : e0;
        const int64_t to = parts == 1 ? slice : e1;
        for (int64_t t = 0; t < tuples; ++t) {
          T* dst = out + offsets[static_cast<size_t>(t)];
          const T* src = u + t * slice;
          for (int64_t e = from; e < to; ++e) dst[e] = Combine<R>(dst[e], src[e]);
        }
      });
      return Status();
    });
  }

 private:
  explicit ScatterNDKernel(Reduction r) : reduction_(r) {}
  Reduction reduction_;
};

// ---------------------------------------------------------------------------------------------
// ArgMax, ArgMin, TopK, CumSum: [outer, len, inner] around one axis

struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisView ViewAround(const Shape& shape, int64_t axis) {
  const auto a = static_cast<size_t>(axis);
  return {Product(shape, 0, a), shape[a], Product(shape, a + 1, shape.size())};
}

Status CheckNumeric(const ValueInfo* v, const std::string& name) {
  if (v == nullptr) return Unsupported("input '" + name + "' is missing");
  if (DTypeSize(v->dtype) == 0) return Unsupported(std::string(DTypeName(v->dtype)) + " input '" + name + "'");
  return Status();
}

template <bool kMax>
class ArgKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    RETURN_IF_ERROR(CheckNumeric(x, "data"));
    if (x->shape.empty()) return Unsupported("scalar input (the reference reports it)");
    ASSIGN_OR_RETURN(int64_t axis, AxisIn(init.node.GetInt("axis", 0), Rank(*x)));
    const bool last = init.opset >= 12 && init.node.GetInt("select_last_index", 0) != 0;
    return std::unique_ptr<IKernel>(new ArgKernel(axis, last));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const AxisView v = ViewAround(x.shape(), axis_);
    if (v.len == 0) return ctx.Error("cannot take the arg-extreme of an empty axis");
    int64_t* out = ctx.output(0)->data<int64_t>();
    return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      using C = Compared<T>;
      const T* in = x.data<T>();
      // The reference's comparison: a later element replaces the best one when better, or, with
      // select_last_index, when not worse.
      auto replaces = [&](C a, C b) { return (kMax ? a > b : a < b) || (last_ && !(kMax ? b > a : b < a)); };
      if (v.inner == 1) {
        ForChunks(v.outer, x.numel(), [&](int64_t o0, int64_t o1) {
          for (int64_t o = o0; o < o1; ++o) {
            const T* row = in + o * v.len;
            auto value = static_cast<C>(row[0]);
            int64_t best = 0;
            for (int64_t k = 1; k < v.len; ++k) {
              const auto a = static_cast<C>(row[k]);
              if (replaces(a, value)) {
                best = k;
                value = a;
              }
            }
            out[o] = best;
          }
        });
        return Status();
      }
      ForChunks(v.outer * v.inner, x.numel(), [&](int64_t c0, int64_t c1) {
        // Per column: the best index so far and its value, updated a row of the axis at a time.
        std::vector<C> value(static_cast<size_t>(std::min(v.inner, c1 - c0)));
        std::vector<int64_t> best(value.size());
        ForColumnRange(c0, c1, v.inner, [&](int64_t o, int64_t ib, int64_t ie) {
          const T* base = in + o * v.len * v.inner;
          for (int64_t i = ib; i < ie; ++i) {
            value[static_cast<size_t>(i - ib)] = static_cast<C>(base[i]);
            best[static_cast<size_t>(i - ib)] = 0;
          }
          for (int64_t k = 1; k < v.len; ++k) {
            const T* row = base + k * v.inner;
            for (int64_t i = ib; i < ie; ++i) {
              const auto s = static_cast<size_t>(i - ib);
              const auto a = static_cast<C>(row[i]);
              if (replaces(a, value[s])) {
                best[s] = k;
                value[s] = a;
              }
            }
          }
          for (int64_t i = ib; i < ie; ++i) out[o * v.inner + i] = best[static_cast<size_t>(i - ib)];
        });
      });
      return Status();
    });
  }

 private:
  ArgKernel(int64_t axis, bool last) : axis_(axis), last_(last) {}
  int64_t axis_;
  bool last_;
};

class TopKKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    RETURN_IF_ERROR(CheckNumeric(x, "X"));
    if (x->shape.empty()) return Unsupported("scalar input (the reference reports it)");
    int64_t k = init.node.GetInt("k", -1);
    bool k_at_run = false;
    if (init.opset >= 10) {
      // K given at run time: the executor sizes the outputs from it, and Run reads it there.
      const Tensor* k_input = ConstantInput(init, 1);
      if (k_input != nullptr && k_input->numel() != 1) {
        return Unsupported("K does not hold one value (the reference reports it)");
      }
      k_at_run = k_input == nullptr;
      if (!k_at_run) k = k_input->GetAsInt64(0);
    }
    ASSIGN_OR_RETURN(int64_t axis, AxisIn(init.node.GetInt("axis", -1), Rank(*x)));
    const int64_t len = x->shape[static_cast<size_t>(axis)];
    if (!k_at_run && (k < 0 || (len >= 0 && k > len))) {
      return Unsupported("K = " + std::to_string(k) + " outside [0, " + std::to_string(len) + "]");
    }
    const bool largest = init.opset < 11 || init.node.GetInt("largest", 1) != 0;
    return std::unique_ptr<IKernel>(new TopKKernel(axis, k_at_run ? -1 : k, largest));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const AxisView v = ViewAround(x.shape(), axis_);
    const int64_t k = k_at_compile_ >= 0 ? k_at_compile_ : ctx.input(1)->GetAsInt64(0);
    if (k < 0) return ctx.Error("K = " + std::to_string(k) + " is negative");
    if (k > v.len) return ctx.Error("K = " + std::to_string(k) + " exceeds the axis of " + std::to_string(v.len));
    Tensor* values = ctx.output(0);
    Tensor* indices = ctx.output(1);
    if (k == 0 || v.outer * v.inner == 0) return Status();
    return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      using C = Compared<T>;
      const T* in = x.data<T>();
      T* out_values = values != nullptr ? values->data<T>() : nullptr;
      int64_t* out_indices = indices != nullptr ? indices->data<int64_t>() : nullptr;
      const int64_t rows = v.outer * v.inner;
      ForChunks(rows, x.numel() * 4, [&](int64_t r0, int64_t r1) {
        std::vector<C> row(static_cast<size_t>(v.len));
        std::vector<int64_t> order(static_cast<size_t>(v.len));
        // The reference's order: a stable sort by value (NaN above every number), so equal values keep
        // the lower index first; made a total order here by breaking ties on the index.
        auto before = [&](int64_t a, int64_t b) {
          const C va = row[static_cast<size_t>(a)];
          const C vb = row[static_cast<size_t>(b)];
          if (IsNan(va) || IsNan(vb)) return largest_ ? IsNan(va) && !IsNan(vb) : IsNan(vb) && !IsNan(va);
          return largest_ ? va > vb : va < vb;
        };
        auto less = [&](int64_t a, int64_t b) {
          if (before(a, b)) return true;
          if (before(b, a)) return false;
          return a < b;
        };
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t o = r / v.inner;
          const int64_t i = r - o * v.inner;
          const T* base = in + o * v.len * v.inner + i;
          for (int64_t j = 0; j < v.len; ++j) row[static_cast<size_t>(j)] = static_cast<C>(base[j * v.inner]);
          std::iota(order.begin(), order.end(), int64_t{0});
          if (k < v.len) {
            std::partial_sort(order.begin(), order.begin() + k, order.end(), less);
          } else {
            std::sort(order.begin(), order.end(), less);
          }
          for (int64_t j = 0; j < k; ++j) {
            const int64_t dst = (o * k + j) * v.inner + i;
            const int64_t src = order[static_cast<size_t>(j)];
            if (out_values != nullptr) out_values[dst] = base[src * v.inner];
            if (out_indices != nullptr) out_indices[dst] = src;
          }
        }
      });
      return Status();
    });
  }

 private:
  TopKKernel(int64_t axis, int64_t k, bool largest) : axis_(axis), k_at_compile_(k), largest_(largest) {}
  int64_t axis_;
  int64_t k_at_compile_;  // < 0: input K, read when the node runs
  bool largest_;
};

class CumSumKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    RETURN_IF_ERROR(CheckNumeric(x, "x"));
    if (x->dtype == DType::kBool) return Unsupported("bool input (the reference reports it)");
    if (InputInfo(init, 1) == nullptr) return Unsupported("input 'axis' is missing");
    int64_t axis = -1;  // read at run time
    if (const Tensor* a = ConstantInput(init, 1)) {
      if (a->numel() != 1) return Unsupported("axis does not hold one value (the reference reports it)");
      ASSIGN_OR_RETURN(axis, AxisIn(a->GetAsInt64(0), Rank(*x)));
    }
    const bool exclusive = init.node.GetInt("exclusive", 0) != 0;
    const bool reverse = init.node.GetInt("reverse", 0) != 0;
    return std::unique_ptr<IKernel>(new CumSumKernel(axis, exclusive, reverse));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    int64_t axis = axis_;
    if (axis < 0) {
      const Tensor* a = ctx.input(1);
      if (a == nullptr || a->numel() != 1) return ctx.Error("input 'axis' must hold exactly one value");
      ASSIGN_OR_RETURN(axis, NormalizeAxis(a->GetAsInt64(0), x.rank(), ctx.node()));
    }
    const AxisView v = ViewAround(x.shape(), axis);
    return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      // As the reference: integers accumulate exactly in 64 bits, floating types in double.
      using Acc =
          std::conditional_t<std::is_integral_v<T>, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>, double>;
      const T* in = x.data<T>();
      T* out = ctx.output(0)->data<T>();
      ForChunks(v.outer * v.inner, x.numel(), [&](int64_t c0, int64_t c1) {
        std::vector<Acc> sum(static_cast<size_t>(std::min(v.inner, c1 - c0)));
        ForColumnRange(c0, c1, v.inner, [&](int64_t o, int64_t ib, int64_t ie) {
          std::fill(sum.begin(), sum.end(), Acc{});
          for (int64_t step = 0; step < v.len; ++step) {
            const int64_t k = reverse_ ? v.len - 1 - step : step;
            const int64_t row = (o * v.len + k) * v.inner;
            for (int64_t i = ib; i < ie; ++i) {
              Acc& s = sum[static_cast<size_t>(i - ib)];
              const auto value = static_cast<Acc>(in[row + i]);  // NOLINT(bugprone-signed-char-misuse)
              if (!exclusive_) s += value;
              if constexpr (std::is_integral_v<T>) {
                out[row + i] = static_cast<T>(s);
              } else {
                out[row + i] = FromDouble<T>(s);
              }
              if (exclusive_) s += value;
            }
          }
        });
      });
      return Status();
    });
  }

 private:
  CumSumKernel(int64_t axis, bool exclusive, bool reverse) : axis_(axis), exclusive_(exclusive), reverse_(reverse) {}
  int64_t axis_;
  bool exclusive_;
  bool reverse_;
};

// ---------------------------------------------------------------------------------------------
// Trilu, Expand, Tile, DepthToSpace, SpaceToDepth

class TriluKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    ASSIGN_OR_RETURN(size_t bytes, MovedBytes(x, "input"));
    if (x->shape.size() < 2) return Unsupported("rank below 2 (the reference reports it)");
    return std::unique_ptr<IKernel>(new TriluKernel(bytes, init.node.GetInt("upper", 1) != 0));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor* k_input = ctx.input(1);
    int64_t k = k_input != nullptr && k_input->numel() > 0 ? k_input->GetAsInt64(0) : 0;
    const int64_t rows = x.dim(x.rank() - 2);
    const int64_t cols = x.dim(x.rank() - 1);
    if (rows == 0 || cols == 0) return Status();
    // Only diagonals within the matrix matter; clamping keeps row + k from overflowing.
    k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
    const int64_t all_rows = x.numel() / cols;
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(ctx.output(0)->raw_data());
    const auto row_bytes = static_cast<size_t>(cols) * bytes_;
    ForChunks(all_rows, all_rows * static_cast<int64_t>(row_bytes), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t i = r % rows;
        // Kept: columns j with j − i >= k (upper) or j − i <= k (lower); the rest are zeros.
        const int64_t split = std::clamp<int64_t>(upper_ ? i + k : i + k + 1, 0, cols);
        const auto at = static_cast<size_t>(split) * bytes_;
        char* to = dst + static_cast<size_t>(r) * row_bytes;
        const char* from = src + static_cast<size_t>(r) * row_bytes;
        if (upper_) {
          std::memset(to, 0, at);
          std::memcpy(to + at, from + at, row_bytes - at);
        } else {
          std::memcpy(to, from, at);
          std::memset(to + at, 0, row_bytes - at);
        }
      }
    });
    return Status();
  }

 private:
  TriluKernel(size_t bytes, bool upper) : bytes_(bytes), upper_(upper) {}
  size_t bytes_;
  bool upper_;
};

class ExpandKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    // A shape given at run time is fine: Run broadcasts into the output the executor sized from it.
    ASSIGN_OR_RETURN(size_t bytes, MovedBytes(InputInfo(init, 0), "input"));
    return std::unique_ptr<IKernel>(new ExpandKernel(bytes));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    Tensor& y = *ctx.output(0);
    const size_t rank = y.shape().size();
    if (x.shape().size() > rank) return ctx.Error("output rank below the input's");
    const size_t pad = rank - x.shape().size();
    const std::vector<int64_t> in_strides = Strides(x.shape());
    StridedCopy copy{y.shape(), std::vector<int64_t>(rank, 0)};
    for (size_t d = pad; d < rank; ++d) {
      const int64_t in = x.shape()[d - pad];
      if (in != 1 && in != y.shape()[d]) return ctx.Error("input does not broadcast to the output");
      copy.strides[d] = in == 1 ? 0 : in_strides[d - pad];
    }
    copy.Run(static_cast<const char*>(x.raw_data()), static_cast<char*>(y.raw_data()), bytes_);
    return Status();
  }

 private:
  explicit ExpandKernel(size_t bytes) : bytes_(bytes) {}
  size_t bytes_;
};

class TileKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    ASSIGN_OR_RETURN(size_t bytes, MovedBytes(x, "input"));
    // Repeats given at run time are read there (the executor sized the output from them).
    std::vector<int64_t> r;
    if (const Tensor* repeats = ConstantInput(init, 1)) {
      r = repeats->ToInt64Vector();
      if (r.size() != x->shape.size() || std::any_of(r.begin(), r.end(), [](int64_t v) { return v < 0; })) {
        return Unsupported("repeats do not fit the input (the reference reports it)");
      }
    }
    return std::unique_ptr<IKernel>(new TileKernel(bytes, std::move(r)));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const std::vector<int64_t> repeats = repeats_.empty() ? ctx.input(1)->ToInt64Vector() : repeats_;
    if (repeats.size() != x.shape().size()) return ctx.Error("repeats do not match the input's rank");
    // Output dim d of size r·n is the pair (repeat, coordinate) of sizes (r, n) and strides (0, stride).
    const std::vector<int64_t> in_strides = Strides(x.shape());
    StridedCopy copy;
    for (size_t d = 0; d < repeats.size(); ++d) {
      copy.dims.insert(copy.dims.end(), {repeats[d], x.shape()[d]});
      copy.strides.insert(copy.strides.end(), {0, in_strides[d]});
    }
    copy.Run(static_cast<const char*>(x.raw_data()), static_cast<char*>(ctx.output(0)->raw_data()), bytes_);
    return Status();
  }

 private:
  TileKernel(size_t bytes, std::vector<int64_t> repeats) : bytes_(bytes), repeats_(std::move(repeats)) {}
  size_t bytes_;
  std::vector<int64_t> repeats_;  // empty: input repeats, read when the node runs
};

// DepthToSpace (kToSpace) and SpaceToDepth: a deep NCHW tensor of C·b² channels against a wide one of b×
// the height and width. DCR orders the deep channels as (bh, bw, c), CRD as (c, bh, bw).
template <bool kToSpace>
class SpaceDepthKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    ASSIGN_OR_RETURN(size_t bytes, MovedBytes(x, "input"));
    const int64_t b = init.node.GetInt("blocksize", 0);
    const std::string mode = kToSpace ? init.node.GetString("mode", "DCR") : "DCR";
    if (b <= 0 || x->shape.size() != 4 || (mode != "DCR" && mode != "CRD")) {
      return Unsupported("blocksize, mode or rank invalid (the reference reports it)");
    }
    return std::unique_ptr<IKernel>(new SpaceDepthKernel(bytes, b, mode == "CRD"));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    Tensor& y = *ctx.output(0);
    const int64_t b = block_;
    StridedCopy copy;
    if constexpr (kToSpace) {
      // Output (n, c, h, bh, w, bw) reads input channel (bh·b + bw)·C + c (DCR) or (c·b + bh)·b + bw (CRD).
      const int64_t n = x.dim(0), c = y.dim(1), h = x.dim(2), w = x.dim(3), hw = h * w;
      copy.dims = {n, c, h, b, w, b};
      if (crd_) {
        copy.strides = {x.dim(1) * hw, b * b * hw, w, b * hw, 1, hw};
      } else {
        copy.strides = {x.dim(1) * hw, hw, w, b * c * hw, 1, c * hw};
      }
    } else {
      // Output (n, bh, bw, c, h, w) reads input (n, c, h·b + bh, w·b + bw).
      const int64_t n = x.dim(0), c = x.dim(1), h = y.dim(2), w = y.dim(3), wide_w = x.dim(3);
      copy.dims = {n, b, b, c, h, w};
      copy.strides = {c * x.dim(2) * wide_w, wide_w, 1, x.dim(2) * wide_w, b * wide_w, b};
    }
    copy.Run(static_cast<const char*>(x.raw_data()), static_cast<char*>(y.raw_data()), bytes_);
    return Status();
  }

 private:
  SpaceDepthKernel(size_t bytes, int64_t block, bool crd) : bytes_(bytes), block_(block), crd_(crd) {}
  size_t bytes_;
  int64_t block_;
  bool crd_;
};

// ---------------------------------------------------------------------------------------------
// Split

class SplitKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    ASSIGN_OR_RETURN(size_t bytes, MovedBytes(x, "input"));
    if (x->shape.empty()) return Unsupported("scalar input (the reference reports it)");
    ASSIGN_OR_RETURN(int64_t axis, AxisIn(init.node.GetInt("axis", 0), Rank(*x)));
    std::vector<int64_t> sizes;
    if (init.opset >= 13) {
      if (init.node.HasInput(1)) {
        // Sizes given at run time: Run takes them from the outputs the executor sized.
        const Tensor* split = ConstantInput(init, 1);
        if (split == nullptr) return std::unique_ptr<IKernel>(new SplitKernel(bytes, axis, {}, false, true));
        sizes = split->ToInt64Vector();
      }
    } else {
      sizes = init.node.GetInts("split");
    }
    const auto outputs = static_cast<int64_t>(init.node.outputs.size());
    if (!sizes.empty() && static_cast<int64_t>(sizes.size()) != outputs) {
      return Unsupported("split sizes do not match the outputs (the reference reports it)");
    }
    const bool chunks = sizes.empty() && init.opset >= 18 && init.node.Has("num_outputs");
    if (outputs == 0 || (chunks && init.node.GetInt("num_outputs", 0) != outputs)) {
      return Unsupported("num_outputs does not match the outputs (the reference reports it)");
    }
    return std::unique_ptr<IKernel>(new SplitKernel(bytes, axis, std::move(sizes), chunks, false));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const int64_t dim = x.dim(axis_);
    const auto n = static_cast<int64_t>(ctx.node().outputs.size());
    std::vector<int64_t> sizes = sizes_;
    if (sizes_from_outputs_) {
      for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        if (ctx.output(i) == nullptr) return ctx.Error("split sizes given at run time need every output");
        sizes.push_back(ctx.output(i)->dim(axis_));
      }
    } else if (sizes.empty() && chunks_) {
      // num_outputs: chunks of ceil(dim / n), the last one smaller when dim does not divide.
      const int64_t chunk = (dim + n - 1) / n;
      sizes.assign(static_cast<size_t>(n), chunk);
      sizes.back() = dim - chunk * (n - 1);
    } else if (sizes.empty()) {
      sizes.assign(static_cast<size_t>(n), dim / n);
    }
    std::vector<int64_t> offsets(sizes.size());
    int64_t offset = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      offsets[i] = offset;
      offset += sizes[i];
      if (sizes[i] < 0) return ctx.Error("negative split size");
    }
    if (offset > dim) return ctx.Error("split sizes exceed the dim of " + std::to_string(dim));
    const int64_t outer = Product(x.shape(), 0, static_cast<size_t>(axis_));
    const auto inner =
        static_cast<size_t>(Product(x.shape(), static_cast<size_t>(axis_) + 1, x.shape().size())) * bytes_;
    const char* src = static_cast<const char*>(x.raw_data());
    ForChunks(outer * n, static_cast<int64_t>(x.nbytes()), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t o = p / n;
        const auto i = static_cast<size_t>(p - o * n);
        Tensor* y = ctx.output(i);
        if (y == nullptr || sizes[i] == 0 || inner == 0) continue;
        std::memcpy(static_cast<char*>(y->raw_data()) + static_cast<size_t>(o * sizes[i]) * inner,
                    src + static_cast<size_t>(o * dim + offsets[i]) * inner, static_cast<size_t>(sizes[i]) * inner);
      }
    });
    return Status();
  }

 private:
  SplitKernel(size_t bytes, int64_t axis, std::vector<int64_t> sizes, bool chunks, bool sizes_from_outputs)
      : bytes_(bytes),
        axis_(axis),
        sizes_(std::move(sizes)),
        chunks_(chunks),
        sizes_from_outputs_(sizes_from_outputs) {}
  size_t bytes_;
  int64_t axis_;
  std::vector<int64_t> sizes_;  // empty: equal parts (or num_outputs chunks) of the run-time dim
  bool chunks_;
  bool sizes_from_outputs_;  // split input given at run time: the executor sized each output from it
};

// ---------------------------------------------------------------------------------------------
// OneHot, EyeLike, Range, ConstantOfShape, Shape

class OneHotKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* indices = InputInfo(init, 0);
    RETURN_IF_ERROR(CheckNumeric(indices, "indices"));
    ASSIGN_OR_RETURN(size_t bytes, MovedBytes(InputInfo(init, 2), "values"));
    // A depth given at run time is the output's dim on the axis, which the executor sized from it.
    const Tensor* depth = ConstantInput(init, 1);
    if (depth != nullptr && (depth->numel() != 1 || static_cast<int64_t>(depth->GetAsDouble(0)) < 1)) {
      return Unsupported("depth is not one positive value (the reference reports it)");
    }
    ASSIGN_OR_RETURN(int64_t axis, AxisIn(init.node.GetInt("axis", -1), Rank(*indices) + 1));
    return std::unique_ptr<IKernel>(new OneHotKernel(bytes, axis));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& indices = *ctx.input(0);
    const Tensor& values = *ctx.input(2);
    Tensor& y = *ctx.output(0);
    if (values.numel() != 2) return ctx.Error("values must hold [off_value, on_value]");
    const int64_t depth = y.dim(axis_);
    const int64_t outer = Product(y.shape(), 0, static_cast<size_t>(axis_));
    const int64_t inner = Product(y.shape(), static_cast<size_t>(axis_) + 1, y.shape().size());
    const size_t es = bytes_;
    const char* off = static_cast<const char*>(values.raw_data());
    const char* on = off + es;
    char* out = static_cast<char*>(y.raw_data());
    return VisitKernelDType(ctx.node(), indices.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* idx = indices.data<T>();
      WithElement(es, [&](auto element) {
        ForChunks(outer, static_cast<int64_t>(y.nbytes()), [&](int64_t o0, int64_t o1) {
          for (int64_t o = o0; o < o1; ++o) {
            char* block = out + static_cast<size_t>(o * depth * inner) * es;
            element.Fill(block, depth * inner, off);
            for (int64_t i = 0; i < inner; ++i) {
              // As the reference reads it: the value through double, truncated; negatives count from the end.
              auto index = static_cast<int64_t>(static_cast<double>(idx[o * inner + i]));
              if (index < 0) index += depth;
              if (index >= 0 && index < depth) element.Copy(block + static_cast<size_t>(index * inner + i) * es, on);
            }
          }
        });
      });
      return Status();
    });
  }

 private:
  OneHotKernel(size_t bytes, int64_t axis) : bytes_(bytes), axis_(axis) {}
  size_t bytes_;
  int64_t axis_;
};

class EyeLikeKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    if (x == nullptr) return Unsupported("input is missing");
    if (x->shape.size() != 2) return Unsupported("input not 2-D (the reference reports it)");
    DType dtype = x->dtype;
    if (init.node.Has("dtype")) {
      const std::optional<DType> d = DTypeFromOnnx(static_cast<int32_t>(init.node.GetInt("dtype", 0)));
      if (!d) return Unsupported("dtype attribute unknown (the reference reports it)");
      dtype = *d;
    }
    if (DTypeSize(dtype) == 0) return Unsupported(std::string(DTypeName(dtype)) + " output");
    auto kernel = std::unique_ptr<EyeLikeKernel>(new EyeLikeKernel());
    kernel->k_ = init.node.GetInt("k", 0);
    kernel->one_.resize(DTypeSize(dtype));
    RETURN_IF_ERROR(VisitKernelDType(init.node, dtype, [&](auto tag) -> Status {
      using T = decltype(tag);
      const T one = FromDouble<T>(1.0);
      std::memcpy(kernel->one_.data(), &one, sizeof(T));
      return Status();
    }));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    Tensor& y = *ctx.output(0);
    const size_t es = one_.size();
    if (DTypeSize(y.dtype()) != es) return ctx.Error("output dtype differs from the one planned");
    const int64_t rows = y.dim(0);
    const int64_t cols = y.dim(1);
    if (rows == 0 || cols == 0) return Status();
    const int64_t k = std::clamp<int64_t>(k_, -rows - 1, cols + 1);
    char* out = static_cast<char*>(y.raw_data());
    const auto row_bytes = static_cast<size_t>(cols) * es;
    ForChunks(rows, static_cast<int64_t>(y.nbytes()), [&](int64_t r0, int64_t r1) {
      std::memset(out + static_cast<size_t>(r0) * row_bytes, 0, static_cast<size_t>(r1 - r0) * row_bytes);
      for (int64_t i = r0; i < r1; ++i) {
        const int64_t j = i + k;
        if (j >= 0 && j < cols) std::memcpy(out + static_cast<size_t>(i * cols + j) * es, one_.data(), es);
      }
    });
    return Status();
  }

 private:
  EyeLikeKernel() = default;
  int64_t k_ = 0;
  std::vector<char> one_;
};

class RangeKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    // Values given at run time are read there; the executor sized the output from them.
    const ValueInfo* start = InputInfo(init, 0);
    const ValueInfo* limit = InputInfo(init, 1);
    const ValueInfo* delta = InputInfo(init, 2);
    auto scalar = [](const ValueInfo* v) { return v->shape.empty() || (v->shape.size() == 1 && v->shape[0] == 1); };
    if (start == nullptr || limit == nullptr || delta == nullptr) return Unsupported("an input is missing");
    if (start->dtype != limit->dtype || start->dtype != delta->dtype || start->dtype == DType::kBool ||
        DTypeSize(start->dtype) == 0 || !scalar(start) || !scalar(delta) || !scalar(limit)) {
      return Unsupported("start, limit and delta are not scalars of one numeric dtype (the reference reports it)");
    }
    return std::unique_ptr<IKernel>(new RangeKernel());
  }

  Status Run(KernelContext& ctx) override {
    Tensor& y = *ctx.output(0);
    const Tensor& start = *ctx.input(0);
    const Tensor& delta = *ctx.input(2);
    return VisitKernelDType(ctx.node(), y.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      T* out = y.data<T>();
      const int64_t s = start.GetAsInt64(0), d = delta.GetAsInt64(0);
      const double sf = start.GetAsDouble(0), df = delta.GetAsDouble(0);
      ForChunks(y.numel(), y.numel(), [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          if constexpr (std::is_integral_v<T>) {
            out[i] = static_cast<T>(s + i * d);
          } else {
            out[i] = FromDouble<T>(sf + static_cast<double>(i) * df);
          }
        }
      });
      return Status();
    });
  }

 private:
  RangeKernel() = default;
};

class ConstantOfShapeKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    // A shape given at run time is fine: Run fills the output the executor sized from it.
    auto kernel = std::unique_ptr<ConstantOfShapeKernel>(new ConstantOfShapeKernel());
    if (const Tensor* value = init.node.GetTensor("value")) {
      if (value->numel() != 1) return Unsupported("value does not hold one element (the reference reports it)");
      if (DTypeSize(value->dtype()) == 0) return Unsupported(std::string(DTypeName(value->dtype())) + " value");
      const auto* bytes = static_cast<const char*>(value->raw_data());
      kernel->value_.assign(bytes, bytes + DTypeSize(value->dtype()));
    } else {
      kernel->value_.assign(sizeof(float), 0);  // float 0
    }
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    Tensor& y = *ctx.output(0);
    if (DTypeSize(y.dtype()) != value_.size()) return ctx.Error("output dtype differs from the value's");
    FillElements(static_cast<char*>(y.raw_data()), y.numel(), value_.data(), value_.size());
    return Status();
  }

 private:
  ConstantOfShapeKernel() = default;
  std::vector<char> value_;
};

class ShapeKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    if (InputInfo(init, 0) == nullptr) return Unsupported("input is missing");
    return std::unique_ptr<IKernel>(new ShapeKernel(init.opset >= 15, init.node.Has("start"), init.node.Has("end"),
                                                    init.node.GetInt("start", 0), init.node.GetInt("end", 0)));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const int64_t rank = x.rank();
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = sliced_ && has_start_ ? clamp(start_) : 0;
    const int64_t end = sliced_ && has_end_ ? clamp(end_) : rank;
    Tensor& y = *ctx.output(0);
    if (y.numel() != std::max<int64_t>(end - start, 0)) return ctx.Error("output size differs from the planned");
    for (int64_t d = start; d < end; ++d) y.data<int64_t>()[d - start] = x.dim(d);
    return Status();
  }

 private:
  ShapeKernel(bool sliced, bool has_start, bool has_end, int64_t start, int64_t end)
      : sliced_(sliced), has_start_(has_start), has_end_(has_end), start_(start), end_(end) {}
  bool sliced_;  // opset 15: start and end
  bool has_start_, has_end_;
  int64_t start_, end_;
};

// ---------------------------------------------------------------------------------------------
// NonZero: the coordinates of the non-zero elements in row-major order, as an i64 [rank, count]
// tensor (a scalar counts as rank 1). Chunks of the input count in parallel, then each writes its
// coordinates from its prefix offset. The kernel sizes its output itself (IKernel::AllocatesOutputs):
// the op's shape function would count them once more.

class NonZeroKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    if (x == nullptr) return Unsupported("input is missing");
    if (DTypeSize(x->dtype) == 0) return Unsupported(std::string(DTypeName(x->dtype)) + " input");
    return std::unique_ptr<IKernel>(new NonZeroKernel());
  }
  bool AllocatesOutputs() const override { return true; }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* in = x.data<T>();
      const int64_t n = x.numel();
      const int64_t chunks = n >= kParallelFrom ? std::max(1, omp_get_max_threads()) : 1;
      auto begin_of = [&](int64_t c) { return n * c / chunks; };
      std::vector<int64_t> offsets(static_cast<size_t>(chunks) + 1, 0);
#pragma omp parallel for schedule(static) if (chunks > 1)
      for (int64_t c = 0; c < chunks; ++c) {
        int64_t count = 0;
        for (int64_t i = begin_of(c); i < begin_of(c + 1); ++i) count += NonZero(in[i]) ? 1 : 0;
        offsets[static_cast<size_t>(c) + 1] = count;
      }
      for (size_t c = 1; c < offsets.size(); ++c) offsets[c] += offsets[c - 1];
      const int64_t total = offsets.back();
      const Shape& shape = x.shape();
      const auto rank = static_cast<int64_t>(std::max<size_t>(shape.size(), 1));
      Tensor& out = *ctx.output(0);
      if (!out.defined()) {
        out = Tensor(DType::kI64, {rank, total});  // AllocatesOutputs: handed an empty Tensor
      } else if (out.shape() != Shape{rank, total}) {
        return Internal(ctx.node().Describe() + ": output was sized " + ShapeToString(out.shape()) + " for " +
                        std::to_string(total) + " non-zero elements");
      }
      int64_t* coords = out.data<int64_t>();
      if (total == 0) return Status();  // also every empty input: no dim of 0 to divide by below
#pragma omp parallel for schedule(static) if (chunks > 1)
      for (int64_t c = 0; c < chunks; ++c) {
        // The coordinate of the chunk's first element, then an odometer.
        std::vector<int64_t> at(shape.size(), 0);
        for (int64_t rest = begin_of(c), d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
          at[static_cast<size_t>(d)] = rest % shape[static_cast<size_t>(d)];
          rest /= shape[static_cast<size_t>(d)];
        }
        int64_t k = offsets[static_cast<size_t>(c)];
        for (int64_t i = begin_of(c); i < begin_of(c + 1); ++i) {
          if (NonZero(in[i])) {
            if (shape.empty()) coords[k] = 0;
            for (size_t d = 0; d < shape.size(); ++d) coords[static_cast<int64_t>(d) * total + k] = at[d];
            ++k;
          }
          for (size_t d = shape.size(); d-- > 0;) {
            if (++at[d] < shape[d]) break;
            at[d] = 0;
          }
        }
      }
      return Status();
    });
  }

 private:
  NonZeroKernel() = default;
  template <typename T>
  static bool NonZero(T v) {
    if constexpr (std::is_arithmetic_v<T>) {
      return v != T{};
    } else {
      return static_cast<float>(v) != 0.0f;  // f16, bf16: NaN counts as non-zero, as in the reference
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Factories

template <typename K>
KernelResult Create(const KernelInit& init) {
  return K::Create(init);
}

}  // namespace

void AddIndexKernels(KernelTable& t) {
  constexpr auto kCpu = DeviceKind::kCpu;
  constexpr auto kFp32 = Precision::kFp32;
  t.Add("Gather", "", kCpu, kFp32, {"cpu:gather", Create<GatherKernel>});
  t.Add("GatherElements", "", kCpu, kFp32, {"cpu:gather-elements", Create<GatherElementsKernel>});
  t.Add("GatherND", "", kCpu, kFp32, {"cpu:gather-nd", Create<GatherNDKernel>});
  t.Add("ScatterElements", "", kCpu, kFp32, {"cpu:scatter-elements", Create<ScatterElementsKernel>});
  t.Add("Scatter", "", kCpu, kFp32, {"cpu:scatter-elements", Create<ScatterElementsKernel>});
  t.Add("ScatterND", "", kCpu, kFp32, {"cpu:scatter-nd", Create<ScatterNDKernel>});
  t.Add("ArgMax", "", kCpu, kFp32, {"cpu:arg-reduce", Create<ArgKernel<true>>});
  t.Add("ArgMin", "", kCpu, kFp32, {"cpu:arg-reduce", Create<ArgKernel<false>>});
  t.Add("TopK", "", kCpu, kFp32, {"cpu:topk", Create<TopKKernel>});
  t.Add("CumSum", "", kCpu, kFp32, {"cpu:cumsum", Create<CumSumKernel>});
  t.Add("Trilu", "", kCpu, kFp32, {"cpu:trilu", Create<TriluKernel>});
  t.Add("Expand", "", kCpu, kFp32, {"cpu:expand", Create<ExpandKernel>});
  t.Add("Tile", "", kCpu, kFp32, {"cpu:tile", Create<TileKernel>});
  t.Add("Split", "", kCpu, kFp32, {"cpu:split", Create<SplitKernel>});
  t.Add("DepthToSpace", "", kCpu, kFp32, {"cpu:depth-to-space", Create<SpaceDepthKernel<true>>});
  t.Add("SpaceToDepth", "", kCpu, kFp32, {"cpu:space-to-depth", Create<SpaceDepthKernel<false>>});
  t.Add("OneHot", "", kCpu, kFp32, {"cpu:one-hot", Create<OneHotKernel>});
  t.Add("EyeLike", "", kCpu, kFp32, {"cpu:eye-like", Create<EyeLikeKernel>});
  t.Add("Range", "", kCpu, kFp32, {"cpu:range", Create<RangeKernel>});
  t.Add("ConstantOfShape", "", kCpu, kFp32, {"cpu:constant-of-shape", Create<ConstantOfShapeKernel>});
  t.Add("Shape", "", kCpu, kFp32, {"cpu:shape", Create<ShapeKernel>});
  t.Add("NonZero", "", kCpu, kFp32, {"cpu:nonzero", Create<NonZeroKernel>});
}

}  // namespace chipfit::cpu
