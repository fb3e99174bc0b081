// Test helpers for reference kernels: build a Node, make tensors, run one node, compare.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/runtime/node_runner.h"
#include "core/tensor/tensor.h"

namespace chipfit::testing {

inline Attribute IntAttr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}
inline Attribute FloatAttr(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}
inline Attribute StringAttr(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}
inline Attribute IntsAttr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
inline Attribute FloatsAttr(std::vector<float> v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloats;
  a.floats = std::move(v);
  return a;
}

// A node named "<op>_under_test" with inputs in0..inN-1 ("" for omitted) and outputs out0..outM-1.
inline Node MakeNode(const std::string& op_type, size_t num_inputs, size_t num_outputs = 1,
                     std::map<std::string, Attribute> attributes = {}) {
  Node node;
  node.name = op_type + "_under_test";
  node.op_type = op_type;
  for (size_t i = 0; i < num_inputs; ++i) node.inputs.push_back("in" + std::to_string(i));
  for (size_t i = 0; i < num_outputs; ++i) node.outputs.push_back("out" + std::to_string(i));
  node.attributes = std::move(attributes);
  return node;
}

template <typename T>
Tensor MakeTensor(Shape shape, std::vector<T> values) {
  Tensor t(DTypeOf<T>(), std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i) t.data<T>()[i] = values[i];
  return t;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

inline void ExpectNear(const Tensor& actual, const std::vector<float>& expected, float atol = 1e-5f,
                       float rtol = 1e-4f) {
  ASSERT_EQ(actual.dtype(), DType::kF32);
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    const float a = actual.data<float>()[i];
    EXPECT_NEAR(a, expected[i], atol + rtol * std::fabs(expected[i])) << "at flat index " << i;
  }
}

// Runs `node` at `opset` and expects success.
inline std::vector<Tensor> Run(const Node& node, const std::vector<Tensor>& inputs, int64_t opset = 17) {
  auto result = RunNodeOnReference(node, opset, inputs);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : std::vector<Tensor>{};
}

// The helpers below are shared by every reference-op test file.
using Attrs = std::map<std::string, Attribute>;

inline Attribute StringsAttr(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Kind::kStrings;
  a.strings = std::move(v);
  return a;
}

inline Tensor F32(Shape shape, std::vector<float> values) {
  return MakeTensor<float>(std::move(shape), std::move(values));
}
inline Tensor I64(Shape shape, std::vector<int64_t> values) {
  return MakeTensor<int64_t>(std::move(shape), std::move(values));
}
inline Tensor I32(Shape shape, std::vector<int32_t> values) {
  return MakeTensor<int32_t>(std::move(shape), std::move(values));
}
inline Tensor Strings(Shape shape, std::vector<std::string> values) {
  Tensor t(DType::kString, std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i) {
    t.data<std::string>()[i] = values[i];
  }
  return t;
}
// A string tensor's elements (empty, and a failure, for any other dtype).
inline std::vector<std::string> Texts(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DType::kString) << DescribeTensor(t);
  return t.dtype() == DType::kString ? Values<std::string>(t) : std::vector<std::string>{};
}

// Inside TEST bodies a bare Run() would name testing::Test::Run: these name the helper above.
inline std::vector<Tensor> RunAll(const Node& node, const std::vector<Tensor>& inputs, int64_t opset = 17) {
  return chipfit::testing::Run(node, inputs, opset);
}
inline Tensor RunOne(const Node& node, const std::vector<Tensor>& inputs, int64_t opset = 17) {
  std::vector<Tensor> out = RunAll(node, inputs, opset);
  return out.empty() ? Tensor() : out[0];
}

// The run fails with `code`, and the message names the node and contains `text`.
inline void ExpectError(const Node& node, const std::vector<Tensor>& inputs, StatusCode code, const std::string& text,
                        int64_t opset = 17) {
  const Status status = RunNodeOnReference(node, opset, inputs).status();
  EXPECT_EQ(status.code(), code) << status.ToString();
  EXPECT_NE(status.message().find(node.name), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(text), std::string::npos) << status.message();
}

}  // namespace chipfit::testing
