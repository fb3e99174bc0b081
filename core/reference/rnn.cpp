// Reference kernels: LSTM, GRU and RNN (ONNX opsets 1–14 semantics), computed in double.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

enum class CellKind { kRnn, kGru, kLstm };

// ONNX input positions shared by the three ops (initial_c and P exist for LSTM only).
constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitH = 5, kInitC = 6, kP = 7;

int64_t GateCount(CellKind kind) { return kind == CellKind::kRnn ? 1 : kind == CellKind::kGru ? 3 : 4; }
size_t ActivationsPerDirection(CellKind kind) { return kind == CellKind::kRnn ? 1 : kind == CellKind::kGru ? 2 : 3; }
size_t MaxInputs(CellKind kind) { return kind == CellKind::kLstm ? 8 : 6; }
size_t MaxOutputs(CellKind kind) { return kind == CellKind::kLstm ? 3 : 2; }

// ---------------------------------------------------------------------------------------------
// Activations

enum class ActFn {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

struct ActivationInfo {
  const char* name;  // lower case: names are matched case-insensitively, as onnxruntime does
  ActFn fn;
  bool uses_alpha;
  float alpha;  // default when activation_alpha runs out
  bool uses_beta;
  float beta;
};

// Defaults are those of the ONNX operators of the same name (Affine and ScaledTanh were
// experimental ops with alpha = 1, beta = 0 and alpha = beta = 1).
constexpr ActivationInfo kActivationTable[] = {
    {"relu", ActFn::kRelu, false, 0.0f, false, 0.0f},
    {"tanh", ActFn::kTanh, false, 0.0f, false, 0.0f},
    {"sigmoid", ActFn::kSigmoid, false, 0.0f, false, 0.0f},
    {"affine", ActFn::kAffine, true, 1.0f, true, 0.0f},
    {"leakyrelu", ActFn::kLeakyRelu, true, 0.01f, false, 0.0f},
    {"thresholdedrelu", ActFn::kThresholdedRelu, true, 1.0f, false, 0.0f},
    {"scaledtanh", ActFn::kScaledTanh, true, 1.0f, true, 1.0f},
    {"hardsigmoid", ActFn::kHardSigmoid, true, 0.2f, true, 0.5f},
    {"elu", ActFn::kElu, true, 1.0f, false, 0.0f},
    {"softsign", ActFn::kSoftsign, false, 0.0f, false, 0.0f},
    {"softplus", ActFn::kSoftplus, false, 0.0f, false, 0.0f},
};

struct Activation {
  ActFn fn = ActFn::kTanh;
  double alpha = 0;
  double beta = 0;

  double operator()(double x) const {
    switch (fn) {
      case ActFn::kRelu: return std::max(0.0, x);
      case ActFn::kTanh: return std::tanh(x);
      case ActFn::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
      case ActFn::kAffine: return alpha * x + beta;
      case ActFn::kLeakyRelu: return x >= 0 ? x : alpha * x;
      case ActFn::kThresholdedRelu: return x > alpha ? x : 0.0;
      case ActFn::kScaledTanh: return alpha * std::tanh(beta * x);
      case ActFn::kHardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
      case ActFn::kElu: return x >= 0 ? x : alpha * std::expm1(x);
      case ActFn::kSoftsign: return x / (1.0 + std::fabs(x));
      case ActFn::kSoftplus: return x > 30 ? x : std::log1p(std::exp(x));  // exp overflows long before
    }
    return x;
  }
};

// The activations list, one group of ActivationsPerDirection per direction. activation_alpha and
// activation_beta are consumed in list order by the activations that take them (the reading
// onnxruntime implements); activations left without a value use their operator's default.
Result<std::vector<Activation>> ParseActivations(const Node& node, CellKind kind, int64_t num_dir) {
  const size_t per_dir = ActivationsPerDirection(kind);
  const size_t count = per_dir * static_cast<size_t>(num_dir);
  std::vector<std::string> names;
  if (auto it = node.attributes.find("activations"); it != node.attributes.end()) names = it->second.strings;
  if (names.empty()) {
    const std::vector<std::string> defaults = kind == CellKind::kRnn ? std::vector<std::string>{"Tanh"}
                                              : kind == CellKind::kGru
                                                  ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                  : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < num_dir; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != count) {
    return InvalidArgument(node.Describe() + ": 'activations' lists " + std::to_string(names.size()) +
                           " functions, expected " + std::to_string(count) + " (" + std::to_string(per_dir) +
                           " per direction)");
  }
  const std::vector<float> alphas = node.GetFloats("activation_alpha");
  const std::vector<float> betas = node.GetFloats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> acts;
  for (const std::string& name : names) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    const auto* info = std::find_if(std::begin(kActivationTable), std::end(kActivationTable),
                                    [&](const ActivationInfo& a) { return lower == a.name; });
    if (info == std::end(kActivationTable)) {
      return Unsupported(node.Describe() + ": activation function '" + name + "' is not supported");
    }
    Activation act{info->fn, info->alpha, info->beta};
    if (info->uses_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (info->uses_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    acts.push_back(act);
  }
  return acts;
}

// ---------------------------------------------------------------------------------------------
// Attributes and shapes

struct RnnPlan {
  CellKind kind = CellKind::kRnn;
  DType dtype = DType::kF32;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, num_dir = 1;
  bool reverse = false;      // direction "reverse": the single direction runs from each sequence's end
  bool batch_major = false;  // layout 1 (opset 14): X, Y, initial/final states lead with batch
  std::optional<double> clip;
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM
  std::vector<Activation> activations;
};

std::string ShapeText(const Shape& shape) { return shape.empty() ? std::string("scalar") : ShapeToString(shape); }

// Dims < 0 are known only at run time and match anything here; the run checks them again.
bool DimsMatch(const Shape& actual, const Shape& expected) {
  if (actual.size() != expected.size()) return false;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] >= 0 && expected[i] >= 0 && actual[i] != expected[i]) return false;
  }
  return true;
}

// What the plan needs to know of one input: whether it is present, its dtype and shape.
struct InputDesc {
  bool present = false;
  DType dtype = DType::kUndefined;
  Shape shape;
};

Status CheckInput(const Node& node, const std::vector<InputDesc>& in, size_t i, const char* name, DType dtype,
                  const Shape& expected, const char* layout) {
  if (i >= in.size() || !in[i].present) return Status::Ok();
  if (dtype != DType::kUndefined && in[i].dtype != dtype) {
    return InvalidArgument(node.Describe() + ": input '" + name + "' has dtype " + std::string(DTypeName(in[i].dtype)) +
                           ", expected " + std::string(DTypeName(dtype)) + " like X");
  }
  if (!DimsMatch(in[i].shape, expected)) {
    return InvalidArgument(node.Describe() + ": input '" + name + "' has shape " + ShapeText(in[i].shape) +
                           ", expected " + ShapeText(expected) + " " + layout);
  }
  return Status::Ok();
}

Result<RnnPlan> PlanRecurrent(const Node& node, CellKind kind, int64_t opset, const std::vector<InputDesc>& in) {
  const auto err = [&](const std::string& message) { return InvalidArgument(node.Describe() + ": " + message); };
  for (size_t i : {kX, kW, kR}) {
    if (i >= in.size() || !in[i].present) return err("missing required input " + std::to_string(i));
  }
  if (in.size() > MaxInputs(kind)) return err("takes at most " + std::to_string(MaxInputs(kind)) + " inputs");
  if (node.outputs.size() > MaxOutputs(kind)) {
    return err("has at most " + std::to_string(MaxOutputs(kind)) + " outputs");
  }
  RnnPlan p;
  p.kind = kind;
  p.dtype = in[kX].dtype;
  if (!IsOneOf(p.dtype, {DType::kF32, DType::kF16, DType::kBF16, DType::kF64})) {
    return Unsupported(node.Describe() + ": dtype " + std::string(DTypeName(p.dtype)) + " is not supported");
  }

  const std::string direction = node.GetString("direction", "forward");
  if (direction == "bidirectional") {
    p.num_dir = 2;
  } else if (direction == "reverse") {
    p.reverse = true;
  } else if (direction != "forward") {
    return err("direction '" + direction + "' must be forward, reverse or bidirectional");
  }
  const int64_t layout = opset >= 14 ? node.GetInt("layout", 0) : 0;
  if (layout != 0 && layout != 1) return err("layout " + std::to_string(layout) + " must be 0 or 1");
  p.batch_major = layout == 1;
  if (node.Has("clip")) {
    p.clip = node.GetFloat("clip", 0.0f);
    if (!(*p.clip > 0)) return err("clip " + std::to_string(*p.clip) + " must be positive");
  }
  p.linear_before_reset = kind == CellKind::kGru && node.GetInt("linear_before_reset", 0) != 0;
  p.input_forget = kind == CellKind::kLstm && node.GetInt("input_forget", 0) != 0;
  ASSIGN_OR_RETURN(p.activations, ParseActivations(node, kind, p.num_dir));

  const Shape& x = in[kX].shape;
  if (x.size() != 3) {
    return err("input 'X' has shape " + ShapeText(x) +
               (p.batch_major ? ", expected [batch_size, seq_length, input_size]"
                              : ", expected [seq_length, batch_size, input_size]"));
  }
  p.seq = x[p.batch_major ? 1 : 0];
  p.batch = x[p.batch_major ? 0 : 1];
  p.input = x[2];
  const Shape& r = in[kR].shape;
  p.hidden = node.GetInt("hidden_size", r.size() == 3 ? r[2] : -1);
  if (node.Has("hidden_size") && p.hidden <= 0) return err("hidden_size must be positive");
  // Bounded so that gate counts times hidden_size cannot overflow; no real layer comes near.
  if (p.hidden > (int64_t{1} << 32)) return err("hidden_size " + std::to_string(p.hidden) + " is too large");
  const int64_t g = GateCount(kind);
  const std::string gates = g == 1 ? "" : std::to_string(g) + "*";
  const int64_t rows = p.hidden < 0 ? -1 : g * p.hidden;
  const DType t = p.dtype;
  RETURN_IF_ERROR(CheckInput(node, in, kW, "W", t, {p.num_dir, rows, p.input},
                             ("[num_directions, " + gates + "hidden_size, input_size]").c_str()));
  RETURN_IF_ERROR(CheckInput(node, in, kR, "R", t, {p.num_dir, rows, p.hidden},
                             ("[num_directions, " + gates + "hidden_size, hidden_size]").c_str()));
  RETURN_IF_ERROR(CheckInput(node, in, kB, "B", t, {p.num_dir, rows < 0 ? -1 : 2 * rows},
                             ("[num_directions, " + std::to_string(2 * g) + "*hidden_size]").c_str()));
  if (kSeqLens < in.size() && in[kSeqLens].present && !IsOneOf(in[kSeqLens].dtype, {DType::kI32, DType::kI64})) {
    return err("input 'sequence_lens' has dtype " + std::string(DTypeName(in[kSeqLens].dtype)) + ", expected i32");
  }
  RETURN_IF_ERROR(CheckInput(node, in, kSeqLens, "sequence_lens", DType::kUndefined, {p.batch}, "[batch_size]"));
  const Shape state = p.batch_major ? Shape{p.batch, p.num_dir, p.hidden} : Shape{p.num_dir, p.batch, p.hidden};
  const char* state_text =
      p.batch_major ? "[batch_size, num_directions, hidden_size]" : "[num_directions, batch_size, hidden_size]";
  RETURN_IF_ERROR(CheckInput(node, in, kInitH, "initial_h", t, state, state_text));
  if (kind == CellKind::kLstm) {
    RETURN_IF_ERROR(CheckInput(node, in, kInitC, "initial_c", t, state, state_text));
    RETURN_IF_ERROR(CheckInput(node, in, kP, "P", t, {p.num_dir, p.hidden < 0 ? -1 : 3 * p.hidden},
                               "[num_directions, 3*hidden_size]"));
  }
  return p;
}

// Output shapes: Y, Y_h and (LSTM) Y_c.
Shape YShape(const RnnPlan& p) {
  return p.batch_major ? Shape{p.batch, p.seq, p.num_dir, p.hidden} : Shape{p.seq, p.num_dir, p.batch, p.hidden};
}
Shape StateShape(const RnnPlan& p) {
  return p.batch_major ? Shape{p.batch, p.num_dir, p.hidden} : Shape{p.num_dir, p.batch, p.hidden};
}

template <CellKind K>
Status InferRecurrent(InferContext& ctx) {
  std::vector<InputDesc> in(ctx.num_inputs());
  for (size_t i = 0; i < in.size(); ++i) {
    if (const ValueInfo* v = ctx.input(i)) in[i] = {true, v->dtype, v->shape};
  }
  ASSIGN_OR_RETURN(RnnPlan p, PlanRecurrent(ctx.node(), K, ctx.opset(), in));
  ctx.SetOutput(0, p.dtype, YShape(p));
  ctx.SetOutput(1, p.dtype, StateShape(p));
  if (K == CellKind::kLstm) ctx.SetOutput(2, p.dtype, StateShape(p));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Run

std::vector<double> ToDoubles(const Tensor* t) {
  std::vector<double> v;
  if (t == nullptr) return v;
  v.resize(static_cast<size_t>(t->numel()));
  for (int64_t i = 0; i < t->numel(); ++i) v[static_cast<size_t>(i)] = t->GetAsDouble(i);
  return v;
}

// A [a, b, c] tensor's values reordered to [b, a, c] (layout 1 ↔ layout 0).
std::vector<double> SwapLeadingDims(const std::vector<double>& v, int64_t a, int64_t b, int64_t c) {
  std::vector<double> out(v.size());
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t j = 0; j < b; ++j) {
      std::copy_n(v.begin() + (i * b + j) * c, c, out.begin() + (j * a + i) * c);
    }
  }
  return out;
}

double Dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// All inputs in double, in layout 0, with absent optional inputs as zeros.
struct RnnData {
  std::vector<double> x;       // [seq, batch, input]
  std::vector<double> w, r;    // [num_dir, G*H, input|hidden]
  std::vector<double> b;       // [num_dir, 2*G*H]
  std::vector<double> init_h;  // [num_dir, batch, hidden]
  std::vector<double> init_c;
  std::vector<double> peep;   // [num_dir, 3*H], empty without P
  std::vector<int64_t> lens;  // [batch]
};

// Outputs in double, layout 0: Y [seq, num_dir, batch, H] (zero past each sequence's length),
// Y_h and Y_c [num_dir, batch, H].
struct RnnResult {
  std::vector<double> y, y_h, y_c;
};

// One sequence of one direction. h and c hold the initial state and end as the final one.
void RunSequence(const RnnPlan& p, const RnnData& d, int64_t dir, int64_t batch_index, double* h, double* c,
                 std::vector<double>& y) {
  const int64_t g = GateCount(p.kind), hn = p.hidden, in_n = p.input, rows = g * hn;
  const double* w = d.w.data() + dir * rows * in_n;
  const double* r = d.r.data() + dir * rows * hn;
  const double* wb = d.b.data() + dir * 2 * rows;
  const double* rb = wb + rows;
  const double* peep = d.peep.empty() ? nullptr : d.peep.data() + dir * 3 * hn;
  const Activation* act = p.activations.data() + static_cast<size_t>(dir) * ActivationsPerDirection(p.kind);
  const bool backward = p.reverse || dir == 1;
  const auto clip = [&](double v) { return p.clip ? std::clamp(v, -*p.clip, *p.clip) : v; };

  std::vector<double> gx(static_cast<size_t>(rows)), gh(static_cast<size_t>(rows)), next(static_cast<size_t>(hn));
  std::vector<double> reset_h(static_cast<size_t>(hn));
  const int64_t len = d.lens[static_cast<size_t>(batch_index)];
  for (int64_t s = 0; s < len; ++s) {
    const int64_t t = backward ? len - 1 - s : s;
    const double* xt = d.x.data() + (t * p.batch + batch_index) * in_n;
    // GRU without linear_before_reset multiplies the reset gate in before R_h, so its h rows wait.
    const int64_t rows_now = p.kind == CellKind::kGru && !p.linear_before_reset ? 2 * hn : rows;
    for (int64_t k = 0; k < rows; ++k) gx[k] = wb[k] + Dot(w + k * in_n, xt, in_n);
    for (int64_t k = 0; k < rows_now; ++k) gh[k] = rb[k] + Dot(r + k * hn, h, hn);
    switch (p.kind) {
      case CellKind::kRnn:
        for (int64_t j = 0; j < hn; ++j) next[j] = act[0](clip(gx[j] + gh[j]));
        break;
      case CellKind::kGru: {
        // Rows: z, r, h. next holds r until h~ is known.
        for (int64_t j = 0; j < hn; ++j) next[j] = act[0](clip(gx[hn + j] + gh[hn + j]));
        if (!p.linear_before_reset) {
          for (int64_t j = 0; j < hn; ++j) reset_h[j] = next[j] * h[j];
          for (int64_t j = 0; j < hn; ++j)
            gh[2 * hn + j] = rb[2 * hn + j] + Dot(r + (2 * hn + j) * hn, reset_h.data(), hn);
        } else {
          for (int64_t j = 0; j < hn; ++j) gh[2 * hn + j] *= next[j];
        }
        for (int64_t j = 0; j < hn; ++j) {
          const double z = act[0](clip(gx[j] + gh[j]));
          const double candidate = act[1](clip(gx[2 * hn + j] + gh[2 * hn + j]));
          next[j] = (1 - z) * candidate + z * h[j];
        }
        break;
      }
      case CellKind::kLstm:
        // Rows: i, o, f, c; P holds i, o, f.
        for (int64_t j = 0; j < hn; ++j) {
          const double pi = peep ? peep[j] : 0.0, po = peep ? peep[hn + j] : 0.0, pf = peep ? peep[2 * hn + j] : 0.0;
          const double i_gate = act[0](clip(gx[j] + gh[j] + pi * c[j]));
          const double f_gate = p.input_forget ? 1 - i_gate : act[0](clip(gx[2 * hn + j] + gh[2 * hn + j] + pf * c[j]));
          const double cell = act[1](clip(gx[3 * hn + j] + gh[3 * hn + j]));
          c[j] = f_gate * c[j] + i_gate * cell;
          const double o_gate = act[0](clip(gx[hn + j] + gh[hn + j] + po * c[j]));
          next[j] = o_gate * act[2](c[j]);
        }
        break;
    }
    std::copy(next.begin(), next.end(), h);
    std::copy(next.begin(), next.end(), y.begin() + ((t * p.num_dir + dir) * p.batch + batch_index) * hn);
  }
}

RnnResult Compute(const RnnPlan& p, const RnnData& d) {
  RnnResult res;
  res.y.assign(static_cast<size_t>(p.seq * p.num_dir * p.batch * p.hidden), 0.0);
  // A sequence of length 0 ends in its initial state: nothing ran.
  res.y_h = d.init_h;
  res.y_c = d.init_c;
  for (int64_t dir = 0; dir < p.num_dir; ++dir) {
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t off = (dir * p.batch + b) * p.hidden;
      RunSequence(p, d, dir, b, res.y_h.data() + off, res.y_c.data() + off, res.y);
    }
  }
  return res;
}

Status WriteOutput(KernelContext& ctx, size_t i, const std::vector<double>& values) {
  Tensor* out = ctx.output(i);
  if (out == nullptr) return Status::Ok();
  if (out->numel() != static_cast<int64_t>(values.size())) {
    return Internal(ctx.node().Describe() + ": output " + std::to_string(i) + " has " + std::to_string(out->numel()) +
                    " elements, computed " + std::to_string(values.size()));
  }
  return VisitKernelDType(ctx.node(), out->dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    T* o = out->data<T>();
    for (size_t k = 0; k < values.size(); ++k) o[k] = FromDouble<T>(values[k]);
    return Status::Ok();
  });
}

template <CellKind K>
Status RunRecurrent(KernelContext& ctx) {
  std::vector<InputDesc> in(ctx.num_inputs());
  for (size_t i = 0; i < in.size(); ++i) {
    if (const Tensor* t = ctx.input(i)) in[i] = {true, t->dtype(), t->shape()};
  }
  ASSIGN_OR_RETURN(RnnPlan p, PlanRecurrent(ctx.node(), K, ctx.opset(), in));
  const int64_t rows = GateCount(K) * p.hidden;
  const size_t state_n = static_cast<size_t>(p.num_dir * p.batch * p.hidden);
  RnnData d;
  d.x = ToDoubles(ctx.input(kX));
  if (p.batch_major) d.x = SwapLeadingDims(d.x, p.batch, p.seq, p.input);
  d.w = ToDoubles(ctx.input(kW));
  d.r = ToDoubles(ctx.input(kR));
  d.b = ToDoubles(ctx.input(kB));
  if (d.b.empty()) d.b.assign(static_cast<size_t>(p.num_dir * 2 * rows), 0.0);
  d.init_h = ToDoubles(ctx.input(kInitH));
  if (d.init_h.empty()) d.init_h.assign(state_n, 0.0);
  if (p.batch_major) d.init_h = SwapLeadingDims(d.init_h, p.batch, p.num_dir, p.hidden);
  d.init_c = K == CellKind::kLstm ? ToDoubles(ctx.input(kInitC)) : std::vector<double>{};
  if (d.init_c.empty()) d.init_c.assign(state_n, 0.0);
  if (p.batch_major) d.init_c = SwapLeadingDims(d.init_c, p.batch, p.num_dir, p.hidden);
  if (K == CellKind::kLstm) d.peep = ToDoubles(ctx.input(kP));
  d.lens.assign(static_cast<size_t>(p.batch), p.seq);
  if (const Tensor* lens = ctx.input(kSeqLens)) {
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t len = lens->GetAsInt64(b);
      if (len < 0 || len > p.seq) {
        return ctx.Error("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
                         " is outside [0, seq_length = " + std::to_string(p.seq) + "]");
      }
      d.lens[static_cast<size_t>(b)] = len;
    }
  }

  RnnResult res = Compute(p, d);
  if (p.batch_major) {
    // Y [seq, num_dir, batch, H] → [batch, seq, num_dir, H]; states [num_dir, batch, H] → [batch, num_dir, H].
    res.y = SwapLeadingDims(res.y, p.seq * p.num_dir, p.batch, p.hidden);
    res.y_h = SwapLeadingDims(res.y_h, p.num_dir, p.batch, p.hidden);
    res.y_c = SwapLeadingDims(res.y_c, p.num_dir, p.batch, p.hidden);
  }
  RETURN_IF_ERROR(WriteOutput(ctx, 0, res.y));
  RETURN_IF_ERROR(WriteOutput(ctx, 1, res.y_h));
  if (K == CellKind::kLstm) RETURN_IF_ERROR(WriteOutput(ctx, 2, res.y_c));
  return Status::Ok();
}

}  // namespace

std::vector<OpEntry> RecurrentOps() {
  return {
      {"RNN", InferRecurrent<CellKind::kRnn>, RunRecurrent<CellKind::kRnn>},
      {"GRU", InferRecurrent<CellKind::kGru>, RunRecurrent<CellKind::kGru>},
      {"LSTM", InferRecurrent<CellKind::kLstm>, RunRecurrent<CellKind::kLstm>},
  };
}

}  // namespace chipfit
