// libonnx edges: protobuf parsing, onnx::checker and onnx::shape_inference exceptions become Status.
#include "core/graph/onnx_loader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <map>
#include <set>

#include "core/sha256.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace chipfit {
namespace {

int64_t DefaultOpset(const onnx::ModelProto& proto) {
  for (const auto& opset : proto.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return opset.version();
  }
  return 0;
}

// Names a graph reads from enclosing scopes: its nodes' inputs (nested bodies included) and its
// outputs, less what it defines itself.
void ProtoOuterReads(const onnx::GraphProto& graph, std::set<std::string>& reads);

void ProtoNodeOuterReads(const onnx::NodeProto& node, std::set<std::string>& reads) {
  for (const auto& attr : node.attribute()) {
    if (attr.has_g()) ProtoOuterReads(attr.g(), reads);
    for (const auto& g : attr.graphs()) ProtoOuterReads(g, reads);
  }
}

void ProtoOuterReads(const onnx::GraphProto& graph, std::set<std::string>& reads) {
  std::set<std::string> defined;
  for (const auto& in : graph.input()) defined.insert(in.name());
  for (const auto& init : graph.initializer()) defined.insert(init.name());
  for (const auto& node : graph.node()) defined.insert(node.output().begin(), node.output().end());
  std::set<std::string> own;
  for (const auto& node : graph.node()) {
    own.insert(node.input().begin(), node.input().end());
    ProtoNodeOuterReads(node, own);
  }
  for (const auto& out : graph.output()) own.insert(out.name());
  for (const std::string& name : own) {
    if (!name.empty() && !defined.contains(name)) reads.insert(name);
  }
}

// Puts the graph's nodes (and every body's) in an order where each node follows the producers of
// the values it reads, its bodies' outer reads included, keeping the file's order wherever it is
// valid. Returns whether anything moved; a cycle is left as it is for the importer to report.
bool SortProtoNodes(onnx::GraphProto& graph) {
  bool moved = false;
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) moved |= SortProtoNodes(*attr.mutable_g());
      for (auto& g : *attr.mutable_graphs()) moved |= SortProtoNodes(g);
    }
  }
  const int n = graph.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const std::string& out : graph.node(i).output()) {
      if (!out.empty()) producer.emplace(out, i);
    }
  }
  std::vector<std::set<int>> deps(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::set<std::string> reads(graph.node(i).input().begin(), graph.node(i).input().end());
    ProtoNodeOuterReads(graph.node(i), reads);
    for (const std::string& name : reads) {
      auto it = producer.find(name);
      if (it != producer.end() && it->second != i) deps[static_cast<size_t>(i)].insert(it->second);
    }
  }
  std::vector<int> order;
  std::vector<bool> placed(static_cast<size_t>(n), false);
  // Repeatedly take the first node whose producers are all placed: stable, and n is small enough
  // in practice; stops (leaving the rest in file order) on a cycle.
  while (static_cast<int>(order.size()) < n) {
    bool progress = false;
    for (int i = 0; i < n; ++i) {
      if (placed[static_cast<size_t>(i)]) continue;
      bool ready = true;
      for (int d : deps[static_cast<size_t>(i)]) ready &= placed[static_cast<size_t>(d)];
      if (!ready) continue;
      placed[static_cast<size_t>(i)] = true;
      order.push_back(i);
      progress = true;
      break;
    }
    if (!progress) return moved;
  }
  bool sorted = true;
  for (int i = 0; i < n; ++i) sorted &= order[static_cast<size_t>(i)] == i;
  if (sorted) return moved;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i : order) *nodes.Add() = graph.node(i);
  graph.mutable_node()->Swap(&nodes);
  return true;
}

// The op of a checker complaint "No Op registered for OP with domain_version of N" when OP is one ONNX Runtime
// registers in the ONNX domain as its own contrib op (LayerNormalization before opset 17 made it standard,
// SimplifiedLayerNormalization); empty otherwise.
std::string OrtOnnxDomainOp(const std::string& complaint) {
  for (const char* op : {"SimplifiedLayerNormalization", "LayerNormalization"}) {
    if (complaint.find(std::string("No Op registered for ") + op + " with domain_version") != std::string::npos) {
      return op;
    }
  }
  return {};
}

// onnx::checker, with the complaints ONNX Runtime tolerates turned into warnings (their text kept in
// `notes`): unsorted nodes are sorted and the model checked again; a value whose type has no shape
// (ONNX Runtime infers it) ends the checker's pass, and chipfit's own import checks the rest.
Status RunChecker(onnx::ModelProto& proto, const std::string& origin, std::vector<std::string>& notes) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      onnx::checker::check_model(proto);
      return Status();
    } catch (const std::exception& e) {
      const std::string complaint = e.what();
      if (complaint.find("topologically sorted") != std::string::npos && attempt == 0 &&
          SortProtoNodes(*proto.mutable_graph())) {
        notes.push_back("warning: the ONNX checker says \"" + complaint +
                        "\"; chipfit sorted the nodes, as ONNX Runtime does");
        continue;
      }
      if (const std::string op = OrtOnnxDomainOp(complaint); !op.empty()) {
        notes.push_back("warning: the ONNX checker says \"" + complaint + "\"; ONNX Runtime registers " + op +
                        " in the ONNX domain itself, and so does chipfit (the checker stops at its first complaint: "
                        "chipfit's import checks the rest)");
        return Status();
      }
      if (complaint.find("Field 'shape' of 'type' is required but missing") != std::string::npos) {
        notes.push_back("warning: the ONNX checker says \"" + complaint +
                        "\"; ONNX Runtime accepts values without a declared shape, and so does chipfit "
                        "(the checker stops at its first complaint: chipfit's import checks the rest)");
        return Status();
      }
      return InvalidArgument("'" + origin + "' fails the ONNX checker: " + complaint);
    }
  }
  return Status();
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string DimsText(const onnx::TensorShapeProto& shape) {
  std::string out;
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& d = shape.dim(i);
    out += (i ? "x" : "") +
           (d.has_dim_value() ? std::to_string(d.dim_value()) : (d.has_dim_param() ? d.dim_param() : "?"));
  }
  return out.empty() ? "scalar" : out;
}

Status BindInputShapes(onnx::ModelProto& proto, const std::map<std::string, std::vector<int64_t>>& shapes,
                       bool override_declared, const std::string& origin) {
  auto* graph = proto.mutable_graph();
  std::set<std::string> initializers;
  for (const auto& init : graph->initializer()) initializers.insert(init.name());
  for (const auto& [name, dims] : shapes) {
    onnx::ValueInfoProto* input = nullptr;
    std::string names;
    for (auto& candidate : *graph->mutable_input()) {
      if (initializers.contains(candidate.name())) continue;
      names += (names.empty() ? "" : ", ") + candidate.name();
      if (candidate.name() == name) input = &candidate;
    }
    if (input == nullptr) {
      return InvalidArgument("--shape " + name + ": '" + origin + "' has no input named '" + name +
                             "' (inputs: " + names + ")");
    }
    // An optional(tensor) input binds its tensor; a sequence's elements each have their own shape.
    onnx::TypeProto* type = input->mutable_type();
    if (type->has_optional_type()) type = type->mutable_optional_type()->mutable_elem_type();
    if (type->has_sequence_type()) {
      return InvalidArgument("--shape " + name + ": input '" + name +
                             "' is a sequence; its elements' shapes are not bound");
    }
    auto* tensor = type->mutable_tensor_type();
    std::string bound;
    for (size_t i = 0; i < dims.size(); ++i) bound += (i ? "x" : "") + std::to_string(dims[i]);
    if (tensor->has_shape() && !override_declared) {
      const auto& declared = tensor->shape();
      if (declared.dim_size() != static_cast<int>(dims.size())) {
        return InvalidArgument("--shape " + name + "=" + bound + ": input '" + name + "' has rank " +
                               std::to_string(declared.dim_size()) + " (" + DimsText(declared) + ")");
      }
      for (int i = 0; i < declared.dim_size(); ++i) {
        if (declared.dim(i).has_dim_value() && declared.dim(i).dim_value() != dims[static_cast<size_t>(i)]) {
          return InvalidArgument("--shape " + name + "=" + bound + ": dimension " + std::to_string(i) + " of input '" +
                                 name + "' is fixed at " + std::to_string(declared.dim(i).dim_value()) + " (" +
                                 DimsText(declared) + ")");
        }
      }
    }
    auto* shape = tensor->mutable_shape();
    shape->clear_dim();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }
  // Inferred shapes from before the binding would contradict the new ones.
  if (!shapes.empty()) graph->clear_value_info();
  return Status::Ok();
}

}  // namespace

int64_t LibOnnxMaxOpset() {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(onnx::ONNX_DOMAIN);
  return it == map.end() ? 0 : it->second.second;
}

Result<LoadedOnnxModel> LoadOnnxModel(const std::filesystem::path& path, const OnnxLoadOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("model file '" + path.string() + "' does not exist");
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument("model path '" + path.string() + "' is a directory, not an .onnx file");
  }
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return IoError("cannot open model file '" + path.string() + "': " + std::strerror(errno));
  }
  onnx::ModelProto proto;
  {
    google::protobuf::io::FileInputStream raw(fd.get());
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);  // protobuf's own ceiling; larger weights live in external data files
    if (!proto.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
      return ParseError("'" + path.string() +
                        "' is not a valid ONNX model: protobuf parsing failed (truncated or not an ONNX file)");
    }
  }
  auto sha256 = Sha256File(path);
  if (!sha256.ok()) return sha256.status();
  auto model = CheckOnnxModel(std::move(proto), path.string(), options);
  if (model.ok()) model->sha256 = *sha256;
  return model;
}

Result<LoadedOnnxModel> CheckOnnxModel(onnx::ModelProto proto, const std::string& origin,
                                       const OnnxLoadOptions& options) {
  LoadedOnnxModel model;
  model.path = origin;
  model.default_opset = DefaultOpset(proto);
  if (!proto.has_graph() || proto.graph().node_size() == 0) {
    return ParseError("'" + origin + "' holds no graph nodes: not an ONNX model, or an empty one");
  }
  if (model.default_opset == 0) {
    for (const auto& node : proto.graph().node()) {
      if (node.domain().empty() || node.domain() == "ai.onnx") {
        return ParseError("'" + origin + "' uses ai.onnx ops but imports no ai.onnx opset");
      }
    }
  }
  RETURN_IF_ERROR(BindInputShapes(proto, options.input_shapes, options.override_declared_shapes, origin));
  const int64_t known = LibOnnxMaxOpset();
  const bool libonnx_knows_opset = model.default_opset <= known;
  if (!libonnx_knows_opset) {
    model.notes.push_back("opset " + std::to_string(model.default_opset) + " is newer than libonnx " + "knows (<= " +
                          std::to_string(known) + "): onnx::checker and libonnx shape inference were skipped");
  }
  if (options.run_checker && libonnx_knows_opset) RETURN_IF_ERROR(RunChecker(proto, origin, model.notes));
  if (options.infer_shapes && libonnx_knows_opset) {
    try {
      onnx::ShapeInferenceOptions si_options(/*check_type_val=*/true,
                                             /*strict_mode_val=*/options.strict_shape_inference ? 1 : 0,
                                             /*data_prop_val=*/true);
      onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), si_options);
    } catch (const std::exception& e) {
      // libonnx's inference is a cross-check (chipfit infers every shape itself); its failures on
      // models it should accept are known, so they are reported, not fatal.
      model.notes.push_back(std::string("libonnx shape inference failed: ") + e.what());
    }
  }
  model.proto = std::move(proto);
  return model;
}

}  // namespace chipfit
