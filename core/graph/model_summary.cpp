// Builds a ModelSummary from a checked ModelProto.
#include "core/graph/model_summary.h"

#include <functional>
#include <set>

#include "core/tensor/dtype.h"

namespace chipfit {
namespace {

TensorSpec SpecOf(const onnx::ValueInfoProto& value) {
  TensorSpec spec;
  spec.name = value.name();
  // optional(...) and seq(...) wrap a tensor type: "optional(f32)", "seq(i64)"; a sequence's elements
  // have shapes of their own, so it shows none.
  const onnx::TypeProto* type = &value.type();
  std::string open, close;
  if (type->has_optional_type()) {
    open += "optional(";
    close += ")";
    type = &type->optional_type().elem_type();
  }
  const bool sequence = type->has_sequence_type();
  if (sequence) {
    open += "seq(";
    close += ")";
    type = &type->sequence_type().elem_type();
  }
  if (!type->has_tensor_type()) {
    spec.dtype = open + "non-tensor" + close;
    return spec;
  }
  const auto& tensor = type->tensor_type();
  auto dtype = DTypeFromOnnx(tensor.elem_type());
  spec.dtype = open + (dtype ? std::string(DTypeName(*dtype)) : "onnx:" + std::to_string(tensor.elem_type())) + close;
  if (tensor.has_shape() && !sequence) {
    spec.has_shape = true;
    for (const auto& dim : tensor.shape().dim()) {
      DimSpec d;
      if (dim.has_dim_value()) d.value = dim.dim_value();
      if (dim.has_dim_param()) d.param = dim.dim_param();
      spec.dims.push_back(std::move(d));
    }
  }
  return spec;
}

int64_t ElementCount(const onnx::TensorProto& tensor) {
  int64_t count = 1;
  for (int64_t d : tensor.dims()) count *= d;
  return count;
}

}  // namespace

ModelSummary Summarize(const LoadedOnnxModel& model) {
  const onnx::ModelProto& proto = model.proto;
  const onnx::GraphProto& graph = proto.graph();
  ModelSummary s;
  s.path = model.path.string();
  s.sha256 = model.sha256;
  s.ir_version = proto.ir_version();
  s.producer = proto.producer_name();
  if (!proto.producer_version().empty()) s.producer += " " + proto.producer_version();
  for (const auto& opset : proto.opset_import()) s.opsets[opset.domain()] = opset.version();
  s.default_opset = model.default_opset;
  s.notes = model.notes;

  std::set<std::string> initializer_names;
  for (const auto& init : graph.initializer()) {
    initializer_names.insert(init.name());
    ++s.initializer_count;
    const int64_t elements = ElementCount(init);
    s.parameter_count += elements;
    auto dtype = DTypeFromOnnx(init.data_type());
    s.parameter_bytes += elements * static_cast<int64_t>(dtype ? DTypeSize(*dtype) : 0);
  }
  for (const auto& input : graph.input()) {
    if (!initializer_names.contains(input.name())) s.inputs.push_back(SpecOf(input));
  }
  for (const auto& output : graph.output()) s.outputs.push_back(SpecOf(output));
  for (const auto& node : graph.node()) {
    ++s.node_count;
    // Exporters such as paddle2onnx keep weights in Constant nodes rather than initializers.
    if (node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx")) {
      for (const auto& attr : node.attribute()) {
        if (attr.name() != "value" || !attr.has_t()) continue;
        ++s.constant_node_count;
        const int64_t elements = ElementCount(attr.t());
        s.parameter_count += elements;
        auto dtype = DTypeFromOnnx(attr.t().data_type());
        s.parameter_bytes += elements * static_cast<int64_t>(dtype ? DTypeSize(*dtype) : 0);
      }
    }
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    ++s.op_histogram[default_domain ? node.op_type() : node.domain() + "::" + node.op_type()];
  }
  // Nodes inside If/Loop/Scan bodies (to any depth) count too: a model whose work sits in an If is
  // not a model of one If.
  int64_t in_bodies = 0;
  std::function<void(const onnx::NodeProto&)> count_bodies = [&](const onnx::NodeProto& node) {
    for (const auto& attr : node.attribute()) {
      std::vector<const onnx::GraphProto*> bodies;
      if (attr.has_g()) bodies.push_back(&attr.g());
      for (const auto& g : attr.graphs()) bodies.push_back(&g);
      for (const onnx::GraphProto* body : bodies) {
        for (const auto& inner : body->node()) {
          ++in_bodies;
          const bool default_domain = inner.domain().empty() || inner.domain() == "ai.onnx";
          ++s.op_histogram[default_domain ? inner.op_type() : inner.domain() + "::" + inner.op_type()];
          count_bodies(inner);
        }
      }
    }
  };
  for (const auto& node : graph.node()) count_bodies(node);
  if (in_bodies > 0) {
    s.node_count += in_bodies;
    s.notes.push_back("nodes inside If/Loop/Scan bodies: " + std::to_string(in_bodies) + " (counted above)");
  }
  return s;
}

std::string FormatDims(const TensorSpec& spec) {
  if (!spec.has_shape) return "(unknown rank)";
  if (spec.dims.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < spec.dims.size(); ++i) {
    if (i) out += "x";
    const DimSpec& d = spec.dims[i];
    out += d.is_static() ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param);
  }
  return out;
}

nlohmann::json SummaryToJson(const ModelSummary& summary) {
  auto tensors = [](const std::vector<TensorSpec>& specs) {
    nlohmann::json list = nlohmann::json::array();
    for (const TensorSpec& spec : specs) {
      nlohmann::json dims = nullptr;
      if (spec.has_shape) {
        dims = nlohmann::json::array();
        for (const DimSpec& d : spec.dims) {
          if (d.is_static()) {
            dims.push_back(d.value);
          } else {
            dims.push_back(d.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.param));
          }
        }
      }
      list.push_back({{"name", spec.name}, {"dtype", spec.dtype}, {"shape", dims}});
    }
    return list;
  };
  nlohmann::json opsets = nlohmann::json::object();
  for (const auto& [domain, version] : summary.opsets) opsets[domain.empty() ? "ai.onnx" : domain] = version;
  return {
      {"path", summary.path},
      {"sha256", summary.sha256.empty() ? nlohmann::json(nullptr) : nlohmann::json(summary.sha256)},
      {"ir_version", summary.ir_version},
      {"producer", summary.producer},
      {"opset", summary.default_opset},
      {"opsets", opsets},
      {"inputs", tensors(summary.inputs)},
      {"outputs", tensors(summary.outputs)},
      {"nodes", summary.node_count},
      {"op_histogram", summary.op_histogram},
      {"initializers", summary.initializer_count},
      {"constant_nodes", summary.constant_node_count},
      {"params", summary.parameter_count},
      {"param_bytes", summary.parameter_bytes},
      {"notes", summary.notes},
  };
}

Result<ModelSummary> SummaryFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return ParseError("the run's model is not a JSON object");
  auto tensors = [](const nlohmann::json& list) {
    std::vector<TensorSpec> specs;
    if (!list.is_array()) return specs;
    for (const auto& t : list) {
      TensorSpec spec;
      spec.name = t.value("name", "");
      spec.dtype = t.value("dtype", "");
      if (t.contains("shape") && t["shape"].is_array()) {
        spec.has_shape = true;
        for (const auto& d : t["shape"]) {
          DimSpec dim;
          if (d.is_number_integer()) dim.value = d.get<int64_t>();
          if (d.is_string()) dim.param = d.get<std::string>();
          spec.dims.push_back(dim);
        }
      }
      specs.push_back(std::move(spec));
    }
    return specs;
  };
  try {
    ModelSummary s;
    s.path = j.value("path", "");
    if (j.contains("sha256") && j["sha256"].is_string()) s.sha256 = j["sha256"].get<std::string>();
    s.ir_version = j.value("ir_version", int64_t{0});
    s.producer = j.value("producer", "");
    s.default_opset = j.value("opset", int64_t{0});
    if (j.contains("opsets") && j["opsets"].is_object()) {
      for (const auto& [domain, version] : j["opsets"].items())
        s.opsets[domain == "ai.onnx" ? "" : domain] = version.get<int64_t>();
    }
    if (j.contains("inputs")) s.inputs = tensors(j["inputs"]);
    if (j.contains("outputs")) s.outputs = tensors(j["outputs"]);
    s.node_count = j.value("nodes", int64_t{0});
    if (j.contains("op_histogram") && j["op_histogram"].is_object())
      s.op_histogram = j["op_histogram"].get<std::map<std::string, int64_t>>();
    s.initializer_count = j.value("initializers", int64_t{0});
    s.constant_node_count = j.value("constant_nodes", int64_t{0});
    s.parameter_count = j.value("params", int64_t{0});
    s.parameter_bytes = j.value("param_bytes", int64_t{0});
    if (j.contains("notes") && j["notes"].is_array()) s.notes = j["notes"].get<std::vector<std::string>>();
    return s;
  } catch (const nlohmann::json::exception& e) {
    return ParseError(std::string("the run's model: ") + e.what());
  }
}

}  // namespace chipfit
