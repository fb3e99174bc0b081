// Attribute accessors for Node.
#include "core/graph/graph.h"

namespace chipfit {

int64_t Node::GetInt(const std::string& attr, int64_t fallback) const {
  auto it = attributes.find(attr);
  return it == attributes.end() ? fallback : it->second.i;
}

float Node::GetFloat(const std::string& attr, float fallback) const {
  auto it = attributes.find(attr);
  return it == attributes.end() ? fallback : it->second.f;
}

std::string Node::GetString(const std::string& attr, const std::string& fallback) const {
  auto it = attributes.find(attr);
  return it == attributes.end() ? fallback : it->second.s;
}

std::vector<int64_t> Node::GetInts(const std::string& attr, const std::vector<int64_t>& fallback) const {
  auto it = attributes.find(attr);
  return it == attributes.end() ? fallback : it->second.ints;
}

std::vector<float> Node::GetFloats(const std::string& attr, const std::vector<float>& fallback) const {
  auto it = attributes.find(attr);
  return it == attributes.end() ? fallback : it->second.floats;
}

const Tensor* Node::GetTensor(const std::string& attr) const {
  auto it = attributes.find(attr);
  return it == attributes.end() ? nullptr : it->second.tensor.get();
}

const Graph* Node::GetGraph(const std::string& attr) const {
  auto it = attributes.find(attr);
  return it == attributes.end() ? nullptr : it->second.graph.get();
}

std::string DescribeValueType(const ValueDesc& desc) {
  std::string type = std::string(DTypeName(desc.dtype));
  if (desc.has_shape) {
    std::string dims;
    for (size_t i = 0; i < desc.shape.size(); ++i) {
      const bool named = i < desc.dim_params.size() && !desc.dim_params[i].empty();
      dims += (i ? "x" : "") + (desc.shape[i] >= 0 ? std::to_string(desc.shape[i]) : named ? desc.dim_params[i] : "?");
    }
    type += "[" + (desc.shape.empty() ? std::string("scalar") : dims) + "]";
  }
  if (desc.sequence) type = "seq(" + type + ")";
  if (desc.optional) type = "optional(" + type + ")";
  return type;
}

std::string Node::Describe() const { return "node '" + name + "' (" + op_type + ")"; }

const Node* Graph::FindNode(const std::string& node_name) const {
  for (const Node& node : nodes) {
    if (node.name == node_name) return &node;
  }
  return nullptr;
}

}  // namespace chipfit
