// DFT, STFT, HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix on the CPU: own OpenMP loops
// over plain tensors (kernel_groups.h).
//
// They compute what the reference does (core/reference/signal.cpp), in double, each value rounded once
// to the output's dtype. DFT and STFT gather each line to transform (the points along the axis, or
// one windowed frame) into a double buffer, zero-padded or truncated to dft_length, and transform it:
// an iterative radix-2 FFT when the length is a power of two, a direct sum over a table of twiddles
// up to kDirectMax points, else Bluestein's chirp-z (the transform as a convolution, done with a
// power-of-two FFT). Twiddles, chirp and filter are computed once per length in double and kept in
// the kernel while the length stays. An inverse transform is the forward one of the conjugate,
// conjugated and scaled by 1/length. Lines run on OpenMP threads, each alone, so results do not
// depend on the thread count. Inputs that set sizes (dft_length, axis, frame_step, frame_length,
// a window's size, MelWeightMatrix's inputs) are read from the tensors each run, so they may be
// computed; the executor sized the outputs from them with the reference's shape function, and the
// kernels check the sizes they write. Input dtypes: f32, f64, f16 and bf16 (read as double);
// the generators write any numeric output_datatype, as the reference.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<IKernel>>;

// Lengths up to this that are not a power of two use the direct sum (n² multiply-adds): below it
// Bluestein's three FFTs of 2n..4n points cost about as much, above it far less.
constexpr int64_t kDirectMax = 32;
// Work (multiply-adds, butterflies) from which lines run on several threads; a fork/join costs ~1 µs.
constexpr int64_t kParallelWork = 16384;
// Window points from which the generators fork (a cos costs ~10 ns).
constexpr int64_t kParallelWindow = 16384;

const ValueInfo* InputInfo(const KernelInit& init, size_t i) {
  return i < init.inputs.size() ? init.inputs[i] : nullptr;
}

// An input present at Init must have an integer dtype (the sizes and axes); else the reference reports it.
Status CheckIntegerInput(const KernelInit& init, size_t i, const char* name) {
  const ValueInfo* v = InputInfo(init, i);
  if (v != nullptr && !IsIntegerDType(v->dtype)) {
    return Unsupported(std::string(DTypeName(v->dtype)) + " " + name + " (an integer; the reference reports it)");
  }
  return Status();
}

// A scalar input read at run time; the messages are the reference's.
Result<int64_t> ScalarInt(const KernelContext& ctx, const Tensor& t, const std::string& what) {
  if (t.numel() != 1 || !IsIntegerDType(t.dtype())) {
    return ctx.Error(what + " must be one integer, got " + DescribeTensor(t));
  }
  return t.GetAsInt64(0);
}

Result<double> ScalarFloat(const KernelContext& ctx, const Tensor& t, const std::string& what) {
  if (t.numel() != 1) return ctx.Error(what + " must be one value, got " + DescribeTensor(t));
  return t.GetAsDouble(0);
}

Status CheckOutput(const KernelContext& ctx, const Tensor* out, DType dtype, const Shape& shape) {
  if (out == nullptr || out->dtype() != dtype || out->shape() != shape) {
    return ctx.Error("the output is not " + std::string(DTypeName(dtype)) + ShapeToString(shape) +
                     ", the shape this run's inputs give");
  }
  return Status();
}

template <typename T>
double ToDouble(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(v);
  } else {
    return static_cast<double>(static_cast<float>(v));  // Float16, BFloat16
  }
}

// f(T{}) for the floating-point dtypes the transforms read and write.
template <typename F>
Status VisitFloat(const KernelContext& ctx, DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF32: return f(float{});
    case DType::kF64: return f(double{});
    case DType::kF16: return f(Float16{});
    case DType::kBF16: return f(BFloat16{});
    default: return ctx.Error("input must be floating point, got " + std::string(DTypeName(dtype)));
  }
}

// ---------------------------------------------------------------------------------------------
// Transforms of one length

struct Complex {
  double re = 0;
  double im = 0;
};

// Written out: std::complex's operator* checks for NaN and infinity through a library call.
inline Complex Mul(Complex a, Complex b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
inline Complex Conj(Complex a) { return {a.re, -a.im}; }

// e^(−iπ·num/den); the caller keeps num/den in [0, 2) so the angle stays small and accurate.
Complex Turn(uint64_t num, uint64_t den) {
  const double angle = std::numbers::pi * static_cast<double>(num) / static_cast<double>(den);
  return {std::cos(angle), -std::sin(angle)};
}

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }
// Bits needed to write n (0 for 0): log2(n) + 1 for a power of two.
int64_t BitWidth(int64_t n) { return static_cast<int64_t>(std::bit_width(static_cast<uint64_t>(n))); }

// The in-place forward FFT of a power-of-two length: the bit-reversal permutation, then log2(n)
// stages of butterflies.
class Radix2 {
 public:
  explicit Radix2(int64_t n) : n_(n), reversed_(static_cast<size_t>(n)), twiddles_(static_cast<size_t>(n / 2)) {
    const int64_t bits = BitWidth(n) - 1;
    for (int64_t i = 1; i < n; ++i) {
      const auto u = static_cast<size_t>(i);
      reversed_[u] = (reversed_[u >> 1] >> 1) | ((i & 1) << (bits - 1));
    }
    // e^(−2πik/n) for k < n/2.
    for (size_t k = 0; k < twiddles_.size(); ++k) twiddles_[k] = Turn(2 * k, static_cast<uint64_t>(n));
  }

  void Forward(Complex* a) const {
    for (int64_t i = 0; i < n_; ++i) {
      const int64_t j = reversed_[static_cast<size_t>(i)];
      if (i < j) std::swap(a[i], a[j]);
    }
    for (int64_t half = 1; half < n_; half *= 2) {
      const int64_t stride = n_ / (2 * half);
      for (int64_t start = 0; start < n_; start += 2 * half) {
        Complex* lo = a + start;
        Complex* hi = lo + half;
        for (int64_t j = 0; j < half; ++j) {
          const Complex v = Mul(hi[j], twiddles_[static_cast<size_t>(j * stride)]);
          const Complex u = lo[j];
          lo[j] = {u.re + v.re, u.im + v.im};
          hi[j] = {u.re - v.re, u.im - v.im};
        }
      }
    }
  }

 private:
  int64_t n_;
  std::vector<int64_t> reversed_;
  std::vector<Complex> twiddles_;
};

// The forward DFT of one length, X[k] = Σ x[t]·e^(−2πikt/n), with what it precomputes.
class DftPlan {
 public:
  explicit DftPlan(int64_t n) : n_(n) {
    const auto un = static_cast<uint64_t>(n);
    if (IsPowerOfTwo(n)) {
      method_ = Method::kRadix2;
      fft_.emplace(n);
      cost_ = n * std::max<int64_t>(1, BitWidth(n) - 1);
    } else if (n <= kDirectMax) {
      method_ = Method::kDirect;
      twiddles_.resize(static_cast<size_t>(n));
      for (uint64_t m = 0; m < un; ++m) twiddles_[m] = Turn(2 * m, un);
      cost_ = n * n;
      work_ = n;
    } else {
      PlanBluestein(n);
    }
  }

  int64_t length() const { return n_; }
  int64_t cost() const { return cost_; }       // per transform, for the decision to fork
  int64_t work_size() const { return work_; }  // complex values of scratch Forward needs

  // data[0, n) in; data[0, bins) out: X[0] .. X[bins − 1].
  void Forward(Complex* data, int64_t bins, Complex* work) const {
    switch (method_) {
      case Method::kRadix2: fft_->Forward(data); return;
      case Method::kDirect: Direct(data, bins, work); return;
      case Method::kBluestein: Bluestein(data, bins, work); return;
    }
  }

 private:
  enum class Method { kRadix2, kDirect, kBluestein };

  // nk = (n² + k² − (k − n)²) / 2 makes X[k] = c[k]·Σ (x[t]·c[t])·conj(c[k − t]) with the chirp
  // c[j] = e^(−iπj²/n): a convolution, done circularly over m ≥ 2n − 1 points with FFTs.
  void PlanBluestein(int64_t n) {
    method_ = Method::kBluestein;
    const auto un = static_cast<uint64_t>(n);
    const int64_t m = int64_t{1} << BitWidth(2 * n - 2);  // the least power of two >= 2n - 1
    chirp_.resize(static_cast<size_t>(n));
    // j² mod 2n: e^(−iπj²/n) has period 2n in j², and the angle stays below 2π.
    for (uint64_t j = 0; j < un; ++j) chirp_[j] = Turn(j * j % (2 * un), un);
    // conj(c[j]) at j and at m − j (negative j), FFT'd once; the inverse FFT's 1/m folded in.
    filter_.assign(static_cast<size_t>(m), Complex{});
    filter_[0] = Conj(chirp_[0]);
    for (int64_t j = 1; j < n; ++j) {
      filter_[static_cast<size_t>(j)] = filter_[static_cast<size_t>(m - j)] = Conj(chirp_[static_cast<size_t>(j)]);
    }
    fft_.emplace(m);
    fft_->Forward(filter_.data());
    const double inv_m = 1.0 / static_cast<double>(m);
    for (Complex& f : filter_) f = {f.re * inv_m, f.im * inv_m};
    const int64_t log_m = BitWidth(m) - 1;
    cost_ = 2 * m * log_m + 3 * m;
    work_ = m;
  }

  // Σ over t with the twiddle index k·t mod n kept by addition, as the reference sums.
  void Direct(Complex* data, int64_t bins, Complex* work) const {
    std::copy(data, data + n_, work);
    for (int64_t k = 0; k < bins; ++k) {
      double re = 0, im = 0;
      int64_t m = 0;
      for (int64_t t = 0; t < n_; ++t) {
        const Complex x = work[t];
        const Complex w = twiddles_[static_cast<size_t>(m)];
        re += x.re * w.re - x.im * w.im;
        im += x.re * w.im + x.im * w.re;
        m += k;
        if (m >= n_) m -= n_;
      }
      data[k] = {re, im};
    }
  }

  void Bluestein(Complex* data, int64_t bins, Complex* work) const {
    const auto m = static_cast<int64_t>(filter_.size());
    for (int64_t j = 0; j < n_; ++j) work[j] = Mul(data[j], chirp_[static_cast<size_t>(j)]);
    std::fill(work + n_, work + m, Complex{});
    fft_->Forward(work);
    // The inverse FFT as the forward one of the conjugate, conjugated after.
    for (int64_t j = 0; j < m; ++j) work[j] = Conj(Mul(work[j], filter_[static_cast<size_t>(j)]));
    fft_->Forward(work);
    for (int64_t k = 0; k < bins; ++k) data[k] = Mul(chirp_[static_cast<size_t>(k)], Conj(work[k]));
  }

  int64_t n_;
  Method method_ = Method::kDirect;
  int64_t cost_ = 0;
  int64_t work_ = 0;
  std::optional<Radix2> fft_;      // kRadix2: n points; kBluestein: m points
  std::vector<Complex> twiddles_;  // kDirect: e^(−2πij/n), j < n
  std::vector<Complex> chirp_;     // kBluestein: c[j], j < n
  std::vector<Complex> filter_;    // kBluestein: FFT of conj(c) wrapped to m points, over m
};

// The plan of the last length a kernel ran, rebuilt when the length changes.
const DftPlan& PlanFor(std::unique_ptr<DftPlan>& plan, int64_t n) {
  if (plan == nullptr || plan->length() != n) plan = std::make_unique<DftPlan>(n);
  return *plan;
}

// Transforms `lines` independent lines: load(line, buf) writes buf[0, n), store(line, buf) reads the
// bins of buf[0, bins). Each thread has its own buffers; a line's result does not depend on which.
template <typename Load, typename Store>
void TransformLines(const DftPlan& plan, int64_t lines, int64_t bins, bool inverse, const Load& load,
                    const Store& store) {
  if (lines <= 0) return;
  const int64_t n = plan.length();
  const double scale = 1.0 / static_cast<double>(n);
  const bool parallel = lines > 1 && lines * plan.cost() >= kParallelWork;
#pragma omp parallel if (parallel)
  {
    std::vector<Complex> buf(static_cast<size_t>(n));
    std::vector<Complex> work(static_cast<size_t>(plan.work_size()));
#pragma omp for schedule(static)
    for (int64_t line = 0; line < lines; ++line) {
      load(line, buf.data());
      if (inverse) {
        // IDFT(x) = conj(DFT(conj(x))) / n.
        for (Complex& v : buf) v.im = -v.im;
        plan.Forward(buf.data(), bins, work.data());
        for (int64_t k = 0; k < bins; ++k) {
          Complex& v = buf[static_cast<size_t>(k)];
          v = {v.re * scale, -v.im * scale};
        }
      } else {
        plan.Forward(buf.data(), bins, work.data());
      }
      store(line, buf.data());
    }
  }
}

// ---------------------------------------------------------------------------------------------
// DFT

// Where and how one run transforms: input (outer × in_len × inner × comps), output (outer × bins ×
// inner × 2).
struct DftGeometry {
  int64_t axis = 1;
  int64_t outer = 1, in_len = 0, inner = 1, comps = 1;
  int64_t length = 0, bins = 0;
  Shape out;
};

class DftKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    if (x == nullptr) return Unsupported("input is missing");
    if (!IsFloatingDType(x->dtype)) {
      return Unsupported(std::string(DTypeName(x->dtype)) + " input (floating point only; the reference reports it)");
    }
    const bool inverse = init.node.GetInt("inverse", 0) != 0;
    const bool onesided = init.node.GetInt("onesided", 0) != 0;
    if (onesided && inverse) return Unsupported("onesided=1 with inverse=1 (the reference reports it)");
    RETURN_IF_ERROR(CheckIntegerInput(init, 1, "dft_length"));
    if (init.opset >= 20) RETURN_IF_ERROR(CheckIntegerInput(init, 2, "axis"));
    return std::unique_ptr<IKernel>(new DftKernel(inverse, onesided));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    ASSIGN_OR_RETURN(const DftGeometry g, Geometry(ctx, x));
    RETURN_IF_ERROR(CheckOutput(ctx, ctx.output(0), x.dtype(), g.out));
    const DftPlan& plan = PlanFor(plan_, g.length);
    return VisitFloat(ctx, x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* out = ctx.output(0)->data<T>();
      const int64_t used = std::min(g.in_len, g.length);
      // Line = o·inner + i: the points (o, 0 .. in_len, i) along the axis.
      auto load = [&](int64_t line, Complex* buf) {
        const int64_t o = line / g.inner, i = line % g.inner;
        const T* src = in + (o * g.in_len * g.inner + i) * g.comps;
        const int64_t step = g.inner * g.comps;
        for (int64_t t = 0; t < used; ++t) {
          buf[t] = {ToDouble(src[t * step]), g.comps == 2 ? ToDouble(src[t * step + 1]) : 0.0};
        }
        std::fill(buf + used, buf + g.length, Complex{});
      };
      auto store = [&](int64_t line, const Complex* buf) {
        const int64_t o = line / g.inner, i = line % g.inner;
        T* dst = out + (o * g.bins * g.inner + i) * 2;
        for (int64_t k = 0; k < g.bins; ++k) {
          dst[k * g.inner * 2] = FromDouble<T>(buf[k].re);
          dst[k * g.inner * 2 + 1] = FromDouble<T>(buf[k].im);
        }
      };
      TransformLines(plan, g.outer * g.inner, g.bins, inverse_, load, store);
      return Status();
    });
  }

 private:
  DftKernel(bool inverse, bool onesided) : inverse_(inverse), onesided_(onesided) {}

  // The reference's checks and messages (PlanDft); the shape function ran them already on these values.
  Result<DftGeometry> Geometry(const KernelContext& ctx, const Tensor& x) const {
    const int64_t rank = x.rank();
    if (rank < 2 || (x.dim(rank - 1) != 1 && x.dim(rank - 1) != 2)) {
      return ctx.Error("input must be [..., 1] (real) or [..., 2] (complex), got " + ShapeToString(x.shape()));
    }
    DftGeometry g;
    int64_t axis = ctx.opset() >= 20 ? -2 : ctx.node().GetInt("axis", 1);
    if (ctx.opset() >= 20 && ctx.input(2) != nullptr) {
      ASSIGN_OR_RETURN(axis, ScalarInt(ctx, *ctx.input(2), "axis"));
    }
    if (axis < -rank || axis > rank - 2 || axis == -1) {
      return ctx.Error("axis " + std::to_string(axis) + " is outside [" + std::to_string(-rank) + ", -2] and [0, " +
                       std::to_string(rank - 2) + "] for input " + ShapeToString(x.shape()));
    }
    g.axis = axis < 0 ? axis + rank : axis;
    g.in_len = x.dim(g.axis);
    g.comps = x.dim(rank - 1);
    for (int64_t d = 0; d < rank - 1; ++d) {
      if (d < g.axis) g.outer *= x.dim(d);
      if (d > g.axis) g.inner *= x.dim(d);
    }
    g.length = g.in_len;
    if (ctx.input(1) != nullptr) {
      ASSIGN_OR_RETURN(g.length, ScalarInt(ctx, *ctx.input(1), "dft_length"));
      if (g.length <= 0) return ctx.Error("dft_length must be positive, got " + std::to_string(g.length));
    }
    if (g.length <= 0) return ctx.Error("cannot transform an empty axis");
    if (onesided_ && g.comps == 2) {
      return ctx.Error("onesided=1 needs a real input [..., 1]; a complex input has no conjugate-symmetric spectrum");
    }
    g.bins = onesided_ ? g.length / 2 + 1 : g.length;
    g.out = x.shape();
    g.out[static_cast<size_t>(g.axis)] = g.bins;
    g.out.back() = 2;
    return g;
  }

  bool inverse_;
  bool onesided_;
  std::unique_ptr<DftPlan> plan_;
};

// ---------------------------------------------------------------------------------------------
// STFT

class StftKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* signal = InputInfo(init, 0);
    if (signal == nullptr || InputInfo(init, 1) == nullptr) return Unsupported("signal or frame_step is missing");
    if (!IsFloatingDType(signal->dtype)) {
      return Unsupported(std::string(DTypeName(signal->dtype)) +
                         " signal (floating point only; the reference reports it)");
    }
    if (const ValueInfo* window = InputInfo(init, 2); window != nullptr && !IsFloatingDType(window->dtype)) {
      return Unsupported(std::string(DTypeName(window->dtype)) + " window (floating point only)");
    }
    RETURN_IF_ERROR(CheckIntegerInput(init, 1, "frame_step"));
    RETURN_IF_ERROR(CheckIntegerInput(init, 3, "frame_length"));
    return std::unique_ptr<IKernel>(new StftKernel(init.node.GetInt("onesided", 1) != 0));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& signal = *ctx.input(0);
    const Tensor* window = ctx.input(2);
    RETURN_IF_ERROR(Plan(ctx, signal, window));
    const int64_t batch = signal.dim(0), len = signal.dim(1), comps = signal.dim(2);
    RETURN_IF_ERROR(CheckOutput(ctx, ctx.output(0), signal.dtype(), {batch, frames_, bins_, 2}));
    window_.assign(static_cast<size_t>(frame_), 1.0);
    if (window != nullptr) {
      RETURN_IF_ERROR(VisitFloat(ctx, window->dtype(), [&](auto tag) -> Status {
        using W = decltype(tag);
        for (int64_t n = 0; n < frame_; ++n) window_[static_cast<size_t>(n)] = ToDouble(window->data<W>()[n]);
        return Status();
      }));
    }
    const DftPlan& plan = PlanFor(plan_, frame_);
    return VisitFloat(ctx, signal.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* in = signal.data<T>();
      T* out = ctx.output(0)->data<T>();
      const double* w = window_.data();
      // Line = b·frames + f: frame f of batch b, weighed by the window (the imaginary part too).
      auto load = [&](int64_t line, Complex* buf) {
        const int64_t b = line / frames_, f = line % frames_;
        const T* src = in + (b * len + f * step_) * comps;
        for (int64_t t = 0; t < frame_; ++t) {
          const double im = comps == 2 ? ToDouble(src[t * 2 + 1]) : 0.0;
          buf[t] = {ToDouble(src[t * comps]) * w[t], im * w[t]};
        }
      };
      auto store = [&](int64_t line, const Complex* buf) {
        T* dst = out + line * bins_ * 2;
        for (int64_t k = 0; k < bins_; ++k) {
          dst[2 * k] = FromDouble<T>(buf[k].re);
          dst[2 * k + 1] = FromDouble<T>(buf[k].im);
        }
      };
      TransformLines(plan, batch * frames_, bins_, false, load, store);
      return Status();
    });
  }

 private:
  explicit StftKernel(bool onesided) : onesided_(onesided) {}

  // step_, frame_, frames_, bins_ for this run; the reference's checks and messages (PlanStft).
  Status Plan(const KernelContext& ctx, const Tensor& signal, const Tensor* window) {
    const Shape& s = signal.shape();
    if (s.size() != 3 || (s[2] != 1 && s[2] != 2)) {
      return ctx.Error("signal must be [batch, length, 1] (real) or [batch, length, 2] (complex), got " +
                       ShapeToString(s));
    }
    ASSIGN_OR_RETURN(step_, ScalarInt(ctx, *ctx.input(1), "frame_step"));
    if (step_ <= 0) return ctx.Error("frame_step must be positive, got " + std::to_string(step_));
    if (window != nullptr && window->rank() != 1) {
      return ctx.Error("window must be 1-D, got " + ShapeToString(window->shape()));
    }
    // Without a window nor frame_length the whole signal is one frame, as in the ONNX reference.
    frame_ = window != nullptr ? window->dim(0) : s[1];
    if (const Tensor* frame_length = ctx.input(3); frame_length != nullptr) {
      ASSIGN_OR_RETURN(frame_, ScalarInt(ctx, *frame_length, "frame_length"));
      if (window != nullptr && window->dim(0) != frame_) {
        return ctx.Error("window has " + std::to_string(window->dim(0)) + " points but frame_length is " +
                         std::to_string(frame_));
      }
    }
    if (frame_ <= 0 || frame_ > s[1]) {
      return ctx.Error("frame length " + std::to_string(frame_) + " is outside [1, " + std::to_string(s[1]) +
                       "] (the signal's length)");
    }
    if (onesided_ && s[2] == 2) {
      return ctx.Error(
          "onesided=1 (the default) needs a real signal [batch, length, 1]; set onesided=0 for a complex one");
    }
    frames_ = (s[1] - frame_) / step_ + 1;
    bins_ = onesided_ ? frame_ / 2 + 1 : frame_;
    return Status();
  }

  bool onesided_;
  int64_t step_ = 0, frame_ = 0, frames_ = 0, bins_ = 0;
  std::vector<double> window_;
  std::unique_ptr<DftPlan> plan_;
};

// ---------------------------------------------------------------------------------------------
// HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix

// output_datatype as the reference's shape function accepts it (a numeric dtype; default float).
Status CheckOutputDatatype(const Node& node) {
  const int64_t code = node.GetInt("output_datatype", 1);
  const auto dtype = DTypeFromOnnx(static_cast<int32_t>(code));
  if (!dtype || *dtype == DType::kString || *dtype == DType::kBool) {
    return Unsupported("output_datatype " + std::to_string(code) +
                       " is not a numeric tensor type (the reference reports it)");
  }
  return Status();
}

// Generalised cosine windows: w[n] = a0 − a1·cos(2πn/N) + a2·cos(4πn/N), N = size (periodic) or size − 1.
struct CosineWindow {
  double a0, a1, a2;
};

class WindowKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* size = InputInfo(init, 0);
    if (size == nullptr) return Unsupported("size is missing");
    RETURN_IF_ERROR(CheckIntegerInput(init, 0, "size"));
    RETURN_IF_ERROR(CheckOutputDatatype(init.node));
    const std::string& op = init.node.op_type;
    CosineWindow c{0.5, 0.5, 0.0};  // HannWindow
    if (op == "HammingWindow") c = {25.0 / 46.0, 21.0 / 46.0, 0.0};
    if (op == "BlackmanWindow") c = {0.42, 0.5, 0.08};
    return std::unique_ptr<IKernel>(new WindowKernel(c, init.node.GetInt("periodic", 1) != 0));
  }

  Status Run(KernelContext& ctx) override {
    ASSIGN_OR_RETURN(const int64_t size, ScalarInt(ctx, *ctx.input(0), "size"));
    if (size < 0) return ctx.Error("size must be >= 0, got " + std::to_string(size));
    Tensor* out = ctx.output(0);
    if (out == nullptr || out->shape() != Shape{size}) return ctx.Error("the output does not hold `size` points");
    const int64_t period = periodic_ ? size : size - 1;
    return VisitKernelDType(ctx.node(), out->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      T* w = out->data<T>();
#pragma omp parallel for schedule(static) if (size >= kParallelWindow)
      for (int64_t n = 0; n < size; ++n) {
        // A symmetric window of one point would divide 0 by 0; it is 1, as in the reference.
        const double phase =
            period == 0 ? 0.0 : 2 * std::numbers::pi * static_cast<double>(n) / static_cast<double>(period);
        w[n] = FromDouble<T>(period == 0 ? 1.0 : c_.a0 - c_.a1 * std::cos(phase) + c_.a2 * std::cos(2 * phase));
      }
      return Status();
    });
  }

 private:
  WindowKernel(CosineWindow c, bool periodic) : c_(c), periodic_(periodic) {}
  CosineWindow c_;
  bool periodic_;
};

double HzToMel(double hz) { return 2595 * std::log10(1 + hz / 700); }
double MelToHz(double mel) { return 700 * (std::pow(10.0, mel / 2595) - 1); }

class MelWeightsKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    for (size_t i = 0; i < 5; ++i) {
      if (InputInfo(init, i) == nullptr) return Unsupported("an input is missing (the reference reports it)");
    }
    RETURN_IF_ERROR(CheckIntegerInput(init, 0, "num_mel_bins"));
    RETURN_IF_ERROR(CheckIntegerInput(init, 1, "dft_length"));
    RETURN_IF_ERROR(CheckIntegerInput(init, 2, "sample_rate"));
    RETURN_IF_ERROR(CheckOutputDatatype(init.node));
    return std::unique_ptr<IKernel>(new MelWeightsKernel());
  }

  Status Run(KernelContext& ctx) override {
    ASSIGN_OR_RETURN(const int64_t mels, ScalarInt(ctx, *ctx.input(0), "num_mel_bins"));
    ASSIGN_OR_RETURN(const int64_t length, ScalarInt(ctx, *ctx.input(1), "dft_length"));
    ASSIGN_OR_RETURN(const int64_t rate, ScalarInt(ctx, *ctx.input(2), "sample_rate"));
    ASSIGN_OR_RETURN(const double lower, ScalarFloat(ctx, *ctx.input(3), "lower_edge_hertz"));
    ASSIGN_OR_RETURN(const double upper, ScalarFloat(ctx, *ctx.input(4), "upper_edge_hertz"));
    if (mels <= 0 || length <= 0) {
      return ctx.Error("num_mel_bins and dft_length must be positive, got " + std::to_string(mels) + " and " +
                       std::to_string(length));
    }
    if (rate <= 0) return ctx.Error("sample_rate must be positive, got " + std::to_string(rate));
    const int64_t spectrum_bins = length / 2 + 1;
    Tensor* out = ctx.output(0);
    if (out == nullptr || out->shape() != Shape{spectrum_bins, mels}) {
      return ctx.Error("the output is not [dft_length / 2 + 1, num_mel_bins]");
    }
    ASSIGN_OR_RETURN(const std::vector<int64_t> edges, Edges(ctx, mels, length, rate, lower, upper));
    return VisitKernelDType(ctx.node(), out->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      T* w = out->data<T>();
      std::fill(w, w + out->numel(), FromDouble<T>(0.0));
      auto at = [&](int64_t bin, int64_t mel) -> T& { return w[bin * mels + mel]; };
      for (int64_t m = 0; m < mels; ++m) {
        const int64_t left = edges[static_cast<size_t>(m)];
        const int64_t center = edges[static_cast<size_t>(m + 1)];
        const int64_t right = edges[static_cast<size_t>(m + 2)];
        // Triangles rising from left to center, falling from center to right, written in the
        // reference's order (the falling side's first value overwrites the peak).
        if (center == left) {
          at(center, m) = FromDouble<T>(1.0);
        } else {
          for (int64_t j = left; j <= center; ++j) {
            at(j, m) = FromDouble<T>(static_cast<double>(j - left) / static_cast<double>(center - left));
          }
        }
        for (int64_t j = center; j < right; ++j) {
          at(j, m) = FromDouble<T>(static_cast<double>(right - j) / static_cast<double>(right - center));
        }
      }
      return Status();
    });
  }

 private:
  MelWeightsKernel() = default;

  // num_mel_bins + 2 edges evenly spaced in mel from lower_edge_hertz by (high − low) / (num_mel_bins
  // + 2), as the reference (and ONNX Runtime) step them, mapped to DFT bins by flooring.
  static Result<std::vector<int64_t>> Edges(const KernelContext& ctx, int64_t mels, int64_t length, int64_t rate,
                                            double lower, double upper) {
    const int64_t spectrum_bins = length / 2 + 1;
    const double low_mel = HzToMel(lower), high_mel = HzToMel(upper);
    const double step = (high_mel - low_mel) / static_cast<double>(mels + 2);
    std::vector<int64_t> edges(static_cast<size_t>(mels + 2));
    for (size_t i = 0; i < edges.size(); ++i) {
      const double hz = MelToHz(low_mel + static_cast<double>(i) * step);
      const double bin = std::floor(static_cast<double>(length + 1) * hz / static_cast<double>(rate));
      if (!(bin >= 0 && bin < static_cast<double>(spectrum_bins))) {
        return ctx.Error("the mel edge at " + std::to_string(hz) + " Hz falls outside the " +
                         std::to_string(spectrum_bins) + " DFT bins (lower_edge_hertz " + std::to_string(lower) +
                         ", upper_edge_hertz " + std::to_string(upper) + ", sample_rate " + std::to_string(rate) + ")");
      }
      edges[i] = static_cast<int64_t>(bin);
    }
    return edges;
  }
};

template <typename K>
KernelResult Create(const KernelInit& init) {
  return K::Create(init);
}

}  // namespace

void AddSignalKernels(KernelTable& t) {
  constexpr auto kCpu = DeviceKind::kCpu;
  constexpr auto kFp32 = Precision::kFp32;
  t.Add("DFT", "", kCpu, kFp32, {"cpu:dft", Create<DftKernel>});
  t.Add("STFT", "", kCpu, kFp32, {"cpu:stft", Create<StftKernel>});
  t.Add("HannWindow", "", kCpu, kFp32, {"cpu:window", Create<WindowKernel>});
  t.Add("HammingWindow", "", kCpu, kFp32, {"cpu:window", Create<WindowKernel>});
  t.Add("BlackmanWindow", "", kCpu, kFp32, {"cpu:window", Create<WindowKernel>});
  t.Add("MelWeightMatrix", "", kCpu, kFp32, {"cpu:mel-weights", Create<MelWeightsKernel>});
}

}  // namespace chipfit::cpu
