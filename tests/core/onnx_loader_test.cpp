// ONNX loading: good models pass checker and shape inference; bad files get a Status naming them.
#include "core/graph/onnx_loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/graph/model_summary.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;

// Relu(x) with x float [N, 4], N symbolic: small enough to build by hand.
onnx::ModelProto ReluModel(int64_t opset = 13) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("onnx_loader_test");
  auto* opset_import = model.add_opset_import();
  opset_import->set_domain("");
  opset_import->set_version(opset);
  auto* graph = model.mutable_graph();
  graph->set_name("relu");
  auto* node = graph->add_node();
  node->set_op_type("Relu");
  node->set_name("relu0");
  node->add_input("x");
  node->add_output("y");
  for (auto* value : {graph->add_input(), graph->add_output()}) {
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_param("N");
    tensor->mutable_shape()->add_dim()->set_dim_value(4);
  }
  graph->mutable_input(0)->set_name("x");
  graph->mutable_output(0)->set_name("y");
  return model;
}

class OnnxLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("chipfit_loader_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& name, const std::string& bytes) {
    fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  fs::path dir_;
};

TEST_F(OnnxLoaderTest, LoadsAndSummarisesAValidModel) {
  fs::path path = Write("relu.onnx", ReluModel().SerializeAsString());
  auto model = LoadOnnxModel(path, {.strict_shape_inference = true});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ModelSummary s = Summarize(*model);
  EXPECT_EQ(s.default_opset, 13);
  EXPECT_EQ(s.node_count, 1);
  EXPECT_EQ(s.op_histogram.at("Relu"), 1);
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(FormatDims(s.inputs[0]), "Nx4");
  EXPECT_EQ(s.inputs[0].dtype, "f32");
  EXPECT_EQ(SummaryToJson(s)["inputs"][0]["shape"], nlohmann::json::parse(R"(["N", 4])"));
}

TEST_F(OnnxLoaderTest, ConstantNodeTensorsCountAsParameters) {
  onnx::ModelProto model = ReluModel();
  auto* graph = model.mutable_graph();
  auto* constant = graph->add_node();
  constant->set_op_type("Constant");
  constant->set_name("bias_const");
  constant->add_output("bias");
  auto* attr = constant->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  auto* tensor = attr->mutable_t();
  tensor->set_data_type(onnx::TensorProto_DataType_FLOAT);
  tensor->add_dims(4);
  for (int i = 0; i < 4; ++i) tensor->add_float_data(0.5f * i);
  auto* add = graph->add_node();
  add->set_op_type("Add");
  add->set_name("add0");
  add->add_input("y");
  add->add_input("bias");
  add->add_output("z");
  graph->mutable_output(0)->set_name("z");
  auto loaded = LoadOnnxModel(Write("const.onnx", model.SerializeAsString()), {.strict_shape_inference = true});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ModelSummary s = Summarize(*loaded);
  EXPECT_EQ(s.initializer_count, 0);
  EXPECT_EQ(s.constant_node_count, 1);
  EXPECT_EQ(s.parameter_count, 4);
  EXPECT_EQ(s.parameter_bytes, 16);
}

TEST_F(OnnxLoaderTest, MissingFileIsNotFoundAndNamesThePath) {
  auto model = LoadOnnxModel(dir_ / "nope.onnx");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kNotFound);
  EXPECT_NE(model.status().message().find("nope.onnx"), std::string::npos);
}

TEST_F(OnnxLoaderTest, TruncatedFileIsAParseError) {
  const std::string bytes = ReluModel().SerializeAsString();
  fs::path path = Write("truncated.onnx", bytes.substr(0, bytes.size() - 7));
  auto model = LoadOnnxModel(path);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kParseError);
  EXPECT_NE(model.status().message().find("truncated.onnx"), std::string::npos);
}

TEST_F(OnnxLoaderTest, RandomBytesAreRejected) {
  std::mt19937 rng(7);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  auto model = LoadOnnxModel(Write("noise.onnx", bytes));
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("noise.onnx"), std::string::npos);
}

TEST_F(OnnxLoaderTest, CheckerFailureNamesTheProblem) {
  onnx::ModelProto model = ReluModel();
  model.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  auto loaded = LoadOnnxModel(Write("bad_op.onnx", model.SerializeAsString()));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("NoSuchOp"), std::string::npos) << loaded.status().message();
}

TEST_F(OnnxLoaderTest, OpsetNewerThanLibOnnxIsLoadedWithANote) {
  const int64_t newer = LibOnnxMaxOpset() + 2;
  auto loaded = LoadOnnxModel(Write("new.onnx", ReluModel(newer).SerializeAsString()));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->notes.size(), 1u);
  EXPECT_NE(loaded->notes[0].find("newer than libonnx"), std::string::npos);
}

TEST_F(OnnxLoaderTest, DirectoryIsRejected) {
  auto loaded = LoadOnnxModel(dir_);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("directory"), std::string::npos);
}

}  // namespace
}  // namespace chipfit
