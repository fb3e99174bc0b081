// Small helpers to build ONNX models in tests.
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace chipfit::testing {

inline void AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                     std::vector<int64_t> dims) {
  auto* v = list->Add();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

inline onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                                std::vector<std::string> out, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

// A float initializer filled by `f(i)`.
template <typename F>
void AddInitializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims, F f) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto_DataType_FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) t->add_float_data(static_cast<float>(f(i)));
}

inline void SetIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

// A value of any element type; with_shape false leaves its shape (even its rank) undeclared.
inline void AddTypedValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                          int elem_type, const std::vector<int64_t>& dims, bool with_shape = true) {
  auto* v = list->Add();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  if (!with_shape) return;
  auto* shape = t->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// A subgraph attribute (If's branches, a Loop's or Scan's body).
inline void AddGraphAttr(onnx::NodeProto* node, const std::string& name, const onnx::GraphProto& graph) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = graph;
}

inline void AddIntsAttr(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

// A rank-0 int64 or int32-stored (bool, int8 …) initializer.
inline void AddScalarInit(onnx::GraphProto* g, const std::string& name, int elem_type, int64_t value) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  if (elem_type == onnx::TensorProto_DataType_INT64) {
    t->add_int64_data(value);
  } else {
    t->add_int32_data(static_cast<int32_t>(value));
  }
}

// A 1-D int64 initializer (a Reshape's shape, Unsqueeze's axes).
inline void AddI64Init(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto_DataType_INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

inline onnx::ModelProto NewModel(const std::string& name, int64_t opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  m.mutable_graph()->set_name(name);
  return m;
}

// y = Relu(x + Reshape(c, Shape(x))) where c is a constant: Shape and Reshape need no input data, so
// they fold at compile time.
inline onnx::ModelProto FoldableModel() {
  onnx::ModelProto m = NewModel("foldable");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {2, 3});
  AddValue(g->mutable_output(), "y", {2, 3});
  AddInitializer(g, "c", {6}, [](int64_t i) { return static_cast<float>(i) - 2.5f; });
  AddNode(g, "Shape", {"x"}, {"sx"}, "shape");
  AddNode(g, "Reshape", {"c", "sx"}, {"c2"}, "reshape");
  AddNode(g, "Add", {"x", "c2"}, {"s"}, "add");
  AddNode(g, "Relu", {"s"}, {"y"}, "relu");
  return m;
}

}  // namespace chipfit::testing
