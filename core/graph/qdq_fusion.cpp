// FuseQdqPatterns: DequantizeLinear → Conv/MatMul/Gemm [→ Relu/Clip] → QuantizeLinear into QLinearConv/QLinearMatMul.
#include "core/graph/qdq_fusion.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/graph/graph_index.h"
#include "core/graph/passes.h"
#include "core/status.h"

namespace chipfit {
namespace {

bool IsOnnxOp(const Node& node, const char* op_type) {
  return node.op_type == op_type && (node.domain.empty() || node.domain == "ai.onnx");
}

bool IsInt8(DType dtype) { return dtype == DType::kU8 || dtype == DType::kI8; }

// One value (rank <= 1): how QLinearConv/QLinearMatMul take x_scale, y_scale and the zero points.
bool IsScalar(const Tensor& t) { return t.numel() == 1 && t.rank() <= 1; }

// A DequantizeLinear feeding the layer: its quantized input and parameters, all checked.
struct Dequantized {
  size_t node = 0;
  std::string q{}, scale{}, zp{};  // zp "": absent (0 of q's type)
  DType dtype = DType::kUndefined;
  const Tensor* scale_tensor = nullptr;
  const Tensor* zp_tensor = nullptr;  // nullptr when absent
  int64_t axis = -1;                  // per-axis scale: the axis (normalised); -1 for one scale
  bool exclusive = false;             // the layer is its only reader: it goes with the pattern
};

// QuantizeLinear after the layer (and the optional Relu/Clip between them).
struct Requantized {
  std::vector<size_t> nodes{};  // [activation,] QuantizeLinear
  std::string output{}, scale{}, zp{};
  DType dtype = DType::kU8;
};

// A fused node ready to replace its pattern, with the initializers it adds.
struct Plan {
  size_t anchor = 0;
  std::vector<size_t> removed{};  // every node the fused node replaces (the layer among them)
  std::vector<size_t> shared{};   // DequantizeLinear nodes other nodes still read
  Node fused{};
  std::map<std::string, Tensor> initializers{};
};

class QdqFuser : GraphIndex {
 public:
  QdqFuser(Graph& graph, const QdqFusionOptions& options) : GraphIndex(graph), options_(options) {}

  QdqFusionResult Run() {
    QdqFusionResult result;
    std::vector<Plan> plans;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const Node& node = graph_.nodes[i];
      const bool conv = IsOnnxOp(node, "Conv"), matmul = IsOnnxOp(node, "MatMul"), gemm = IsOnnxOp(node, "Gemm");
      if ((!conv && !matmul && !gemm) || !IsCandidate(node)) continue;
      Result<Plan> plan = conv ? PlanConv(i) : matmul ? PlanMatMul(i) : PlanGemm(i);
      if (!plan.ok()) {
        result.left[node.name] = plan.status().message();
        continue;
      }
      result.fused_nodes.push_back(node.name);
      plans.push_back(std::move(plan).value());
    }
    result.fused = static_cast<int>(plans.size());
    if (!plans.empty()) Rewrite(plans);
    return result;
  }

 private:
  // A layer that touches QDQ: an input from a DequantizeLinear or its output read by a QuantizeLinear.
  bool IsCandidate(const Node& node) const {
    for (const std::string& in : node.inputs) {
      if (const Node* p = Producer(in); p != nullptr && IsOnnxOp(*p, "DequantizeLinear")) return true;
    }
    for (size_t c : Consumers(node.outputs.empty() ? "" : node.outputs[0])) {
      if (IsOnnxOp(graph_.nodes[c], "QuantizeLinear")) return true;
    }
    return false;
  }

  const Node* Producer(const std::string& value) const {
    auto it = producer_.find(value);
    return it == producer_.end() ? nullptr : &graph_.nodes[it->second];
  }
  const std::vector<size_t>& Consumers(const std::string& value) const {
    static const std::vector<size_t> kNone;
    auto it = consumers_.find(value);
    return it == consumers_.end() ? kNone : it->second;
  }
  int Readers(const std::string& value) const {
    auto it = readers_.find(value);
    return it == readers_.end() ? 0 : it->second;
  }
  const Tensor* Initializer(const std::string& name) const {
    auto it = graph_.initializers.find(name);
    return it == graph_.initializers.end() ? nullptr : &it->second;
  }

  // The element type of a quantized value: its initializer's, its zero point's, or the described one.
  DType QuantizedType(const std::string& value, const Tensor* zp) const {
    if (const Tensor* t = Initializer(value)) return t->dtype();
    if (zp != nullptr) return zp->dtype();
    auto it = descs_.find(value);
    return it == descs_.end() ? DType::kUndefined : it->second->dtype;
  }

  // The DequantizeLinear writing `value`, checked for what a QLinear node takes. `rank`: the quantized
  // value's rank when a per-axis scale is allowed (constant weights), else 0 (one scale only).
  Result<Dequantized> ReadDequantize(const std::string& value, const char* role, int64_t rank) const {
    auto it = producer_.find(value);
    if (it == producer_.end() || !IsOnnxOp(graph_.nodes[it->second], "DequantizeLinear")) {
      return Unsupported(std::string(role) + " does not come from a DequantizeLinear");
    }
    const Node& dq = graph_.nodes[it->second];
    Dequantized d{.node = it->second};
    if (dq.inputs.size() < 2 || dq.outputs.size() != 1 || dq.inputs[0].empty()) {
      return Unsupported(dq.Describe() + " lacks x or x_scale");
    }
    if (dq.GetInt("block_size", 0) != 0) return Unsupported(dq.Describe() + " is blocked");
    d.q = dq.inputs[0];
    d.scale = dq.inputs[1];
    d.zp = dq.HasInput(2) ? dq.inputs[2] : "";
    d.scale_tensor = Initializer(d.scale);
    if (d.scale_tensor == nullptr || d.scale_tensor->dtype() != DType::kF32) {
      return Unsupported(std::string(role) + "'s scale is not a constant float32");
    }
    if (!d.zp.empty()) {
      d.zp_tensor = Initializer(d.zp);
      if (d.zp_tensor == nullptr) return Unsupported(std::string(role) + "'s zero point is not a constant");
    }
    d.dtype = QuantizedType(d.q, d.zp_tensor);
    if (!IsInt8(d.dtype)) {
      return Unsupported(std::string(role) + " is quantized to " + std::string(DTypeName(d.dtype)) +
                         ", not uint8 or int8");
    }
    if (d.zp_tensor != nullptr && d.zp_tensor->dtype() != d.dtype) {
      return Unsupported(std::string(role) + "'s zero point type differs from its values'");
    }
    if (!IsScalar(*d.scale_tensor)) {
      if (rank == 0) return Unsupported(std::string(role) + " has more than one scale");
      const int64_t axis = dq.GetInt("axis", 1);
      d.axis = axis < 0 ? axis + rank : axis;
      const Tensor* q = Initializer(d.q);
      if (d.scale_tensor->rank() != 1 || d.axis < 0 || d.axis >= rank || q == nullptr ||
          d.scale_tensor->numel() != q->dim(d.axis) ||
          (d.zp_tensor != nullptr && d.zp_tensor->shape() != d.scale_tensor->shape())) {
        return Unsupported(std::string(role) + "'s per-axis scale or zero point does not match its values");
      }
    } else if (d.zp_tensor != nullptr && !IsScalar(*d.zp_tensor)) {
      return Unsupported(std::string(role) + "'s zero point is not a scalar");
    }
    d.exclusive = Readers(value) == 1;
    return d;
  }

  // Clip's bounds: attributes before opset 11, constant scalar inputs from it; absent bounds are infinite.
  std::optional<std::pair<double, double>> ClipBounds(const Node& clip) const {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    if (graph_.opset < 11) {
      return std::make_pair(clip.Has("min") ? clip.GetFloat("min", 0) : -kInf,
                            clip.Has("max") ? clip.GetFloat("max", 0) : kInf);
    }
    std::pair<double, double> bounds(-kInf, kInf);
    for (size_t i = 1; i < clip.inputs.size() && i < 3; ++i) {
      if (clip.inputs[i].empty()) continue;
      const Tensor* t = Initializer(clip.inputs[i]);
      if (t == nullptr || t->numel() != 1) return std::nullopt;
      (i == 1 ? bounds.first : bounds.second) = t->GetAsDouble(0);
    }
    return bounds;
  }

  // QuantizeLinear of `value` as the reference computes it: round half to even of the float quotient.
  static double QuantizedValue(double value, float scale, int64_t zp) {
    if (std::isinf(value)) return value;
    return std::nearbyint(static_cast<float>(value) / scale) + static_cast<double>(zp);
  }

  // The QuantizeLinear reading the layer's output `value`, through at most one Relu/Clip that the
  // quantization makes redundant: it clips exactly where the quantized type saturates.
  Result<Requantized> ReadQuantize(const std::string& value) const {
    Requantized r;
    std::string current = value;
    const Node* activation = nullptr;
    for (int hop = 0; hop < 2; ++hop) {
      const std::vector<size_t>& readers = Consumers(current);
      if (Readers(current) != 1 || readers.size() != 1) {
        return Unsupported("its float output '" + current + "' has other readers (or is a graph output)");
      }
      const Node& next = graph_.nodes[readers[0]];
      if (next.inputs.empty() || next.inputs[0] != current || next.outputs.size() != 1) {
        return Unsupported("its output is not read by a QuantizeLinear");
      }
      if (hop == 0 && (IsOnnxOp(next, "Relu") || IsOnnxOp(next, "Clip"))) {
        activation = &next;
        r.nodes.push_back(readers[0]);
        current = next.outputs[0];
        continue;
      }
      if (!IsOnnxOp(next, "QuantizeLinear")) {
        return Unsupported("its output goes to " + next.Describe() + ", not to a QuantizeLinear");
      }
      r.nodes.push_back(readers[0]);
      r.output = next.outputs[0];
      break;
    }
    if (r.output.empty()) return Unsupported("its output is not read by a QuantizeLinear");
    const Node& q = graph_.nodes[r.nodes.back()];
    if (q.inputs.size() < 2 || q.GetInt("block_size", 0) != 0) return Unsupported("its QuantizeLinear is blocked");
    r.scale = q.inputs[1];
    const Tensor* scale = Initializer(r.scale);
    if (scale == nullptr || scale->dtype() != DType::kF32 || !IsScalar(*scale)) {
      return Unsupported("the output scale is not one constant float32");
    }
    const Tensor* zp = nullptr;
    if (q.HasInput(2)) {
      r.zp = q.inputs[2];
      zp = Initializer(r.zp);
      if (zp == nullptr || !IsScalar(*zp)) return Unsupported("the output zero point is not one constant");
      r.dtype = zp->dtype();
    } else if (q.Has("output_dtype")) {
      const int64_t code = q.GetInt("output_dtype", 0);
      r.dtype = code == 3 ? DType::kI8 : code == 2 ? DType::kU8 : DType::kUndefined;
    }
    if (!IsInt8(r.dtype)) return Unsupported("the output is not quantized to uint8 or int8");
    if (activation != nullptr) {
      std::optional<std::pair<double, double>> bounds;
      if (IsOnnxOp(*activation, "Relu")) {
        bounds = std::make_pair(0.0, std::numeric_limits<double>::infinity());
      } else {
        bounds = ClipBounds(*activation);
        if (!bounds) return Unsupported("its Clip bounds are not constant scalars");
      }
      const int64_t z = zp == nullptr ? 0 : zp->GetAsInt64(0);
      const float s = scale->data<float>()[0];
      const double qmin = r.dtype == DType::kU8 ? 0 : -128, qmax = r.dtype == DType::kU8 ? 255 : 127;
      if (QuantizedValue(bounds->first, s, z) > qmin || QuantizedValue(bounds->second, s, z) < qmax) {
        return Unsupported(activation->Describe() +
                           " clips inside the output's quantized range, so it is not "
                           "redundant after the QuantizeLinear");
      }
    }
    return r;
  }

  // A zero point input: the DequantizeLinear's, else a new 0 of the quantized type.
  std::string ZeroPointInput(const std::string& given, DType dtype, const std::string& name, Plan& plan) const {
    if (!given.empty()) return given;
    plan.initializers[name] = Tensor(dtype, {});
    return name;
  }

  std::string FreshName(const std::string& base) const {
    std::string name = base;
    for (int i = 2; graph_.initializers.contains(name) || producer_.contains(name); ++i) {
      name = base + "_" + std::to_string(i);
    }
    return name;
  }

  // Common tail: the nodes the plan replaces, the fused node's identity and covers.
  void Finish(Plan& plan, const Node& layer, const std::string& op_type, const std::vector<Dequantized>& dqs,
              const Requantized& rq) const {
    plan.fused.name = layer.name;
    plan.fused.op_type = op_type;
    plan.fused.outputs = {rq.output};
    plan.removed = rq.nodes;
    plan.removed.push_back(plan.anchor);
    for (const Dequantized& d : dqs) {
      // The same DequantizeLinear may feed two inputs (MatMul(a, a)): it is then read twice.
      if (std::find(plan.removed.begin(), plan.removed.end(), d.node) != plan.removed.end() ||
          std::find(plan.shared.begin(), plan.shared.end(), d.node) != plan.shared.end()) {
        continue;
      }
      (d.exclusive ? plan.removed : plan.shared).push_back(d.node);
    }
    std::vector<size_t> others = plan.removed;
    std::sort(others.begin(), others.end());
    plan.fused.covers = layer.covers.empty() ? std::vector<std::string>{layer.name} : layer.covers;
    for (size_t i : others) {
      if (i == plan.anchor) continue;
      const Node& node = graph_.nodes[i];
      plan.fused.covers.insert(plan.fused.covers.end(), node.covers.empty() ? 1 : 0, node.name);
      plan.fused.covers.insert(plan.fused.covers.end(), node.covers.begin(), node.covers.end());
    }
  }

  Result<bool> Checked(const Node& layer, bool allowed, const char* op) const {
    if (!allowed) return Unsupported(std::string("the device has no ") + op + " kernel");
    for (const std::string& name : layer.covers.empty() ? std::vector<std::string>{layer.name} : layer.covers) {
      if (options_.keep.contains(name)) return Unsupported("kept as written by request");
    }
    if (layer.outputs.size() != 1 || layer.outputs[0].empty()) return Unsupported("it has more than one output");
    return true;
  }

  // Conv's bias in int32 at scale sx·sw[m]: a float constant [M], or DequantizeLinear of an int32 constant [M].
  Result<Tensor> Int32Bias(const std::string& value, int64_t channels, float sx, const Tensor& sw,
                           std::vector<Dequantized>& dqs) const {
    std::vector<double> bias(static_cast<size_t>(channels));
    std::vector<int64_t> exact;  // int32 values written with exactly the scale the fused node uses
    std::vector<float> written_scale;
    if (const Tensor* b = Initializer(value)) {
      if (b->dtype() != DType::kF32 || b->numel() != channels || b->rank() != 1) {
        return Unsupported("its bias is not a float32 vector of one value per output channel");
      }
      for (int64_t m = 0; m < channels; ++m) bias[static_cast<size_t>(m)] = b->data<float>()[m];
    } else {
      auto it = producer_.find(value);
      if (it == producer_.end() || !IsOnnxOp(graph_.nodes[it->second], "DequantizeLinear")) {
        return Unsupported("its bias is neither a constant nor a DequantizeLinear of one");
      }
      const Node& dq = graph_.nodes[it->second];
      const Tensor* q = dq.inputs.empty() ? nullptr : Initializer(dq.inputs[0]);
      const Tensor* s = dq.inputs.size() < 2 ? nullptr : Initializer(dq.inputs[1]);
      const Tensor* z = dq.HasInput(2) ? Initializer(dq.inputs[2]) : nullptr;
      if (q == nullptr || q->dtype() != DType::kI32 || q->rank() != 1 || q->numel() != channels || s == nullptr ||
          s->dtype() != DType::kF32 || (s->numel() != 1 && s->numel() != channels) || (dq.HasInput(2) && !z) ||
          dq.GetInt("block_size", 0) != 0) {
        return Unsupported("its bias DequantizeLinear is not of a constant int32 [M] with float32 scales");
      }
      for (int64_t m = 0; m < channels; ++m) {
        const float scale = s->data<float>()[s->numel() == 1 ? 0 : m];
        const int64_t zero = z == nullptr ? 0 : z->GetAsInt64(z->numel() == 1 ? 0 : m);
        const int64_t v = q->data<int32_t>()[m] - zero;
        bias[static_cast<size_t>(m)] = static_cast<float>(v) * scale;  // as DequantizeLinear computes it
        written_scale.push_back(scale);
        exact.push_back(v);
      }
      dqs.push_back({.node = it->second, .exclusive = Readers(value) == 1});
    }
    Tensor out(DType::kI32, {channels});
    for (int64_t m = 0; m < channels; ++m) {
      const float scale = sx * sw.data<float>()[sw.numel() == 1 ? 0 : m];
      if (scale <= 0 || !std::isfinite(scale)) return Unsupported("a scale is not positive and finite");
      double v = std::nearbyint(bias[static_cast<size_t>(m)] / static_cast<double>(scale));
      if (!exact.empty() && written_scale[static_cast<size_t>(m)] == scale) v = static_cast<double>(exact[m]);
      if (std::fabs(v) > std::numeric_limits<int32_t>::max()) {
        return Unsupported("its bias does not fit int32 at the scale x_scale·w_scale");
      }
      out.data<int32_t>()[m] = static_cast<int32_t>(v);
    }
    return out;
  }

  Result<Plan> PlanConv(size_t index) const {
    const Node& conv = graph_.nodes[index];
    ASSIGN_OR_RETURN(bool ok, Checked(conv, options_.conv, "QLinearConv"));
    (void)ok;
    if (conv.inputs.size() < 2) return Unsupported("it lacks weights");
    const Tensor* w_q = nullptr;
    if (const Node* p = Producer(conv.inputs[1]); p != nullptr && !p->inputs.empty()) w_q = Initializer(p->inputs[0]);
    if (w_q == nullptr) return Unsupported("its weights are not a DequantizeLinear of a constant");
    ASSIGN_OR_RETURN(Dequantized x, ReadDequantize(conv.inputs[0], "x", 0));
    ASSIGN_OR_RETURN(Dequantized w, ReadDequantize(conv.inputs[1], "W", w_q->rank()));
    if (w.axis > 0)
      return Unsupported("W is quantized per axis " + std::to_string(w.axis) + ", not per output channel");
    ASSIGN_OR_RETURN(Requantized y, ReadQuantize(conv.outputs[0]));
    Plan plan{.anchor = index};
    std::vector<Dequantized> dqs = {x, w};
    Node& f = plan.fused;
    f.attributes = conv.attributes;
    f.inputs = {x.q,
                x.scale,
                ZeroPointInput(x.zp, x.dtype, FreshName(conv.name + "/x_zero_point"), plan),
                w.q,
                w.scale,
                ZeroPointInput(w.zp, w.dtype, FreshName(conv.name + "/w_zero_point"), plan),
                y.scale,
                ZeroPointInput(y.zp, y.dtype, FreshName(conv.name + "/y_zero_point"), plan)};
    if (conv.HasInput(2)) {
      ASSIGN_OR_RETURN(Tensor bias,
                       Int32Bias(conv.inputs[2], w_q->dim(0), x.scale_tensor->data<float>()[0], *w.scale_tensor, dqs));
      const std::string name = FreshName(conv.name + "/bias_int32");
      plan.initializers[name] = std::move(bias);
      f.inputs.push_back(name);
    }
    Finish(plan, conv, "QLinearConv", dqs, y);
    return plan;
  }

  // QLinearMatMul's inputs once a and b are read: b is the stored one, or `b_name` when it was rewritten.
  Result<Plan> PlanQLinearMatMul(size_t index, const Dequantized& a, const Dequantized& b, const std::string& b_name,
                                 const std::string& b_scale, const std::string& b_zp,
                                 const std::vector<Dequantized>& dqs, Plan plan) const {
    const Node& layer = graph_.nodes[index];
    ASSIGN_OR_RETURN(Requantized y, ReadQuantize(layer.outputs[0]));
    plan.anchor = index;
    Node& f = plan.fused;
    f.inputs = {a.q,
                a.scale,
                ZeroPointInput(a.zp, a.dtype, FreshName(layer.name + "/a_zero_point"), plan),
                b_name,
                b_scale,
                ZeroPointInput(b_zp, b.dtype, FreshName(layer.name + "/b_zero_point"), plan),
                y.scale,
                ZeroPointInput(y.zp, y.dtype, FreshName(layer.name + "/y_zero_point"), plan)};
    Finish(plan, layer, "QLinearMatMul", dqs, y);
    return plan;
  }

  Result<Plan> PlanMatMul(size_t index) const {
    const Node& mm = graph_.nodes[index];
    ASSIGN_OR_RETURN(bool ok, Checked(mm, options_.matmul, "QLinearMatMul"));
    (void)ok;
    if (mm.inputs.size() != 2) return Unsupported("it does not have two inputs");
    const Tensor* b_q = nullptr;
    if (const Node* p = Producer(mm.inputs[1]); p != nullptr && !p->inputs.empty()) b_q = Initializer(p->inputs[0]);
    ASSIGN_OR_RETURN(Dequantized a, ReadDequantize(mm.inputs[0], "A", 0));
    // Constant 2-D weights may have a scale per column (axis 1); QLinearMatMul takes that as b_scale [N].
    ASSIGN_OR_RETURN(Dequantized b, ReadDequantize(mm.inputs[1], "B", b_q != nullptr && b_q->rank() == 2 ? 2 : 0));
    if (b.axis == 0) return Unsupported("B is quantized per row (axis 0), not per column");
    return PlanQLinearMatMul(index, a, b, b.q, b.scale, b.zp, {a, b}, Plan{});
  }

  // Gemm → QLinearMatMul, or with C (the bias ONNX Runtime's quantizer writes as DequantizeLinear of int32)
  // → chipfit's QLinearGemm: QLinearMatMul's inputs and the bias in int32 at a_scale·b_scale[n].
  Result<Plan> PlanGemm(size_t index) const {
    const Node& gemm = graph_.nodes[index];
    ASSIGN_OR_RETURN(bool ok, Checked(gemm, options_.matmul, "QLinearMatMul"));
    (void)ok;
    if (gemm.GetInt("transA", 0) != 0) return Unsupported("transA is set (QLinearMatMul has no transposed A)");
    if (gemm.GetFloat("alpha", 1.0f) != 1.0f) return Unsupported("alpha is not 1");
    const bool with_c = gemm.HasInput(2);
    if (with_c && !options_.gemm) return Unsupported("it adds C, and the device has no QLinearGemm kernel");
    if (with_c && gemm.GetFloat("beta", 1.0f) != 1.0f) return Unsupported("beta is not 1");
    if (gemm.inputs.size() < 2) return Unsupported("it lacks B");
    const Tensor* b_q = nullptr;
    if (const Node* p = Producer(gemm.inputs[1]); p != nullptr && !p->inputs.empty()) b_q = Initializer(p->inputs[0]);
    if (b_q == nullptr || b_q->rank() != 2) return Unsupported("B is not a DequantizeLinear of a constant matrix");
    ASSIGN_OR_RETURN(Dequantized a, ReadDequantize(gemm.inputs[0], "A", 0));
    ASSIGN_OR_RETURN(Dequantized b, ReadDequantize(gemm.inputs[1], "B", 2));
    const bool trans_b = gemm.GetInt("transB", 0) != 0;
    // The output channel of B: its columns, or its rows when it is stored transposed.
    if (b.axis >= 0 && b.axis != (trans_b ? 0 : 1)) return Unsupported("B is not quantized per output channel");
    std::vector<Dequantized> dqs = {a, b};
    Plan plan;
    std::string bias_name;
    if (with_c) {
      const int64_t n = trans_b ? b_q->dim(0) : b_q->dim(1);
      ASSIGN_OR_RETURN(Tensor bias,
                       Int32Bias(gemm.inputs[2], n, a.scale_tensor->data<float>()[0], *b.scale_tensor, dqs));
      bias_name = FreshName(gemm.name + "/bias_int32");
      plan.initializers[bias_name] = std::move(bias);
    }
    std::string b_name = b.q;
    if (trans_b) {
      // Stored [N, K]: QLinearMatMul reads [K, N], so the quantized weights are transposed once here.
      const int64_t n = b_q->dim(0), k = b_q->dim(1);
      Tensor t(b_q->dtype(), {k, n});
      const auto* src = static_cast<const uint8_t*>(b_q->raw_data());
      auto* dst = static_cast<uint8_t*>(t.raw_data());
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t c = 0; c < k; ++c) dst[c * n + r] = src[r * k + c];
      }
      b_name = FreshName(gemm.name + "/B_quantized_transposed");
      plan.initializers[b_name] = std::move(t);
    }
    ASSIGN_OR_RETURN(plan, PlanQLinearMatMul(index, a, b, b_name, b.scale, b.zp, dqs, std::move(plan)));
    if (with_c) {
      plan.fused.op_type = "QLinearGemm";
      plan.fused.domain = kChipfitDomain;
      plan.fused.inputs.push_back(bias_name);
    }
    return plan;
  }

  void Rewrite(std::vector<Plan>& plans) {
    // Each fused node takes the place of its QuantizeLinear, the pattern's last node: its inputs are
    // all computed before it, and every reader of its output comes after it.
    std::map<size_t, Node> fused_at;
    std::set<size_t> removed;
    std::set<std::string> removed_values, maybe_unused;
    std::map<std::string, std::string> shared;  // DequantizeLinear kept for others → first fused reader
    for (Plan& p : plans) {
      for (size_t i : p.removed) {
        removed.insert(i);
        for (const std::string& out : graph_.nodes[i].outputs) {
          if (out != p.fused.outputs[0]) removed_values.insert(out);
        }
        for (const std::string& in : graph_.nodes[i].inputs) maybe_unused.insert(in);
      }
      for (size_t i : p.shared) shared.emplace(graph_.nodes[i].name, p.fused.name);
      for (auto& [name, tensor] : p.initializers) graph_.initializers[name] = std::move(tensor);
      fused_at.emplace(*std::max_element(p.removed.begin(), p.removed.end()), std::move(p.fused));
    }
    std::vector<Node> kept;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      if (auto it = fused_at.find(i); it != fused_at.end()) {
        kept.push_back(std::move(it->second));
      } else if (!removed.contains(i)) {
        kept.push_back(std::move(graph_.nodes[i]));
      }
    }
    // A DequantizeLinear kept for other readers is dead once those were fused too; the first fused
    // node that read it covers it.
    graph_.nodes = std::move(kept);
    const std::map<std::string, int> now_read = CountValueReaders(graph_);
    std::map<std::string, std::vector<std::string>> extra_covers;
    std::vector<Node> live;
    for (Node& node : graph_.nodes) {
      auto it = shared.find(node.name);
      if (it != shared.end() && node.outputs.size() == 1 && !now_read.contains(node.outputs[0])) {
        extra_covers[it->second].push_back(node.name);
        removed_values.insert(node.outputs[0]);
        for (const std::string& in : node.inputs) maybe_unused.insert(in);
        continue;
      }
      live.push_back(std::move(node));
    }
    graph_.nodes = std::move(live);
    for (Node& node : graph_.nodes) {
      if (auto it = extra_covers.find(node.name); it != extra_covers.end()) {
        node.covers.insert(node.covers.end(), it->second.begin(), it->second.end());
      }
    }
    for (const std::string& value : removed_values) graph_.value_info.erase(value);
    // Float biases, Clip bounds and the parameters of removed DequantizeLinear nodes may have no reader now.
    const std::map<std::string, int> final_reads = CountValueReaders(graph_);
    for (const std::string& name : maybe_unused) {
      if (!final_reads.contains(name)) graph_.initializers.erase(name);
    }
  }

  const QdqFusionOptions& options_;
};

}  // namespace

QdqFusionResult FuseQdqPatterns(Graph& graph, const QdqFusionOptions& options) {
  return QdqFuser(graph, options).Run();
}

}  // namespace chipfit
