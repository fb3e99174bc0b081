// Graph IR: ONNX nodes with their names, typed attributes, initializers and value descriptions.
// Values are referred to by their ONNX names, so every result can be attributed to ONNX nodes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor/tensor.h"

namespace chipfit {

struct Graph;

struct Attribute {
  // kType (a TypeProto, as Optional's `type`): `s` is "tensor" or "sequence", `i` the element's ONNX type code.
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph, kType };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  std::shared_ptr<const Tensor> tensor;
  std::shared_ptr<const Graph> graph;
};

struct Node {
  std::string name;  // ONNX name, or "<op_type>#<index>" when the model left it empty
  std::string op_type;
  std::string domain;                // "" for ai.onnx
  std::vector<std::string> inputs;   // value names; "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  std::map<std::string, Attribute> attributes;
  // ONNX nodes this node computes after a pass merged them (Conv + folded BatchNormalization …);
  // empty means just itself. Results are attributed to these names.
  std::vector<std::string> covers;

  bool Has(const std::string& attr) const { return attributes.contains(attr); }
  int64_t GetInt(const std::string& attr, int64_t fallback) const;
  float GetFloat(const std::string& attr, float fallback) const;
  std::string GetString(const std::string& attr, const std::string& fallback) const;
  std::vector<int64_t> GetInts(const std::string& attr, const std::vector<int64_t>& fallback = {}) const;
  std::vector<float> GetFloats(const std::string& attr, const std::vector<float>& fallback = {}) const;
  const Tensor* GetTensor(const std::string& attr) const;
  const Graph* GetGraph(const std::string& attr) const;
  // Input i is present (not past the end and not the empty name).
  bool HasInput(size_t i) const { return i < inputs.size() && !inputs[i].empty(); }
  // "node 'conv1' (Conv)": how messages name a node.
  std::string Describe() const;
};

// Type and shape of a value as declared or inferred; dims < 0 are unknown, dim_params keep names.
struct ValueDesc {
  std::string name;
  DType dtype = DType::kUndefined;  // of the tensor, or of a sequence's elements
  bool has_shape = false;
  Shape shape;                          // -1 where unknown
  std::vector<std::string> dim_params;  // per dim: symbolic name or ""
  bool sequence = false;                // seq(tensor): no shape of its own (has_shape stays false)
  bool optional = false;                // optional(...): may also be empty (Tensor::None)
};

// "f32[1x3xNx4]", "seq(f32)", "optional(seq(i64))" — what a value of this description must be.
std::string DescribeValueType(const ValueDesc& desc);

struct Graph {
  std::string name;
  int64_t opset = 0;              // default-domain opset of the model this graph belongs to
  std::vector<ValueDesc> inputs;  // graph inputs that are not initializers
  std::vector<ValueDesc> outputs;
  std::vector<Node> nodes;  // topologically sorted
  std::map<std::string, Tensor> initializers;
  std::map<std::string, ValueDesc> value_info;  // intermediate values libonnx described, if any

  const Node* FindNode(const std::string& name) const;
};

}  // namespace chipfit
