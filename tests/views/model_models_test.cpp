// The Model page's models (nodes, inputs, placement) and AnalyzeModel on the shipped sample models.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QFont>
#include <QSignalSpy>
#include <QStringList>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "profilers/session/model_analysis.h"
#include "tests/views/model_test_messages.h"
#include "views/models/model_inputs_model.h"
#include "views/models/node_list_model.h"
#include "views/models/target_placement_model.h"

namespace chipfit {
namespace {

const std::filesystem::path kModels = std::filesystem::path(CHIPFIT_SOURCE_DIR) / "resources/models";

std::shared_ptr<const ModelAnalysis> Analyze(const std::string& file, const std::vector<std::string>& shapes = {},
                                             const std::vector<Target>& targets = {}) {
  auto analysis = AnalyzeModel(kModels / file, shapes, targets);
  EXPECT_TRUE(analysis.ok()) << analysis.status().ToString();
  if (!analysis.ok()) return std::make_shared<const ModelAnalysis>();
  return std::make_shared<const ModelAnalysis>(std::move(*analysis));
}

Target MustParse(std::string_view text) {
  auto target = ParseTarget(text);
  EXPECT_TRUE(target.ok()) << text;
  return target.ok() ? *target : Target{};
}

// --- AnalyzeModel -------------------------------------------------------------------------------------

TEST(AnalyzeModelTest, StaticModelIsCompiledForReferenceAndEveryTarget) {
  // cpu:fp16 never compiles with Debian's oneDNN 2.6: a target that fails is a row, not an error.
  const auto analysis = Analyze("cnn.onnx", {}, {MustParse("cpu:fp32"), MustParse("cpu:fp16")});
  EXPECT_EQ(analysis->summary.node_count, 11);
  EXPECT_EQ(analysis->nodes.size(), 11u);
  EXPECT_EQ(analysis->summary.sha256.size(), 64u);
  EXPECT_TRUE(analysis->compiled);
  EXPECT_TRUE(analysis->unbound_inputs.empty());
  EXPECT_GT(analysis->flops, 0);
  EXPECT_GT(analysis->planned_peak_bytes, 0);
  EXPECT_GT(analysis->constant_bytes, 0);
  ASSERT_EQ(analysis->placements.size(), 2u);
  EXPECT_EQ(analysis->placements[0].status, "ok");
  EXPECT_TRUE(analysis->placements[0].fallbacks.empty());
  EXPECT_EQ(analysis->placements[1].status, "unsupported");
  EXPECT_NE(analysis->placements[1].error.find("fp16"), std::string::npos) << analysis->placements[1].error;
}

TEST(AnalyzeModelTest, NodeRowsCarryShapesAndTypes) {
  const auto analysis = Analyze("mlp.onnx", {"x=4x64"});
  ASSERT_FALSE(analysis->nodes.empty());
  const NodeRow& first = analysis->nodes.front();
  EXPECT_EQ(first.name, "fc1_matmul");
  EXPECT_EQ(first.op, "MatMul");
  EXPECT_EQ(first.inputs, (std::vector<std::string>{"x: 4x64 f32", "fc1.weight: 64x128 f32"}));
  EXPECT_EQ(analysis->nodes.back().outputs, (std::vector<std::string>{"logits: 4x10 f32"}));
}

TEST(AnalyzeModelTest, DynamicDimsWaitForBindingsAndThenScaleTheWork) {
  const auto unbound = Analyze("mlp.onnx", {}, {MustParse("cpu:fp32")});
  EXPECT_FALSE(unbound->compiled);
  ASSERT_EQ(unbound->unbound_inputs.size(), 1u);
  EXPECT_EQ(unbound->unbound_inputs[0], "x (batchx64)");
  EXPECT_EQ(unbound->nodes.size(), 8u);  // the node list does not wait for the dims
  EXPECT_TRUE(unbound->placements.empty());
  ASSERT_EQ(unbound->declared_inputs.size(), 1u);
  EXPECT_EQ(FormatDims(unbound->declared_inputs[0]), "batchx64");

  const auto one = Analyze("mlp.onnx", {"x=1x64"});
  const auto four = Analyze("mlp.onnx", {"x=4x64"}, {MustParse("cpu:fp32")});
  ASSERT_TRUE(one->compiled && four->compiled);
  EXPECT_EQ(four->flops, 4 * one->flops);  // MatMul and Add work is linear in the batch
  EXPECT_EQ(FormatDims(four->summary.inputs[0]), "4x64");
  EXPECT_EQ(FormatDims(four->declared_inputs[0]), "batchx64");  // the file's declaration is kept
  EXPECT_EQ(four->shapes, (std::vector<std::string>{"x=4x64"}));
  ASSERT_EQ(four->placements.size(), 1u);
  EXPECT_EQ(four->placements[0].status, "ok");
}

TEST(AnalyzeModelTest, ErrorsNameTheFile) {
  const auto missing = kModels / "no_such_model.onnx";
  auto result = AnalyzeModel(missing, {}, {});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("no_such_model.onnx"), std::string::npos) << result.status().ToString();

  const auto garbage = std::filesystem::path(::testing::TempDir()) / "model_models_test_garbage.onnx";
  std::ofstream(garbage) << "this is not a protobuf";
  result = AnalyzeModel(garbage, {}, {});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find(garbage.string()), std::string::npos) << result.status().ToString();
  std::filesystem::remove(garbage);

  // A binding that contradicts the file, and one that is not a shape at all.
  for (const std::string shape : {"x=4x65", "x=four"}) {
    result = AnalyzeModel(kModels / "mlp.onnx", {shape}, {});
    ASSERT_FALSE(result.ok()) << shape;
    EXPECT_NE(result.status().message().find("mlp.onnx"), std::string::npos) << result.status().ToString();
  }
}

TEST(AnalyzeModelTest, StopRequestCancels) {
  std::stop_source stop;
  stop.request_stop();
  auto result = AnalyzeModel(kModels / "cnn.onnx", {}, {MustParse("cpu:fp32")}, stop.get_token());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kCancelled);
}

// --- NodeListModel and its filter ----------------------------------------------------------------------

TEST(NodeListModelTest, PassesModelTesterAcrossResetsAndFilters) {
  ModelTestMessages messages;
  NodeListModel model(Analyze("cnn.onnx"));
  NodeFilterModel filter;
  filter.setSourceModel(&model);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  QAbstractItemModelTester filter_tester(&filter, QAbstractItemModelTester::FailureReportingMode::Warning);
  EXPECT_EQ(model.rowCount(), 11);
  EXPECT_EQ(model.columnCount(), NodeListModel::kColumnCount);
  filter.setFilterFixedString(QStringLiteral("conv"));
  EXPECT_EQ(filter.rowCount(), 2);
  model.setAnalysis(Analyze("transformer.onnx"));
  EXPECT_EQ(model.rowCount(), 45);
  model.setAnalysis(nullptr);
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_EQ(filter.rowCount(), 0);
  filter.setFilterFixedString(QString());
  EXPECT_TRUE(messages.empty()) << messages.text().toStdString();
}

TEST(NodeListModelTest, DisplayJoinsValuesAndRawRoleKeepsTheList) {
  NodeListModel model(Analyze("mlp.onnx", {"x=2x64"}));
  const QModelIndex inputs = model.index(0, NodeListModel::kInputsColumn);
  EXPECT_EQ(model.data(model.index(0, NodeListModel::kNameColumn)).toString(), QStringLiteral("fc1_matmul"));
  EXPECT_EQ(model.data(model.index(0, NodeListModel::kOpColumn)).toString(), QStringLiteral("MatMul"));
  EXPECT_EQ(model.data(inputs).toString(), QStringLiteral("x: 2x64 f32, fc1.weight: 64x128 f32"));
  EXPECT_EQ(model.data(inputs, NodeListModel::RawValueRole).toStringList(),
            (QStringList{QStringLiteral("x: 2x64 f32"), QStringLiteral("fc1.weight: 64x128 f32")}));
  EXPECT_EQ(model.headerData(NodeListModel::kOutputsColumn, Qt::Horizontal).toString(), QStringLiteral("Outputs"));
}

TEST(NodeFilterModelTest, MatchesNameOrOpCaseInsensitivelyButNotValueNames) {
  NodeListModel model(Analyze("mlp.onnx", {"x=1x64"}));
  NodeFilterModel filter;
  filter.setSourceModel(&model);
  filter.setFilterFixedString(QStringLiteral("matmul"));
  EXPECT_EQ(filter.rowCount(), 3);  // by op, and by name (fc1_matmul …)
  filter.setFilterFixedString(QStringLiteral("RELU2"));
  ASSERT_EQ(filter.rowCount(), 1);
  EXPECT_EQ(filter.data(filter.index(0, NodeListModel::kNameColumn)).toString(), QStringLiteral("relu2"));
  // "fc2.weight" is only an input value of fc2_matmul, not a node: no match.
  filter.setFilterFixedString(QStringLiteral("weight"));
  EXPECT_EQ(filter.rowCount(), 0);
  filter.setFilterFixedString(QString());
  EXPECT_EQ(filter.rowCount(), 8);
}

TEST(NodeFilterModelTest, HidesConstantNodesOnRequest) {
  auto analysis = std::make_shared<ModelAnalysis>();
  analysis->nodes = {{.name = "Constant#0", .op = "Constant", .inputs = {}, .outputs = {"w: 8 f32"}},
                     {.name = "conv", .op = "Conv", .inputs = {"x: 1x8 f32", "w: 8 f32"}, .outputs = {"y: 1x8 f32"}},
                     {.name = "Constant#1", .op = "Constant", .inputs = {}, .outputs = {"k: 1 f32"}}};
  NodeListModel model(analysis);
  NodeFilterModel filter;
  filter.setSourceModel(&model);
  EXPECT_TRUE(filter.showConstants());
  EXPECT_EQ(filter.rowCount(), 3);
  filter.setShowConstants(false);
  ASSERT_EQ(filter.rowCount(), 1);
  EXPECT_EQ(filter.data(filter.index(0, NodeListModel::kNameColumn)).toString(), QStringLiteral("conv"));
  filter.setFilterFixedString(QStringLiteral("constant"));  // hidden ones stay hidden while searching
  EXPECT_EQ(filter.rowCount(), 0);
  filter.setShowConstants(true);
  EXPECT_EQ(filter.rowCount(), 2);
}

// --- ModelInputsModel ------------------------------------------------------------------------------------

TEST(ModelInputsModelTest, PassesModelTesterAndOnlyDynamicShapesAreEditable) {
  ModelTestMessages messages;
  ModelInputsModel model(Analyze("mlp.onnx"));
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  ASSERT_EQ(model.rowCount(), 1);
  const QModelIndex shape = model.index(0, ModelInputsModel::kShapeColumn);
  EXPECT_EQ(model.data(model.index(0, ModelInputsModel::kNameColumn)).toString(), QStringLiteral("x"));
  EXPECT_EQ(model.data(model.index(0, ModelInputsModel::kDTypeColumn)).toString(), QStringLiteral("f32"));
  EXPECT_EQ(model.data(shape).toString(), QStringLiteral("batchx64"));
  EXPECT_TRUE(model.flags(shape) & Qt::ItemIsEditable);
  EXPECT_FALSE(model.flags(model.index(0, ModelInputsModel::kNameColumn)) & Qt::ItemIsEditable);
  EXPECT_EQ(model.data(shape, ModelInputsModel::RawValueRole).toList(), (QVariantList{qlonglong{-1}, qlonglong{64}}));
  EXPECT_TRUE(model.bindings().isEmpty());

  model.setAnalysis(Analyze("cnn.onnx"));
  const QModelIndex static_shape = model.index(0, ModelInputsModel::kShapeColumn);
  EXPECT_EQ(model.data(static_shape).toString(), QStringLiteral("1x3x32x32"));
  EXPECT_FALSE(model.flags(static_shape) & Qt::ItemIsEditable);
  EXPECT_FALSE(model.data(static_shape, ModelInputsModel::DynamicRole).toBool());
  EXPECT_FALSE(model.setData(static_shape, QStringLiteral("2x3x32x32")));
  model.setAnalysis(nullptr);
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_TRUE(messages.empty()) << messages.text().toStdString();
}

TEST(ModelInputsModelTest, LongDimNamesShowAsQuestionMarksWithTheDeclarationInTheTooltip) {
  auto analysis = std::make_shared<ModelAnalysis>();
  analysis->declared_inputs = {{.name = "x",
                                .dtype = "f32",
                                .dims = {{-1, "p2o.DynamicDimension.0"}, {3, ""}, {-1, "height"}, {-1, ""}},
                                .has_shape = true}};
  analysis->summary.inputs = analysis->declared_inputs;
  ModelInputsModel model(analysis);
  const QModelIndex shape = model.index(0, ModelInputsModel::kShapeColumn);
  EXPECT_EQ(model.data(shape).toString(), QStringLiteral("?x3xheightx?"));
  const QString tip = model.data(shape, Qt::ToolTipRole).toString();
  EXPECT_TRUE(tip.contains(QStringLiteral("p2o.DynamicDimension.0x3xheightx?"))) << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("e.g. 1x3x1x1"))) << tip.toStdString();
  EXPECT_TRUE(model.data(shape, Qt::FontRole).value<QFont>().italic());  // unset dims stand out
  EXPECT_TRUE(model.setData(shape, QStringLiteral("1x3x48x192")));
  EXPECT_EQ(model.bindings(), QStringList{QStringLiteral("x=1x3x48x192")});
  EXPECT_FALSE(model.data(shape, Qt::FontRole).value<QFont>().italic());
}

TEST(ModelInputsModelTest, ValidEditEmitsTheBindings) {
  ModelInputsModel model(Analyze("mlp.onnx"));
  QSignalSpy changed(&model, &ModelInputsModel::shapesChanged);
  QSignalSpy invalid(&model, &ModelInputsModel::invalidEdit);
  const QModelIndex shape = model.index(0, ModelInputsModel::kShapeColumn);
  EXPECT_TRUE(model.setData(shape, QStringLiteral(" 8 x 64 ")));
  ASSERT_EQ(changed.count(), 1);
  EXPECT_EQ(changed.at(0).at(0).toStringList(), QStringList{QStringLiteral("x=8x64")});
  EXPECT_EQ(model.data(shape).toString(), QStringLiteral("8x64"));
  EXPECT_EQ(model.bindings(), QStringList{QStringLiteral("x=8x64")});
  EXPECT_TRUE(model.lastError().isEmpty());
  // The same dims again change nothing, so nothing is re-analysed.
  EXPECT_TRUE(model.setData(shape, QStringLiteral("8x64")));
  EXPECT_EQ(changed.count(), 1);
  EXPECT_EQ(invalid.count(), 0);
}

TEST(ModelInputsModelTest, InvalidEditsAreRefusedWithAReason) {
  ModelInputsModel model(Analyze("mlp.onnx", {"x=2x64"}));
  QSignalSpy changed(&model, &ModelInputsModel::shapesChanged);
  QSignalSpy invalid(&model, &ModelInputsModel::invalidEdit);
  const QModelIndex shape = model.index(0, ModelInputsModel::kShapeColumn);
  EXPECT_EQ(model.data(shape).toString(), QStringLiteral("2x64"));  // the bound dims are the ones in use
  const struct {
    const char* text;
    const char* reason;
  } cases[] = {
      {"2x64x1", "expected 2 dims (batchx64), got 3"},
      {"0x64", "dimension 0 must be a positive integer, not 0"},
      {"-3x64", "dimension 0 must be a positive integer, not -3"},
      {"ax64", "dimension 0 is 'a', not a whole number"},
      {"2.5x64", "not a whole number"},
      {"", "enter the dims"},
      {"2x65", "dimension 1 is fixed at 64"},
  };
  for (const auto& c : cases) {
    EXPECT_FALSE(model.setData(shape, QString::fromUtf8(c.text))) << c.text;
    EXPECT_TRUE(model.lastError().contains(QString::fromUtf8(c.reason)))
        << c.text << ": " << model.lastError().toStdString();
    EXPECT_TRUE(model.lastError().startsWith(QStringLiteral("x: "))) << model.lastError().toStdString();
  }
  EXPECT_EQ(invalid.count(), static_cast<int>(std::size(cases)));
  EXPECT_EQ(invalid.last().at(0).toString(), model.lastError());
  EXPECT_EQ(changed.count(), 0);
  EXPECT_EQ(model.data(shape).toString(), QStringLiteral("2x64"));  // a refused edit changes nothing
  EXPECT_EQ(model.bindings(), QStringList{QStringLiteral("x=2x64")});
}

// --- TargetPlacementModel ------------------------------------------------------------------------------

std::shared_ptr<const ModelAnalysis> HandMadePlacements() {
  auto analysis = std::make_shared<ModelAnalysis>();
  TargetPlacement gpu{.target = MustParse("opencl:0:fp16"), .status = "ok", .error = {}, .fallbacks = {}};
  gpu.fallbacks.push_back({"topk", "TopK", "no opencl:0:fp16 kernel for TopK"});
  gpu.fallbacks.push_back({"nms", "NonMaxSuppression", "no opencl:0:fp16 kernel for NonMaxSuppression"});
  analysis->placements.push_back(gpu);
  analysis->placements.push_back({.target = MustParse("cpu:fp32"), .status = "ok", .error = {}, .fallbacks = {}});
  analysis->placements.push_back(
      {.target = MustParse("cpu:fp16"), .status = "unsupported", .error = "no fp16 on this CPU", .fallbacks = {}});
  return analysis;
}

TEST(TargetPlacementModelTest, OneRowPerFallbackAndPerTargetThatDidNotCompile) {
  ModelTestMessages messages;
  TargetPlacementModel model(HandMadePlacements());
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  ASSERT_EQ(model.rowCount(), 3);  // cpu:fp32 runs everything: no row
  auto cell = [&](int row, TargetPlacementModel::Column column, int role = Qt::DisplayRole) {
    return model.data(model.index(row, column), role).toString();
  };
  EXPECT_EQ(cell(0, TargetPlacementModel::kTargetColumn), QStringLiteral("opencl:0:fp16"));
  EXPECT_EQ(cell(0, TargetPlacementModel::kNodeColumn), QStringLiteral("topk"));
  EXPECT_EQ(cell(1, TargetPlacementModel::kOpColumn), QStringLiteral("NonMaxSuppression"));
  EXPECT_EQ(cell(1, TargetPlacementModel::kReasonColumn),
            QStringLiteral("no opencl:0:fp16 kernel for NonMaxSuppression"));
  EXPECT_EQ(cell(1, TargetPlacementModel::kTargetColumn, TargetPlacementModel::StatusRole), QStringLiteral("ok"));
  EXPECT_EQ(cell(2, TargetPlacementModel::kTargetColumn), QStringLiteral("cpu:fp16"));
  EXPECT_EQ(cell(2, TargetPlacementModel::kReasonColumn), QStringLiteral("no fp16 on this CPU"));
  EXPECT_EQ(cell(2, TargetPlacementModel::kOpColumn), QStringLiteral("unsupported"));
  EXPECT_EQ(cell(2, TargetPlacementModel::kNodeColumn, TargetPlacementModel::RawValueRole), QString());
  EXPECT_EQ(cell(2, TargetPlacementModel::kTargetColumn, TargetPlacementModel::StatusRole),
            QStringLiteral("unsupported"));

  model.setAnalysis(Analyze("cnn.onnx", {}, {MustParse("cpu:fp32"), MustParse("cpu:fp16")}));
  ASSERT_EQ(model.rowCount(), 1);
  EXPECT_EQ(cell(0, TargetPlacementModel::kTargetColumn), QStringLiteral("cpu:fp16"));
  model.setAnalysis(nullptr);
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_TRUE(messages.empty()) << messages.text().toStdString();
}

}  // namespace
}  // namespace chipfit
