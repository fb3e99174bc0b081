// Reference DFT (opsets 17, 20), STFT (17), Hann/Hamming/BlackmanWindow (17) and MelWeightMatrix (17).
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

// One scalar input (shape [] or [1]) as an integer; `what` names it in the error.
Result<int64_t> ScalarInt(const Node& node, const Tensor& t, const std::string& what) {
  if (t.numel() != 1 || !IsIntegerDType(t.dtype())) {
    return InvalidArgument(node.Describe() + ": " + what + " must be one integer, got " + DescribeTensor(t));
  }
  return t.GetAsInt64(0);
}

Result<double> ScalarFloat(const Node& node, const Tensor& t, const std::string& what) {
  if (t.numel() != 1)
    return InvalidArgument(node.Describe() + ": " + what + " must be one value, got " + DescribeTensor(t));
  return t.GetAsDouble(0);
}

// The transform along one axis of (outer × len × inner) complex values, written to (outer × bins × inner).
// A plain O(n²) DFT in double: this is the reference the fast device kernels are checked against, and
// exactness matters more here than speed. Input points past `in_len` are zero (dft_length pads).
void Dft(const std::vector<double>& re, const std::vector<double>& im, int64_t outer, int64_t in_len, int64_t inner,
         int64_t length, int64_t bins, bool inverse, std::vector<double>& out_re, std::vector<double>& out_im) {
  const auto n_len = static_cast<size_t>(length);
  // Twiddles indexed by (k * n) mod length keep the angle small, hence accurate for long transforms.
  std::vector<double> cos_t(n_len), sin_t(n_len);
  for (size_t m = 0; m < n_len; ++m) {
    const double angle = 2 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(length);
    cos_t[m] = std::cos(angle);
    sin_t[m] = (inverse ? 1 : -1) * std::sin(angle);
  }
  const int64_t used = std::min(in_len, length);
  const double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
  out_re.assign(static_cast<size_t>(outer * bins * inner), 0.0);
  out_im.assign(out_re.size(), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < bins; ++k) {
        double sr = 0, si = 0;
        for (int64_t n = 0; n < used; ++n) {
          const size_t src = static_cast<size_t>((o * in_len + n) * inner + i);
          const auto m =
              static_cast<size_t>(static_cast<uint64_t>(k) * static_cast<uint64_t>(n) % static_cast<uint64_t>(length));
          sr += re[src] * cos_t[m] - im[src] * sin_t[m];
          si += re[src] * sin_t[m] + im[src] * cos_t[m];
        }
        const size_t dst = static_cast<size_t>((o * bins + k) * inner + i);
        out_re[dst] = sr * scale;
        out_im[dst] = si * scale;
      }
    }
  }
}

// Splits a [..., 1 or 2] tensor into real and imaginary parts.
void SplitComplex(const Tensor& x, std::vector<double>& re, std::vector<double>& im) {
  const int64_t comps = x.dim(x.rank() - 1);
  const int64_t n = x.numel() / std::max<int64_t>(comps, 1);
  re.assign(static_cast<size_t>(n), 0.0);
  im.assign(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    re[static_cast<size_t>(i)] = x.GetAsDouble(i * comps);
    if (comps == 2) im[static_cast<size_t>(i)] = x.GetAsDouble(i * comps + 1);
  }
}

Status WriteComplex(const Node& node, const std::vector<double>& re, const std::vector<double>& im, Tensor& out) {
  return VisitKernelDType(node, out.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    T* dst = out.data<T>();
    for (size_t i = 0; i < re.size(); ++i) {
      dst[2 * i] = FromDouble<T>(re[i]);
      dst[2 * i + 1] = FromDouble<T>(im[i]);
    }
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------------------------
// DFT

struct DftPlan {
  int64_t axis = 1;
  int64_t length = 0;  // dft_length: the transform's size
  int64_t bins = 0;    // output points along the axis
  bool inverse = false;
  Shape out;
};

// dft_length and (opset 20) axis are inputs; nullptr when omitted.
Result<DftPlan> PlanDft(const Node& node, int64_t opset, const ValueInfo& x, const Tensor* dft_length,
                        const Tensor* axis_input) {
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (rank < 2 || (x.shape.back() != 1 && x.shape.back() != 2)) {
    return InvalidArgument(node.Describe() + ": input must be [..., 1] (real) or [..., 2] (complex), got " +
                           ShapeToString(x.shape));
  }
  if (!IsFloatingDType(x.dtype)) {
    return InvalidArgument(node.Describe() + ": input must be floating point, got " + std::string(DTypeName(x.dtype)));
  }
  DftPlan p;
  int64_t axis = opset >= 20 ? -2 : node.GetInt("axis", 1);
  if (opset >= 20 && axis_input != nullptr) {
    ASSIGN_OR_RETURN(axis, ScalarInt(node, *axis_input, "axis"));
  }
  // The last axis holds the (real, imaginary) pair, so it can't be transformed.
  if (axis < -rank || axis > rank - 2 || axis == -1) {
    return InvalidArgument(node.Describe() + ": axis " + std::to_string(axis) + " is outside [" +
                           std::to_string(-rank) + ", -2] and [0, " + std::to_string(rank - 2) + "] for input " +
                           ShapeToString(x.shape));
  }
  p.axis = axis < 0 ? axis + rank : axis;
  p.length = x.shape[static_cast<size_t>(p.axis)];
  if (dft_length != nullptr) {
    ASSIGN_OR_RETURN(p.length, ScalarInt(node, *dft_length, "dft_length"));
    if (p.length <= 0)
      return InvalidArgument(node.Describe() + ": dft_length must be positive, got " + std::to_string(p.length));
  }
  if (p.length <= 0) return InvalidArgument(node.Describe() + ": cannot transform an empty axis");
  p.inverse = node.GetInt("inverse", 0) != 0;
  const bool onesided = node.GetInt("onesided", 0) != 0;
  if (onesided && p.inverse) {
    // Opset 17's reference truncates the inverse's output, later spec text reads it as an inverse real FFT.
    return Unsupported(node.Describe() +
                       ": onesided=1 with inverse=1 is not supported (its meaning differs "
                       "between ONNX versions); pass the full spectrum with onesided=0");
  }
  if (onesided && x.shape.back() == 2) {
    return InvalidArgument(node.Describe() +
                           ": onesided=1 needs a real input [..., 1]; a complex input has no "
                           "conjugate-symmetric spectrum");
  }
  p.bins = onesided ? p.length / 2 + 1 : p.length;
  p.out = x.shape;
  p.out[static_cast<size_t>(p.axis)] = p.bins;
  p.out.back() = 2;
  return p;
}

// Input 1 is dft_length; opset 20 added the axis as input 2.
Status InferDft(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  const Tensor* length = nullptr;
  const Tensor* axis = nullptr;
  if (ctx.input(1) != nullptr) length = ctx.RequireValue(1);
  if (ctx.opset() >= 20 && ctx.input(2) != nullptr) axis = ctx.RequireValue(2);
  if (ctx.value_missing()) return ctx.ValueNeeded();
  ASSIGN_OR_RETURN(DftPlan p, PlanDft(ctx.node(), ctx.opset(), *x, length, axis));
  ctx.SetOutput(0, x->dtype, p.out);
  return Status::Ok();
}

Status RunDft(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ValueInfo info;
  info.dtype = x.dtype();
  info.shape = x.shape();
  ASSIGN_OR_RETURN(DftPlan p,
                   PlanDft(ctx.node(), ctx.opset(), info, ctx.input(1), ctx.opset() >= 20 ? ctx.input(2) : nullptr));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.rank() - 1; ++d) {
    if (d < p.axis) outer *= x.dim(d);
    if (d > p.axis) inner *= x.dim(d);
  }
  std::vector<double> re, im, out_re, out_im;
  SplitComplex(x, re, im);
  Dft(re, im, outer, x.dim(p.axis), inner, p.length, p.bins, p.inverse, out_re, out_im);
  return WriteComplex(ctx.node(), out_re, out_im, *ctx.output(0));
}

// ---------------------------------------------------------------------------------------------
// STFT

struct StftPlan {
  int64_t step = 0, frame = 0, frames = 0, bins = 0;
};

// Inputs: signal [batch, length, 1|2], frame_step, window [frame] (optional), frame_length (optional).
Result<StftPlan> PlanStft(const Node& node, const ValueInfo& signal, const Tensor& step, const ValueInfo* window,
                          const Tensor* frame_length) {
  const Shape& s = signal.shape;
  if (s.size() != 3 || (s[2] != 1 && s[2] != 2)) {
    return InvalidArgument(node.Describe() +
                           ": signal must be [batch, length, 1] (real) or [batch, length, 2] "
                           "(complex), got " +
                           ShapeToString(s));
  }
  if (!IsFloatingDType(signal.dtype)) return InvalidArgument(node.Describe() + ": signal must be floating point");
  StftPlan p;
  ASSIGN_OR_RETURN(p.step, ScalarInt(node, step, "frame_step"));
  if (p.step <= 0)
    return InvalidArgument(node.Describe() + ": frame_step must be positive, got " + std::to_string(p.step));
  if (window != nullptr && window->shape.size() != 1) {
    return InvalidArgument(node.Describe() + ": window must be 1-D, got " + ShapeToString(window->shape));
  }
  // Without a window nor frame_length the whole signal is one frame, as in the ONNX reference.
  p.frame = window != nullptr ? window->shape[0] : s[1];
  if (frame_length != nullptr) {
    ASSIGN_OR_RETURN(p.frame, ScalarInt(node, *frame_length, "frame_length"));
    if (window != nullptr && window->shape[0] != p.frame) {
      return InvalidArgument(node.Describe() + ": window has " + std::to_string(window->shape[0]) +
                             " points but frame_length is " + std::to_string(p.frame));
    }
  }
  if (p.frame <= 0 || p.frame > s[1]) {
    return InvalidArgument(node.Describe() + ": frame length " + std::to_string(p.frame) + " is outside [1, " +
                           std::to_string(s[1]) + "] (the signal's length)");
  }
  const bool onesided = node.GetInt("onesided", 1) != 0;
  if (onesided && s[2] == 2) {
    return InvalidArgument(node.Describe() +
                           ": onesided=1 (the default) needs a real signal [batch, length, 1]; "
                           "set onesided=0 for a complex one");
  }
  p.frames = (s[1] - p.frame) / p.step + 1;
  p.bins = onesided ? p.frame / 2 + 1 : p.frame;
  return p;
}

Status InferStft(InferContext& ctx) {
  const ValueInfo* signal = ctx.input(0);
  if (signal == nullptr || ctx.input(1) == nullptr) return ctx.Error("needs inputs 'signal' and 'frame_step'");
  const Tensor* step = ctx.RequireValue(1);
  const Tensor* frame_length = ctx.input(3) != nullptr ? ctx.RequireValue(3) : nullptr;
  if (ctx.value_missing()) return ctx.ValueNeeded();
  const ValueInfo* window = ctx.input(2);
  ASSIGN_OR_RETURN(StftPlan p, PlanStft(ctx.node(), *signal, *step, window, frame_length));
  ctx.SetOutput(0, signal->dtype, {signal->shape[0], p.frames, p.bins, 2});
  return Status::Ok();
}

Status RunStft(KernelContext& ctx) {
  const Tensor& signal = *ctx.input(0);
  const Tensor* window = ctx.input(2);
  ValueInfo signal_info;
  signal_info.dtype = signal.dtype();
  signal_info.shape = signal.shape();
  ValueInfo window_info;
  if (window != nullptr) window_info.shape = window->shape();
  ASSIGN_OR_RETURN(StftPlan p,
                   PlanStft(ctx.node(), signal_info, *ctx.input(1), window ? &window_info : nullptr, ctx.input(3)));
  std::vector<double> re, im;
  SplitComplex(signal, re, im);
  const int64_t batch = signal.dim(0), len = signal.dim(1);
  // Frames, windowed, laid out (batch × frames) × frame so one DFT call transforms them all.
  std::vector<double> fr(static_cast<size_t>(batch * p.frames * p.frame)), fi(fr.size());
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < p.frames; ++f) {
      for (int64_t n = 0; n < p.frame; ++n) {
        const double w = window != nullptr ? window->GetAsDouble(n) : 1.0;
        const auto src = static_cast<size_t>(b * len + f * p.step + n);
        const auto dst = static_cast<size_t>((b * p.frames + f) * p.frame + n);
        fr[dst] = re[src] * w;
        fi[dst] = im[src] * w;
      }
    }
  }
  std::vector<double> out_re, out_im;
  Dft(fr, fi, batch * p.frames, p.frame, 1, p.frame, p.bins, false, out_re, out_im);
  return WriteComplex(ctx.node(), out_re, out_im, *ctx.output(0));
}

// ---------------------------------------------------------------------------------------------
// HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix

Result<DType> OutputDatatype(const Node& node) {
  const int64_t code = node.GetInt("output_datatype", 1);  // 1: float
  const auto dtype = DTypeFromOnnx(static_cast<int32_t>(code));
  if (!dtype || *dtype == DType::kString || *dtype == DType::kBool) {
    return InvalidArgument(node.Describe() + ": output_datatype " + std::to_string(code) +
                           " is not a numeric tensor type");
  }
  return *dtype;
}

Result<int64_t> WindowSize(const Node& node, const Tensor& size) {
  ASSIGN_OR_RETURN(int64_t n, ScalarInt(node, size, "size"));
  if (n < 0) return InvalidArgument(node.Describe() + ": size must be >= 0, got " + std::to_string(n));
  return n;
}

Status InferWindow(InferContext& ctx) {
  if (ctx.input(0) == nullptr) return ctx.Error("missing input 'size'");
  ASSIGN_OR_RETURN(DType dtype, OutputDatatype(ctx.node()));
  const Tensor* size = ctx.RequireValue(0);
  if (size == nullptr) return ctx.ValueNeeded();
  ASSIGN_OR_RETURN(int64_t n, WindowSize(ctx.node(), *size));
  ctx.SetOutput(0, dtype, {n});
  return Status::Ok();
}

// Generalised cosine windows: w[n] = a0 - a1 cos(2πn/N) + a2 cos(4πn/N), with N = size (periodic) or
// size - 1 (symmetric). The coefficients by op (not template parameters: clang before 18 has no
// floating-point ones).
struct CosineWindow {
  double a0, a1, a2;
};
CosineWindow WindowCoefficients(const std::string& op) {
  if (op == "HammingWindow") return {25.0 / 46.0, 21.0 / 46.0, 0.0};
  if (op == "BlackmanWindow") return {0.42, 0.5, 0.08};
  return {0.5, 0.5, 0.0};  // HannWindow
}

Status RunWindow(KernelContext& ctx) {
  const CosineWindow c = WindowCoefficients(ctx.node().op_type);
  ASSIGN_OR_RETURN(int64_t size, WindowSize(ctx.node(), *ctx.input(0)));
  const bool periodic = ctx.node().GetInt("periodic", 1) != 0;
  const int64_t period = periodic ? size : size - 1;
  Tensor& out = *ctx.output(0);
  return VisitKernelDType(ctx.node(), out.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    for (int64_t n = 0; n < size; ++n) {
      // A symmetric window of one point would divide 0 by 0; it is 1, as in NumPy, SciPy and PyTorch.
      const double phase =
          period == 0 ? 0.0 : 2 * std::numbers::pi * static_cast<double>(n) / static_cast<double>(period);
      const double w = period == 0 ? 1.0 : c.a0 - c.a1 * std::cos(phase) + c.a2 * std::cos(2 * phase);
      out.data<T>()[n] = FromDouble<T>(w);
    }
    return Status::Ok();
  });
}

Status InferMelWeightMatrix(InferContext& ctx) {
  for (size_t i = 0; i < 5; ++i) {
    if (ctx.input(i) == nullptr) {
      return ctx.Error("needs inputs num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz");
    }
  }
  ASSIGN_OR_RETURN(DType dtype, OutputDatatype(ctx.node()));
  const Tensor* mel_bins = ctx.RequireValue(0);
  const Tensor* dft_length = ctx.RequireValue(1);
  if (ctx.value_missing()) return ctx.ValueNeeded();
  ASSIGN_OR_RETURN(int64_t mels, ScalarInt(ctx.node(), *mel_bins, "num_mel_bins"));
  ASSIGN_OR_RETURN(int64_t length, ScalarInt(ctx.node(), *dft_length, "dft_length"));
  if (mels <= 0 || length <= 0) {
    return ctx.Error("num_mel_bins and dft_length must be positive, got " + std::to_string(mels) + " and " +
                     std::to_string(length));
  }
  ctx.SetOutput(0, dtype, {length / 2 + 1, mels});
  return Status::Ok();
}

double HzToMel(double hz) { return 2595 * std::log10(1 + hz / 700); }
double MelToHz(double mel) { return 700 * (std::pow(10.0, mel / 2595) - 1); }

Status RunMelWeightMatrix(KernelContext& ctx) {
  const Node& node = ctx.node();
  ASSIGN_OR_RETURN(int64_t mels, ScalarInt(node, *ctx.input(0), "num_mel_bins"));
  ASSIGN_OR_RETURN(int64_t length, ScalarInt(node, *ctx.input(1), "dft_length"));
  ASSIGN_OR_RETURN(int64_t rate, ScalarInt(node, *ctx.input(2), "sample_rate"));
  ASSIGN_OR_RETURN(double lower, ScalarFloat(node, *ctx.input(3), "lower_edge_hertz"));
  ASSIGN_OR_RETURN(double upper, ScalarFloat(node, *ctx.input(4), "upper_edge_hertz"));
  if (rate <= 0) return ctx.Error("sample_rate must be positive, got " + std::to_string(rate));
  const int64_t spectrum_bins = length / 2 + 1;
  // num_mel_bins + 2 edges, evenly spaced in mel from lower_edge_hertz, mapped to DFT bins. The step is
  // (high - low) / (num_mel_bins + 2), one more than the edges' gaps, so the last edge stops short of
  // upper_edge_hertz: that is what the ONNX reference and ONNX Runtime compute.
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
  std::vector<double> w(static_cast<size_t>(spectrum_bins * mels), 0.0);
  auto at = [&](int64_t bin, int64_t mel) -> double& { return w[static_cast<size_t>(bin * mels + mel)]; };
  for (int64_t m = 0; m < mels; ++m) {
    const int64_t left = edges[static_cast<size_t>(m)];
    const int64_t center = edges[static_cast<size_t>(m + 1)];
    const int64_t right = edges[static_cast<size_t>(m + 2)];
    // Triangles: rising from left to center, falling from center to right; edges are non-decreasing.
    if (center == left) {
      at(center, m) = 1;
    } else {
      for (int64_t j = left; j <= center; ++j) {
        at(j, m) = static_cast<double>(j - left) / static_cast<double>(center - left);
      }
    }
    for (int64_t j = center; j < right; ++j) {
      at(j, m) = static_cast<double>(right - j) / static_cast<double>(right - center);
    }
  }
  Tensor& out = *ctx.output(0);
  return VisitKernelDType(node, out.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    for (size_t i = 0; i < w.size(); ++i) out.data<T>()[i] = FromDouble<T>(w[i]);
    return Status::Ok();
  });
}

}  // namespace

std::vector<OpEntry> SignalOps() {
  return {
      {"DFT", InferDft, RunDft},
      {"STFT", InferStft, RunStft},
      {"HannWindow", InferWindow, RunWindow},
      {"HammingWindow", InferWindow, RunWindow},
      {"BlackmanWindow", InferWindow, RunWindow},
      {"MelWeightMatrix", InferMelWeightMatrix, RunMelWeightMatrix},
  };
}

}  // namespace chipfit
