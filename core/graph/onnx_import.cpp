// ONNX → Graph import. Everything a malformed model can get wrong becomes a Status naming the
// model's tensor, node or value.
#include "core/graph/onnx_import.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <queue>
#include <set>

#include "core/graph/scope.h"
#include "onnx/onnx-data.pb.h"

namespace chipfit {
namespace fs = std::filesystem;
namespace {

Result<std::vector<char>> ReadExternal(const onnx::TensorProto& proto, const fs::path& base_dir,
                                       const std::string& what, size_t expected_bytes) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset") offset = std::stoll(entry.value());
    if (entry.key() == "length") length = std::stoll(entry.value());
  }
  const fs::path relative(location);
  if (location.empty() || relative.is_absolute()) {
    return ParseError(what + ": external data location '" + location + "' must be a relative file name");
  }
  for (const auto& part : relative) {
    if (part == "..") return ParseError(what + ": external data location '" + location + "' leaves the model folder");
  }
  const fs::path file = base_dir / relative;
  std::ifstream in(file, std::ios::binary);
  if (!in) return NotFound(what + ": external data file '" + file.string() + "' cannot be opened");
  const size_t bytes = length >= 0 ? static_cast<size_t>(length) : expected_bytes;
  if (bytes != expected_bytes) {
    return ParseError(what + ": external data length " + std::to_string(bytes) + " does not match " +
                      std::to_string(expected_bytes) + " bytes of the tensor");
  }
  std::vector<char> data(bytes);
  in.seekg(offset);
  in.read(data.data(), static_cast<std::streamsize>(bytes));
  if (static_cast<size_t>(in.gcount()) != bytes) {
    return ParseError(what + ": external data file '" + file.string() + "' is shorter than offset " +
                      std::to_string(offset) + " + " + std::to_string(bytes) + " bytes");
  }
  return data;
}

// Copies a repeated protobuf field into the tensor, converting each element to T.
template <typename T, typename Field>
void CopyField(const Field& field, Tensor& tensor) {
  T* out = tensor.data<T>();
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
}

Status FillFromTypedFields(const onnx::TensorProto& proto, Tensor& tensor, const std::string& what) {
  const int64_t n = tensor.numel();
  auto check = [&](int size) -> Status {
    if (size != n) {
      return ParseError(what + ": has " + std::to_string(size) + " values for shape " + ShapeToString(tensor.shape()) +
                        " (" + std::to_string(n) + " elements)");
    }
    return Status::Ok();
  };
  switch (tensor.dtype()) {
    case DType::kF32:
      RETURN_IF_ERROR(check(proto.float_data_size()));
      CopyField<float>(proto.float_data(), tensor);
      break;
    case DType::kF64:
      RETURN_IF_ERROR(check(proto.double_data_size()));
      CopyField<double>(proto.double_data(), tensor);
      break;
    case DType::kI64:
      RETURN_IF_ERROR(check(proto.int64_data_size()));
      CopyField<int64_t>(proto.int64_data(), tensor);
      break;
    case DType::kU32:
      RETURN_IF_ERROR(check(proto.uint64_data_size()));
      CopyField<uint32_t>(proto.uint64_data(), tensor);
      break;
    case DType::kU64:
      RETURN_IF_ERROR(check(proto.uint64_data_size()));
      CopyField<uint64_t>(proto.uint64_data(), tensor);
      break;
    case DType::kI32:
      RETURN_IF_ERROR(check(proto.int32_data_size()));
      CopyField<int32_t>(proto.int32_data(), tensor);
      break;
    case DType::kI16:
      RETURN_IF_ERROR(check(proto.int32_data_size()));
      CopyField<int16_t>(proto.int32_data(), tensor);
      break;
    case DType::kU16:
      RETURN_IF_ERROR(check(proto.int32_data_size()));
      CopyField<uint16_t>(proto.int32_data(), tensor);
      break;
    case DType::kI8:
      RETURN_IF_ERROR(check(proto.int32_data_size()));
      CopyField<int8_t>(proto.int32_data(), tensor);
      break;
    case DType::kU8:
      RETURN_IF_ERROR(check(proto.int32_data_size()));
      CopyField<uint8_t>(proto.int32_data(), tensor);
      break;
    case DType::kBool:
      RETURN_IF_ERROR(check(proto.int32_data_size()));
      CopyField<bool>(proto.int32_data(), tensor);
      break;
    // float16 and bfloat16 values are stored as their bit patterns in int32_data.
    case DType::kF16:
    case DType::kBF16:
      RETURN_IF_ERROR(check(proto.int32_data_size()));
      CopyField<uint16_t>(proto.int32_data(), tensor);
      break;
    default: return Unsupported(what + ": dtype " + std::string(DTypeName(tensor.dtype())) + " is not supported");
  }
  return Status::Ok();
}

// An ONNX element type's name, also for the codes newer than libonnx 1.12 knows (its table stops at 16).
std::string OnnxTypeName(int32_t code) {
  static const std::map<int32_t, std::string> kNewer = {
      {17, "FLOAT8E4M3FN"}, {18, "FLOAT8E4M3FNUZ"}, {19, "FLOAT8E5M2"}, {20, "FLOAT8E5M2FNUZ"},
      {21, "UINT4"},        {22, "INT4"},           {23, "FLOAT4E2M1"}};
  if (auto it = kNewer.find(code); it != kNewer.end()) return it->second;
  const std::string name = onnx::TensorProto_DataType_Name(code);
  return name.empty() ? "type code " + std::to_string(code) : name;
}

// The tensor type inside optional(...) and seq(...) (ONNX nests them: optional(seq(tensor))), or
// nullptr for a map or a sequence of maps, which chipfit does not run.
const onnx::TypeProto_Tensor* InnerTensorType(const onnx::TypeProto& type, bool* sequence, bool* optional) {
  const onnx::TypeProto* t = &type;
  if (t->has_optional_type()) {
    *optional = true;
    t = &t->optional_type().elem_type();
  }
  if (t->has_sequence_type()) {
    *sequence = true;
    t = &t->sequence_type().elem_type();
  }
  return t->has_tensor_type() ? &t->tensor_type() : nullptr;
}

// A graph input or output of a type chipfit has no dtype for (float8, int4, complex …, or a map) is
// refused naming it, rather than imported with an undefined dtype that fails later without a reason.
Status CheckKnownTensorType(const onnx::ValueInfoProto& value, const std::string& graph_what) {
  if (!value.has_type() || value.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return Status();
  bool sequence = false, optional = false;
  const onnx::TypeProto_Tensor* tensor = InnerTensorType(value.type(), &sequence, &optional);
  if (tensor == nullptr) {
    return Unsupported(graph_what + ": value '" + value.name() +
                       "' is a map or a sequence of maps; chipfit runs tensors, sequences of tensors and optionals");
  }
  const int32_t code = tensor->elem_type();
  if (code == 0 || DTypeFromOnnx(code)) return Status();
  return Unsupported(graph_what + ": value '" + value.name() + "' has element type " + OnnxTypeName(code) +
                     ", which chipfit does not support");
}

ValueDesc DescFromOnnx(const onnx::ValueInfoProto& value) {
  ValueDesc desc;
  desc.name = value.name();
  const onnx::TypeProto_Tensor* tensor = InnerTensorType(value.type(), &desc.sequence, &desc.optional);
  if (tensor == nullptr) return desc;
  if (auto dtype = DTypeFromOnnx(tensor->elem_type())) desc.dtype = *dtype;
  // A sequence's elements may differ in shape; its element shape is a hint chipfit does not bind.
  if (tensor->has_shape() && !desc.sequence) {
    desc.has_shape = true;
    for (const auto& dim : tensor->shape().dim()) {
      desc.shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      desc.dim_params.push_back(dim.has_dim_param() ? dim.dim_param() : "");
    }
  }
  return desc;
}

Result<Attribute> ImportAttribute(const onnx::AttributeProto& proto, const Node& node, int64_t opset,
                                  const fs::path& base_dir, const std::set<std::string>& visible) {
  const std::string what = node.Describe() + " attribute '" + proto.name() + "'";
  if (!proto.ref_attr_name().empty()) {
    return Unsupported(what + ": references a function attribute (model-local functions are not supported)");
  }
  Attribute a;
  switch (proto.type()) {
    case onnx::AttributeProto::FLOAT:
      a.kind = Attribute::Kind::kFloat;
      a.f = proto.f();
      break;
    case onnx::AttributeProto::INT:
      a.kind = Attribute::Kind::kInt;
      a.i = proto.i();
      break;
    case onnx::AttributeProto::STRING:
      a.kind = Attribute::Kind::kString;
      a.s = proto.s();
      break;
    case onnx::AttributeProto::FLOATS:
      a.kind = Attribute::Kind::kFloats;
      a.floats.assign(proto.floats().begin(), proto.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      a.kind = Attribute::Kind::kInts;
      a.ints.assign(proto.ints().begin(), proto.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      a.kind = Attribute::Kind::kStrings;
      a.strings.assign(proto.strings().begin(), proto.strings().end());
      break;
    case onnx::AttributeProto::TENSOR: {
      a.kind = Attribute::Kind::kTensor;
      ASSIGN_OR_RETURN(Tensor t, TensorFromOnnx(proto.t(), base_dir, what));
      a.tensor = std::make_shared<const Tensor>(std::move(t));
      break;
    }
    case onnx::AttributeProto::GRAPH: {
      a.kind = Attribute::Kind::kGraph;
      auto sub = ImportGraph(proto.g(), opset, base_dir, visible);
      if (!sub.ok()) return Status(sub.status().code(), what + ": " + sub.status().message());
      a.graph = std::make_shared<const Graph>(std::move(sub).value());
      break;
    }
    case onnx::AttributeProto::TYPE_PROTO: {
      bool sequence = false, optional = false;
      const onnx::TypeProto_Tensor* tensor = InnerTensorType(proto.tp(), &sequence, &optional);
      if (tensor == nullptr || optional) return Unsupported(what + ": only tensor and sequence types are supported");
      a.kind = Attribute::Kind::kType;
      a.s = sequence ? "sequence" : "tensor";
      a.i = tensor->elem_type();
      break;
    }
    default:
      return Unsupported(what + ": attribute type " + onnx::AttributeProto_AttributeType_Name(proto.type()) +
                         " is not supported");
  }
  return a;
}

// Kahn's algorithm over value producers; reports a node on a cycle when there is one.
Result<std::vector<Node>> SortTopologically(std::vector<Node> nodes, const std::string& graph_name) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& out : nodes[i].outputs) {
      if (out.empty()) continue;
      if (!producer.emplace(out, i).second) {
        return InvalidArgument("graph '" + graph_name + "': value '" + out + "' is produced by both " +
                               nodes[producer[out]].Describe() + " and " + nodes[i].Describe());
      }
    }
  }
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> consumers(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    // A control-flow node also depends on the values its bodies read from this graph.
    std::vector<std::string> reads = nodes[i].inputs;
    for (std::string& name : OuterScopeReads(nodes[i])) reads.push_back(std::move(name));
    std::set<size_t> producers;
    for (const std::string& in : reads) {
      auto it = producer.find(in);
      if (in.empty() || it == producer.end() || it->second == i) continue;
      if (producers.insert(it->second).second) {
        ++pending[i];
        consumers[it->second].push_back(i);
      }
    }
  }
  // A min-heap on the original index keeps the model's own order wherever it is already valid.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t c : consumers[i]) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (order.size() != nodes.size()) {
    std::string stuck;
    for (size_t i = 0; i < nodes.size() && stuck.size() < 200; ++i) {
      if (pending[i] > 0) stuck += (stuck.empty() ? "" : ", ") + nodes[i].Describe();
    }
    return InvalidArgument("graph '" + graph_name + "' has a cycle through " + stuck);
  }
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  for (size_t i : order) sorted.push_back(std::move(nodes[i]));
  return sorted;
}

}  // namespace

Result<Tensor> TensorFromOnnx(const onnx::TensorProto& proto, const fs::path& base_dir, const std::string& what) {
  auto dtype = DTypeFromOnnx(proto.data_type());
  if (!dtype) {
    return Unsupported(what + ": tensor element type " + OnnxTypeName(proto.data_type()) + " is not supported");
  }
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) return ParseError(what + ": negative dimension " + std::to_string(d));
    shape.push_back(d);
  }
  if (proto.has_segment()) return Unsupported(what + ": segmented tensors are not supported");
  // Check the size before allocating: a corrupt file must not turn into a huge allocation.
  constexpr int64_t kMaxElements = int64_t{1} << 40;
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d != 0 && elements > kMaxElements / d) {
      return ParseError(what + ": shape " + ShapeToString(shape) + " is implausibly large (corrupt file?)");
    }
    elements *= d;
  }
  if (*dtype == DType::kString) {
    if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
      return Unsupported(what + ": string tensors in external data are not supported");
    }
    if (proto.string_data_size() != elements) {
      return ParseError(what + ": " + std::to_string(proto.string_data_size()) + " strings for shape " +
                        ShapeToString(shape));
    }
    Tensor strings(DType::kString, shape);
    std::copy(proto.string_data().begin(), proto.string_data().end(), strings.data<std::string>());
    return strings;
  }
  const size_t bytes = static_cast<size_t>(elements) * DTypeSize(*dtype);
  if (proto.data_location() != onnx::TensorProto_DataLocation_EXTERNAL && proto.has_raw_data() &&
      proto.raw_data().size() != bytes) {
    return ParseError(what + ": raw_data has " + std::to_string(proto.raw_data().size()) + " bytes, shape " +
                      ShapeToString(shape) + " of " + std::string(DTypeName(*dtype)) + " needs " +
                      std::to_string(bytes));
  }
  Tensor tensor(*dtype, shape);
  if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    ASSIGN_OR_RETURN(std::vector<char> data, ReadExternal(proto, base_dir, what, bytes));
    if (bytes) std::memcpy(tensor.raw_data(), data.data(), bytes);
  } else if (proto.has_raw_data()) {
    if (bytes) std::memcpy(tensor.raw_data(), proto.raw_data().data(), bytes);
  } else if (tensor.numel() > 0) {
    RETURN_IF_ERROR(FillFromTypedFields(proto, tensor, what));
  }
  return tensor;
}

Result<Tensor> ReadTensorProtoFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("tensor file '" + path.string() + "' cannot be opened");
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&in)) return ParseError("'" + path.string() + "' is not a serialized TensorProto");
  return TensorFromOnnx(proto, path.parent_path(), "tensor file '" + path.string() + "'");
}

namespace {

Result<Tensor> SequenceFromOnnx(const onnx::SequenceProto& proto, DType dtype, const fs::path& base_dir,
                                const std::string& what) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR && proto.tensor_values_size() == 0 &&
      proto.elem_type() != onnx::SequenceProto::UNDEFINED) {
    return Unsupported(what + ": only sequences of tensors are supported");
  }
  std::vector<Tensor> elements;
  for (int i = 0; i < proto.tensor_values_size(); ++i) {
    ASSIGN_OR_RETURN(Tensor t,
                     TensorFromOnnx(proto.tensor_values(i), base_dir, what + " element " + std::to_string(i)));
    elements.push_back(std::move(t));
  }
  return Tensor::Sequence(dtype, std::move(elements));
}

}  // namespace

ValueDesc ValueDescFromOnnx(const onnx::ValueInfoProto& value) { return DescFromOnnx(value); }

Result<Tensor> ReadValueProtoFile(const fs::path& path, const ValueDesc& desc) {
  if (!desc.sequence && !desc.optional) return ReadTensorProtoFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("value file '" + path.string() + "' cannot be opened");
  const std::string what = "value file '" + path.string() + "'";
  if (desc.optional) {
    onnx::OptionalProto proto;
    if (!proto.ParseFromIstream(&in)) return ParseError(what + " is not a serialized OptionalProto");
    if (proto.has_tensor_value()) return TensorFromOnnx(proto.tensor_value(), path.parent_path(), what);
    if (proto.has_sequence_value())
      return SequenceFromOnnx(proto.sequence_value(), desc.dtype, path.parent_path(), what);
    if (proto.elem_type() == onnx::OptionalProto::TENSOR || proto.elem_type() == onnx::OptionalProto::SEQUENCE ||
        proto.elem_type() == onnx::OptionalProto::UNDEFINED) {
      return Tensor::None(desc.dtype, desc.sequence || proto.elem_type() == onnx::OptionalProto::SEQUENCE);
    }
    return Unsupported(what + ": only optional tensors and sequences are supported");
  }
  onnx::SequenceProto proto;
  if (!proto.ParseFromIstream(&in)) return ParseError(what + " is not a serialized SequenceProto");
  return SequenceFromOnnx(proto, desc.dtype, path.parent_path(), what);
}

Result<Graph> ImportGraph(const onnx::GraphProto& proto, int64_t opset, const fs::path& base_dir,
                          const std::set<std::string>& outer_scope) {
  Graph graph;
  graph.name = proto.name();
  graph.opset = opset;
  const std::string graph_what = "graph '" + graph.name + "'";
  for (const auto& init : proto.initializer()) {
    ASSIGN_OR_RETURN(Tensor t, TensorFromOnnx(init, base_dir, "initializer '" + init.name() + "'"));
    graph.initializers[init.name()] = std::move(t);
  }
  if (proto.sparse_initializer_size() > 0) return Unsupported(graph_what + ": sparse initializers are not supported");
  std::set<std::string> visible = outer_scope;
  for (const auto& [name, tensor] : graph.initializers) visible.insert(name);
  for (const auto& input : proto.input()) {
    visible.insert(input.name());
    if (!graph.initializers.contains(input.name())) graph.inputs.push_back(DescFromOnnx(input));
  }
  for (const auto& output : proto.output()) graph.outputs.push_back(DescFromOnnx(output));
  for (const auto* list : {&proto.input(), &proto.output()}) {
    for (const auto& value : *list) RETURN_IF_ERROR(CheckKnownTensorType(value, graph_what));
  }
  for (const auto& info : proto.value_info()) graph.value_info[info.name()] = DescFromOnnx(info);
  for (const auto& node : proto.node()) {
    for (const auto& out : node.output()) visible.insert(out);
  }

  std::set<std::string> names;
  std::vector<Node> nodes;
  for (int index = 0; index < proto.node_size(); ++index) {
    const onnx::NodeProto& np = proto.node(index);
    Node node;
    node.op_type = np.op_type();
    node.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    node.name = np.name().empty() ? np.op_type() + "#" + std::to_string(index) : np.name();
    // Duplicate names would make per-layer results ambiguous; keep them unique and stable.
    if (!names.insert(node.name).second) {
      node.name += "#" + std::to_string(index);
      names.insert(node.name);
    }
    node.inputs.assign(np.input().begin(), np.input().end());
    node.outputs.assign(np.output().begin(), np.output().end());
    for (const std::string& in : node.inputs) {
      if (!in.empty() && !visible.contains(in)) {
        return InvalidArgument(node.Describe() + ": input '" + in +
                               "' is not produced by any node and is not a graph input or initializer");
      }
    }
    for (const auto& attr : np.attribute()) {
      ASSIGN_OR_RETURN(Attribute a, ImportAttribute(attr, node, opset, base_dir, visible));
      node.attributes[attr.name()] = std::move(a);
    }
    nodes.push_back(std::move(node));
  }
  ASSIGN_OR_RETURN(graph.nodes, SortTopologically(std::move(nodes), graph.name));
  for (const ValueDesc& out : graph.outputs) {
    if (!visible.contains(out.name)) {
      return InvalidArgument(graph_what + ": output '" + out.name + "' is not produced by any node");
    }
  }
  return graph;
}

Result<Graph> ImportModel(const LoadedOnnxModel& model, const ImportOptions& options) {
  const std::string what = "model '" + model.path.string() + "'";
  auto graph = ImportGraph(model.proto.graph(), model.default_opset, model.path.parent_path());
  if (!graph.ok()) return Status(graph.status().code(), what + ": " + graph.status().message());
  if (options.require_static_inputs) {
    // chipfit makes (or reads) tensors for a model's inputs; a sequence input has nothing to bind.
    for (const ValueDesc& in : graph->inputs) {
      if (in.dtype == DType::kUndefined) {
        return InvalidArgument(what + ": input '" + in.name + "' declares no element type");
      }
      if (in.sequence || in.dtype == DType::kString) {
        return Unsupported(what + ": input '" + in.name + "' is " + DescribeValueType(in) +
                           "; chipfit profiles models whose inputs are numeric tensors (sequence and string values "
                           "run inside a model, and in `chipfit conformance`)");
      }
    }
    std::string listing;
    bool dynamic = false;
    for (const ValueDesc& in : graph->inputs) {
      std::string dims;
      bool unbound = !in.has_shape;
      for (size_t i = 0; i < in.shape.size(); ++i) {
        unbound |= in.shape[i] < 0;
        dims += (i ? "x" : "") +
                (in.shape[i] >= 0 ? std::to_string(in.shape[i]) : (in.dim_params[i].empty() ? "?" : in.dim_params[i]));
      }
      dynamic |= unbound;
      // Only the inputs still to bind: a scalar or a fixed shape needs nothing.
      if (unbound) listing += "\n  " + in.name + ": " + (in.has_shape ? dims : "(unknown rank)");
    }
    if (dynamic) {
      return InvalidArgument(what +
                             " has inputs with dynamic dimensions; bind every one with --shape NAME=DxDx…:" + listing);
    }
  }
  return graph;
}

Result<std::pair<std::string, Shape>> ParseShapeBinding(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument("--shape '" + text + "': expected NAME=DIMS, e.g. x=1x3x224x224");
  }
  std::string name = text.substr(0, eq);
  const std::string dims = text.substr(eq + 1);
  Shape shape;
  size_t start = 0;
  while (start <= dims.size() && !dims.empty()) {
    const size_t x = dims.find_first_of("x,", start);
    const std::string part = dims.substr(start, x == std::string::npos ? std::string::npos : x - start);
    int64_t value = -1;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc() || ptr != part.data() + part.size() || value < 0) {
      return InvalidArgument("--shape '" + text + "': dimension '" + part + "' is not a positive integer");
    }
    if (value == 0) {
      // ONNX allows empty tensors, but an empty input profiles kernels that do nothing.
      return InvalidArgument("--shape '" + text + "': a dimension of 0 makes '" + name +
                             "' empty, so nothing would be computed; dims must be at least 1");
    }
    shape.push_back(value);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return std::make_pair(std::move(name), std::move(shape));
}

}  // namespace chipfit
