// Tests that the committed sample models match their generator and pass the ONNX checker and shape inference.
#include "resources/models/sample_models.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "core/graph/model_summary.h"
#include "core/graph/onnx_loader.h"

namespace chipfit {
namespace {

const std::filesystem::path kModelDir = std::filesystem::path(CHIPFIT_SOURCE_DIR) / "resources" / "models";

struct Expected {
  std::string file_name;
  std::string output;
  std::vector<DimSpec> output_dims;
  std::map<std::string, int64_t> min_ops;  // op type -> least count the model must contain
};

std::vector<Expected> ExpectedModels() {
  return {
      {"cnn.onnx",
       "probabilities",
       {{1, ""}, {10, ""}},
       {{"Conv", 2},
        {"BatchNormalization", 2},
        {"Relu", 2},
        {"MaxPool", 1},
        {"GlobalAveragePool", 1},
        {"Flatten", 1},
        {"Gemm", 1},
        {"Softmax", 1}}},
      {"mlp.onnx", "logits", {{-1, "batch"}, {10, ""}}, {{"MatMul", 3}, {"Add", 3}, {"Relu", 2}}},
      {"transformer.onnx",
       "hidden",
       {{1, ""}, {16, ""}, {32, ""}},
       {{"ReduceMean", 4},
        {"Sub", 2},
        {"Pow", 2},
        {"Sqrt", 2},
        {"Div", 2},
        {"Mul", 3},
        {"MatMul", 8},
        {"Add", 12},
        {"Reshape", 4},
        {"Transpose", 4},
        {"Softmax", 1},
        {"Relu", 1}}},
  };
}

std::string ReadBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const SampleModel* FindGenerated(const std::vector<SampleModel>& models, const std::string& file_name) {
  for (const auto& m : models) {
    if (m.file_name == file_name) return &m;
  }
  return nullptr;
}

std::string DimsText(const std::vector<DimSpec>& dims) {
  TensorSpec spec;
  spec.has_shape = true;
  spec.dims = dims;
  return FormatDims(spec);
}

// Names the parameter in gtest messages instead of dumping the struct's bytes.
void PrintTo(const Expected& expected, std::ostream* os) { *os << expected.file_name; }

class SampleModelTest : public ::testing::TestWithParam<Expected> {};

TEST_P(SampleModelTest, CommittedFileMatchesGenerator) {
  const Expected& expected = GetParam();
  const auto models = BuildSampleModels();
  const SampleModel* generated = FindGenerated(models, expected.file_name);
  ASSERT_NE(generated, nullptr) << "BuildSampleModels() no longer produces " << expected.file_name;
  const std::filesystem::path path = kModelDir / expected.file_name;
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing; run `chipfit-make-samples " << kModelDir.string() << "` and commit the result";
  const std::string committed = ReadBytes(path);
  const std::string fresh = SerializeDeterministic(generated->proto);
  EXPECT_EQ(committed.size(), fresh.size()) << "size differs";
  EXPECT_TRUE(committed == fresh) << path << " differs from what the generator builds. If you changed "
                                  << "resources/models/sample_models.cpp on purpose, run `chipfit-make-samples "
                                  << kModelDir.string() << "` and commit the regenerated files.";
}

TEST_P(SampleModelTest, LoadsWithCheckerAndStrictShapeInference) {
  const Expected& expected = GetParam();
  OnnxLoadOptions options;
  options.strict_shape_inference = true;
  auto loaded = LoadOnnxModel(kModelDir / expected.file_name, options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->notes.empty()) << "checker or shape inference was skipped: " << loaded->notes.front();

  const ModelSummary summary = Summarize(*loaded);
  EXPECT_EQ(summary.ir_version, 8);
  EXPECT_EQ(summary.default_opset, 13);
  EXPECT_EQ(summary.producer, "chipfit-make-samples 1");
  ASSERT_EQ(summary.outputs.size(), 1u);
  EXPECT_EQ(summary.outputs[0].name, expected.output);
  EXPECT_EQ(summary.outputs[0].dtype, "f32");
  EXPECT_EQ(FormatDims(summary.outputs[0]), DimsText(expected.output_dims));
  for (const auto& [op, count] : expected.min_ops) {
    auto it = summary.op_histogram.find(op);
    EXPECT_TRUE(it != summary.op_histogram.end() && it->second >= count)
        << expected.file_name << " should contain at least " << count << " " << op << " node(s)";
  }
}

// The declared output shapes must be derivable, not just asserted: blank every output dimension (libonnx
// 1.12's checker insists on the rank being there) and let shape inference fill them in.
TEST_P(SampleModelTest, ShapeInferenceDerivesOutputShape) {
  const Expected& expected = GetParam();
  const auto models = BuildSampleModels();
  const SampleModel* generated = FindGenerated(models, expected.file_name);
  ASSERT_NE(generated, nullptr);
  onnx::ModelProto proto = generated->proto;
  for (auto& output : *proto.mutable_graph()->mutable_output()) {
    for (auto& dim : *output.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) dim.Clear();
  }
  OnnxLoadOptions options;
  options.strict_shape_inference = true;
  auto checked = CheckOnnxModel(std::move(proto), expected.file_name, options);
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  const ModelSummary summary = Summarize(*checked);
  ASSERT_EQ(summary.outputs.size(), 1u);
  ASSERT_TRUE(summary.outputs[0].has_shape) << "libonnx inferred no shape for " << expected.output;
  EXPECT_EQ(FormatDims(summary.outputs[0]), DimsText(expected.output_dims));
  const bool want_static = expected.file_name != "mlp.onnx";
  for (const DimSpec& d : summary.outputs[0].dims) {
    if (want_static) {
      EXPECT_TRUE(d.is_static()) << FormatDims(summary.outputs[0]);
    } else if (!d.is_static()) {
      EXPECT_EQ(d.param, "batch") << "the symbolic batch dimension must survive shape inference";
    }
  }
}

// Readable, unique names are what the per-layer tables show; a duplicate would merge two rows.
TEST_P(SampleModelTest, NodesAndValuesHaveUniqueNames) {
  const auto models = BuildSampleModels();
  const SampleModel* generated = FindGenerated(models, GetParam().file_name);
  ASSERT_NE(generated, nullptr);
  const onnx::GraphProto& graph = generated->proto.graph();
  std::set<std::string> node_names;
  std::set<std::string> values;
  for (const auto& init : graph.initializer()) EXPECT_TRUE(values.insert(init.name()).second) << init.name();
  for (const auto& input : graph.input()) EXPECT_TRUE(values.insert(input.name()).second) << input.name();
  for (const auto& node : graph.node()) {
    EXPECT_FALSE(node.name().empty()) << node.op_type() << " node without a name";
    EXPECT_TRUE(node_names.insert(node.name()).second) << "duplicate node name " << node.name();
    for (const auto& out : node.output()) EXPECT_TRUE(values.insert(out).second) << "value " << out << " written twice";
  }
}

// Weights must be finite and varied; all-equal values would hide transposed or misindexed kernels.
TEST_P(SampleModelTest, FloatWeightsAreFiniteAndVaried) {
  const auto models = BuildSampleModels();
  const SampleModel* generated = FindGenerated(models, GetParam().file_name);
  ASSERT_NE(generated, nullptr);
  for (const auto& init : generated->proto.graph().initializer()) {
    if (init.data_type() != onnx::TensorProto::FLOAT || init.raw_data().empty()) continue;
    const std::string& raw = init.raw_data();
    ASSERT_EQ(raw.size() % 4, 0u) << init.name();
    std::set<float> distinct;
    for (size_t i = 0; i < raw.size(); i += 4) {
      uint32_t bits = 0;
      for (int b = 0; b < 4; ++b) bits |= static_cast<uint32_t>(static_cast<unsigned char>(raw[i + b])) << (8 * b);
      const float v = std::bit_cast<float>(bits);
      ASSERT_TRUE(std::isfinite(v)) << init.name();
      ASSERT_LT(std::fabs(v), 2.0f) << init.name() << " has an out-of-scale value";
      distinct.insert(v);
    }
    EXPECT_GT(distinct.size(), raw.size() / 4 / 2) << init.name() << " has too few distinct values";
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, SampleModelTest, ::testing::ValuesIn(ExpectedModels()),
                         [](const ::testing::TestParamInfo<Expected>& info) {
                           return info.param.file_name.substr(0, info.param.file_name.find('.'));
                         });

TEST(SampleModels, BuildingTwiceGivesIdenticalBytes) {
  const auto first = BuildSampleModels();
  const auto second = BuildSampleModels();
  ASSERT_EQ(first.size(), second.size());
  ASSERT_EQ(first.size(), 3u);
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].file_name, second[i].file_name);
    EXPECT_TRUE(SerializeDeterministic(first[i].proto) == SerializeDeterministic(second[i].proto))
        << first[i].file_name << " is not deterministic";
  }
}

// The samples ship in the repository and in test data; keep them small.
TEST(SampleModels, CommittedFilesStaySmall) {
  std::uintmax_t total = 0;
  for (const auto& expected : ExpectedModels()) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(kModelDir / expected.file_name, ec);
    ASSERT_FALSE(ec) << expected.file_name << ": " << ec.message();
    total += size;
  }
  EXPECT_LT(total, 256u * 1024u);
}

}  // namespace
}  // namespace chipfit
