// AnalyzeModel: load → import → reference compile → one compile per target, each step named in its errors.
#include "profilers/session/model_analysis.h"

#include <exception>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/tensor/dtype.h"
#include "devices/target_compiler.h"

namespace chipfit {
namespace {

// Messages from the loader name the file already; the shape parser's and a compiler's may not, and the
// GUI shows them without the context a command line gives.
Status NamingFile(const Status& status, const std::filesystem::path& path) {
  if (status.message().find(path.string()) != std::string::npos) return status;
  return {status.code(), "'" + path.string() + "': " + status.message()};
}

std::string DimsText(const Shape& shape, const std::vector<std::string>& params) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += "x";
    if (shape[i] >= 0) {
      text += std::to_string(shape[i]);
    } else {
      text += i < params.size() && !params[i].empty() ? params[i] : "?";
    }
  }
  return text.empty() ? "scalar" : text;
}

// "1x3x48x192 f32"; "" when neither shape nor dtype is known.
std::string DescribeValue(const ValueDesc& value) {
  std::string text = value.has_shape ? DimsText(value.shape, value.dim_params) : "";
  if (value.dtype != DType::kUndefined) text += (text.empty() ? "" : " ") + std::string(DTypeName(value.dtype));
  return text;
}

std::map<std::string, std::string> DescribeValues(const Graph& graph, const std::vector<ValueDesc>& computed) {
  std::map<std::string, std::string> described;
  for (const auto& [name, value] : graph.value_info) described[name] = DescribeValue(value);
  for (const auto& [name, tensor] : graph.initializers) {
    described[name] = DimsText(tensor.shape(), {}) + " " + std::string(DTypeName(tensor.dtype()));
  }
  // Declared graph inputs and outputs win over inferred descriptions: they carry the user's bindings.
  for (const ValueDesc& value : graph.inputs) described[value.name] = DescribeValue(value);
  for (const ValueDesc& value : graph.outputs) described[value.name] = DescribeValue(value);
  for (const ValueDesc& value : computed) described[value.name] = DescribeValue(value);
  return described;
}

// An attribute as a user reads it in Netron: "strides=[2, 2]", "mode=nearest"; long lists cut short.
std::string DescribeAttribute(const std::string& name, const Attribute& a) {
  constexpr size_t kMaxItems = 16;
  const auto list = [](const auto& items, auto format) {
    std::string out = "[";
    for (size_t i = 0; i < items.size() && i < kMaxItems; ++i) out += (i > 0 ? ", " : "") + format(items[i]);
    if (items.size() > kMaxItems) out += ", … (" + std::to_string(items.size()) + " in all)";
    return out + "]";
  };
  const auto number = [](double v) {
    std::ostringstream text;
    text << v;
    return text.str();
  };
  switch (a.kind) {
    case Attribute::Kind::kInt: return name + "=" + std::to_string(a.i);
    case Attribute::Kind::kFloat: return name + "=" + number(a.f);
    case Attribute::Kind::kString: return name + "=" + a.s;
    case Attribute::Kind::kInts: return name + "=" + list(a.ints, [](int64_t v) { return std::to_string(v); });
    case Attribute::Kind::kFloats: return name + "=" + list(a.floats, number);
    case Attribute::Kind::kStrings: return name + "=" + list(a.strings, [](const std::string& v) { return v; });
    case Attribute::Kind::kTensor: return name + "=tensor";
    case Attribute::Kind::kGraph:
      return name + "=graph" + (a.graph ? " (" + std::to_string(a.graph->nodes.size()) + " nodes)" : std::string());
    case Attribute::Kind::kType: return name + "=" + a.s + " type " + std::to_string(a.i);
  }
  return name;
}

// `computed`: values whose shapes a compile worked out, over what the file declares.
std::vector<NodeRow> NodeRows(const Graph& graph, const std::vector<ValueDesc>& computed) {
  const auto described = DescribeValues(graph, computed);
  auto label = [&](const std::string& name) {
    const auto it = described.find(name);
    return it == described.end() || it->second.empty() ? name : name + ": " + it->second;
  };
  std::vector<NodeRow> rows;
  rows.reserve(graph.nodes.size());
  for (const Node& node : graph.nodes) {
    NodeRow row;
    row.name = node.name;
    row.op = node.domain.empty() || node.domain == "ai.onnx" ? node.op_type : node.domain + "::" + node.op_type;
    // Omitted optional inputs and outputs ("") are positions, not values: nothing to show.
    for (const auto& input : node.inputs) {
      if (!input.empty()) row.inputs.push_back(label(input));
    }
    for (const auto& output : node.outputs) {
      if (!output.empty()) row.outputs.push_back(label(output));
    }
    for (const auto& [attr, value] : node.attributes) row.attributes.push_back(DescribeAttribute(attr, value));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> UnboundInputs(const Graph& graph) {
  std::vector<std::string> unbound;
  for (const ValueDesc& input : graph.inputs) {
    bool dynamic = !input.has_shape;
    for (int64_t dim : input.shape) dynamic = dynamic || dim < 0;
    if (dynamic) {
      unbound.push_back(input.name + " (" +
                        (input.has_shape ? DimsText(input.shape, input.dim_params) : "unknown rank") + ")");
    }
  }
  return unbound;
}

TensorSpec SpecOf(const ValueDesc& value) {
  TensorSpec spec{
      .name = value.name, .dtype = std::string(DTypeName(value.dtype)), .dims = {}, .has_shape = value.has_shape};
  for (size_t i = 0; i < value.shape.size(); ++i) {
    spec.dims.push_back({.value = value.shape[i], .param = i < value.dim_params.size() ? value.dim_params[i] : ""});
  }
  return spec;
}

// Returns the outputs as compiled (exact shapes), empty when the reference does not compile the graph.
std::vector<ValueDesc> CompileReference(const Graph& graph, ModelAnalysis& analysis) {
  auto compiled = Compile(graph, Target{});
  if (!compiled.ok()) {
    analysis.notes.push_back("ref:fp32 does not compile it: " + compiled.status().message());
    return {};
  }
  const CompileStats& stats = (*compiled)->stats();
  analysis.compiled = true;
  analysis.flops = stats.flops;
  analysis.planned_peak_bytes = static_cast<int64_t>(stats.planned_arena_bytes);
  analysis.constant_bytes = static_cast<int64_t>(stats.constant_bytes);
  if (stats.dynamic_kernels > 0) {
    analysis.notes.push_back(stats.dynamic_kernels == 1
                                 ? "1 kernel has shapes known only while running: its FLOPs are not counted"
                                 : std::to_string(stats.dynamic_kernels) +
                                       " kernels have shapes known only while running: their FLOPs are not counted");
  }
  analysis.outputs.clear();
  for (const ValueDesc& output : (*compiled)->outputs()) analysis.outputs.push_back(SpecOf(output));
  return (*compiled)->outputs();
}

// Device libraries (oneDNN, OpenCL wrappers) may throw; the other targets still deserve a result.
Result<std::unique_ptr<CompiledModel>> CompileCatching(const Graph& graph, const Target& target) {
  // Placement does not depend on how good the int8 ranges are: one seeded sample calibrates enough to
  // see which nodes the device takes, without the cost of a real calibration.
  Int8Options int8;
  int8.random_samples = 1;
  try {
    return CompileForTarget(graph, target, {}, int8);
  } catch (const std::exception& error) {
    return Internal(target.ToString() + ": " + error.what());
  }
}

TargetPlacement PlaceOn(const Graph& graph, const Target& target) {
  TargetPlacement placement;
  placement.target = target;
  auto compiled = CompileCatching(graph, target);
  if (!compiled.ok()) {
    placement.status = compiled.status().code() == StatusCode::kUnsupported ? "unsupported" : "failed";
    placement.error = compiled.status().message();
    return placement;
  }
  placement.fallbacks = (*compiled)->fallbacks();
  return placement;
}

// The file's own declaration of its inputs, and the checked model with the bindings applied: parsing
// once and checking the parsed proto keeps a large model from being read twice.
struct LoadedPair {
  std::vector<TensorSpec> declared_inputs;
  LoadedOnnxModel model;
};

Result<LoadedPair> Load(const std::filesystem::path& path, const std::vector<std::string>& shapes) {
  OnnxLoadOptions options;
  for (const std::string& text : shapes) {
    auto binding = ParseShapeBinding(text);
    if (!binding.ok()) return NamingFile(binding.status(), path);
    options.input_shapes[binding->first] = binding->second;
  }
  ASSIGN_OR_RETURN(LoadedOnnxModel raw, LoadOnnxModel(path, {.run_checker = false, .infer_shapes = false}));
  LoadedPair pair;
  pair.declared_inputs = Summarize(raw).inputs;
  const std::string sha256 = raw.sha256;
  auto checked = CheckOnnxModel(std::move(raw.proto), path.string(), options);
  if (!checked.ok()) return NamingFile(checked.status(), path);
  pair.model = std::move(*checked);
  pair.model.sha256 = sha256;
  return pair;
}

}  // namespace

Result<ModelAnalysis> AnalyzeModel(const std::filesystem::path& path, const std::vector<std::string>& shapes,
                                   const std::vector<Target>& targets, const std::stop_token& stop,
                                   const std::function<void(const std::string& step)>& step) {
  const auto cancelled = [&] { return Cancelled("analysis of '" + path.string() + "' cancelled"); };
  const auto say = [&](const std::string& text) {
    if (step) step(text);
  };
  say("loading the file, checking it and inferring shapes");
  ASSIGN_OR_RETURN(LoadedPair loaded, Load(path, shapes));
  ModelAnalysis analysis;
  analysis.summary = Summarize(loaded.model);
  analysis.declared_inputs = std::move(loaded.declared_inputs);
  analysis.shapes = shapes;
  analysis.notes = analysis.summary.notes;
  // Dynamic inputs are imported anyway: the node list and the inputs table are what a user needs to
  // choose the dims; only compiling waits for them.
  say("importing the graph");
  auto graph = ImportModel(loaded.model, {.require_static_inputs = false});
  if (!graph.ok()) return NamingFile(graph.status(), path);
  analysis.outputs = analysis.summary.outputs;
  analysis.unbound_inputs = UnboundInputs(*graph);
  if (!analysis.unbound_inputs.empty()) {
    analysis.nodes = NodeRows(*graph, {});
    return analysis;
  }
  if (stop.stop_requested()) return cancelled();
  say("compiling for the reference: compute and memory");
  analysis.nodes = NodeRows(*graph, CompileReference(*graph, analysis));
  for (size_t i = 0; i < targets.size(); ++i) {
    if (stop.stop_requested()) return cancelled();
    say("compiling for " + targets[i].ToString() + " (" + std::to_string(i + 1) + " of " +
        std::to_string(targets.size()) + "): which nodes its device runs");
    analysis.placements.push_back(PlaceOn(*graph, targets[i]));
  }
  if (stop.stop_requested()) return cancelled();
  return analysis;
}

}  // namespace chipfit
