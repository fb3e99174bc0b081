// The tensor-core channel lint of CUDA targets (TensorRT Engine Explorer's rule), on graphs built here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "devices/target_compiler.h"

namespace chipfit {
namespace {

void AddLayer(Graph& g, const std::string& name, const std::string& op, Shape weight, int64_t group = 1) {
  Node node;
  node.name = name;
  node.op_type = op;
  node.inputs = {name + "_x", name + "_w"};
  node.outputs = {name + "_y"};
  if (group != 1) {
    Attribute attr;
    attr.i = group;
    node.attributes["group"] = attr;
  }
  g.initializers.emplace(name + "_w", Tensor(DType::kF32, std::move(weight)));
  g.nodes.push_back(std::move(node));
}

TEST(TensorCoreLintTest, ChannelsNotAMultipleOfTheTile) {
  EXPECT_EQ(ChannelAlignmentLint("conv1", Precision::kFp32, 3, 17), "");
  EXPECT_EQ(ChannelAlignmentLint("conv1", Precision::kFp16, 64, 128), "");
  const std::string fp16 = ChannelAlignmentLint("conv1", Precision::kFp16, 3, 64);
  EXPECT_NE(fp16.find("conv1: 3 input channels not a multiple of 8"), std::string::npos) << fp16;
  const std::string int8 = ChannelAlignmentLint("fc", Precision::kInt8, 24, 40);
  EXPECT_NE(int8.find("24 input channels and 40 output channels not a multiple of 16"), std::string::npos) << int8;
}

TEST(TensorCoreLintTest, GraphLayersOnCudaTargetsOnly) {
  Graph g;
  AddLayer(g, "stem", "Conv", {16, 3, 3, 3});        // 3 input channels
  AddLayer(g, "dw", "Conv", {16, 1, 3, 3}, 16);      // depthwise: nothing to pad
  AddLayer(g, "grouped", "Conv", {24, 4, 1, 1}, 4);  // 16 in, 24 out
  AddLayer(g, "fc", "MatMul", {20, 64});             // 20 in
  AddLayer(g, "head", "Gemm", {64, 64});
  const auto fp16 = TensorCoreChannelLint(g, Target{DeviceKind::kCuda, 0, Precision::kFp16});
  ASSERT_EQ(fp16.size(), 2u);
  EXPECT_EQ(fp16[0].rfind("stem: 3 input channels", 0), 0u) << fp16[0];
  EXPECT_EQ(fp16[1].rfind("fc: 20 input channels", 0), 0u) << fp16[1];
  const auto int8 = TensorCoreChannelLint(g, Target{DeviceKind::kCuda, 0, Precision::kInt8});
  ASSERT_EQ(int8.size(), 3u);  // 24 output channels of "grouped" are not a multiple of 16
  EXPECT_EQ(int8[1].rfind("grouped: 24 output channels", 0), 0u) << int8[1];
  EXPECT_TRUE(TensorCoreChannelLint(g, Target{DeviceKind::kCuda, 0, Precision::kFp32}).empty());
  EXPECT_TRUE(TensorCoreChannelLint(g, Target{DeviceKind::kCpu, 0, Precision::kInt8}).empty());
}

}  // namespace
}  // namespace chipfit
