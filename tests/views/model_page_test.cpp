// ModelPage: opening, drop, dynamic-dim edits, filtering and errors, as a user sees them, on the sample models.
#include "views/pages/model_page.h"

#include <gtest/gtest.h>

#include <QAbstractBarSeries>
#include <QBarCategoryAxis>
#include <QChart>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QTableView>
#include <QTest>
#include <QUrl>

namespace chipfit {
namespace {

constexpr int kAnalysisTimeoutMs = 60000;  // generous: sanitizer builds compile int8 targets slowly

QString SampleModel(const char* name) { return QStringLiteral(CHIPFIT_SOURCE_DIR "/resources/models/") + name; }

Target MustParse(std::string_view text) {
  auto target = ParseTarget(text);
  EXPECT_TRUE(target.ok()) << text;
  return target.ok() ? *target : Target{};
}

QString LabelText(const ModelPage& page, const char* name) {
  const auto* label = page.findChild<QLabel*>(QString::fromLatin1(name));
  EXPECT_NE(label, nullptr) << name;
  return label ? label->text() : QString();
}

// Opens `path` and waits for the page's answer; the spy's arguments are the signal's.
QList<QVariant> OpenAndWait(ModelPage& page, const QString& path, const QStringList& shapes = {}) {
  QSignalSpy loaded(&page, &ModelPage::modelLoaded);
  page.openModel(path, shapes);
  EXPECT_TRUE(page.isLoading());
  if (!loaded.wait(kAnalysisTimeoutMs)) {
    ADD_FAILURE() << "no modelLoaded for " << path.toStdString() << ": " << page.statusText().toStdString();
    return {};
  }
  return loaded.takeFirst();
}

TEST(ModelPageTest, ShowsAHintUntilAModelIsOpened) {
  ModelPage page;
  const auto* stack = page.findChild<QStackedWidget*>(QStringLiteral("modelStack"));
  ASSERT_NE(stack, nullptr);
  ASSERT_NE(stack->currentWidget(), nullptr);
  EXPECT_EQ(stack->currentWidget()->objectName(), QStringLiteral("emptyHint"));
  EXPECT_EQ(LabelText(page, "emptyHint"), QStringLiteral("Open an ONNX model (Ctrl+O) or drop it here"));
  EXPECT_FALSE(page.isLoading());
  EXPECT_TRUE(page.acceptDrops());
}

TEST(ModelPageTest, OpensAModelAndShowsSummaryChartAndPlacement) {
  ModelPage page;
  page.setTargets({MustParse("cpu:fp32"), MustParse("cpu:fp16")});
  const QString path = SampleModel("cnn.onnx");
  const QList<QVariant> loaded = OpenAndWait(page, path);
  ASSERT_EQ(loaded.size(), 3);
  EXPECT_EQ(loaded.at(0).toString(), path);
  EXPECT_EQ(loaded.at(1).toString().size(), 64);  // sha256 in hex
  EXPECT_TRUE(loaded.at(2).toStringList().isEmpty());
  EXPECT_FALSE(page.isLoading());
  EXPECT_TRUE(page.statusText().isEmpty()) << page.statusText().toStdString();

  EXPECT_EQ(page.findChild<QStackedWidget*>(QStringLiteral("modelStack"))->currentIndex(), 1);
  EXPECT_EQ(LabelText(page, "summaryFile"), QStringLiteral("cnn.onnx"));
  EXPECT_EQ(LabelText(page, "summaryNodes"), QStringLiteral("11 in 8 op types"));
  EXPECT_EQ(LabelText(page, "summaryFormat"), QStringLiteral("ONNX IR 8, opset 13"));
  EXPECT_EQ(LabelText(page, "summaryFlops"), QStringLiteral("0.00109 GFLOP per inference"));
  EXPECT_TRUE(LabelText(page, "summaryMemory").contains(QStringLiteral("planned peak")));
  EXPECT_EQ(page.nodeModel()->rowCount(), 11);
  EXPECT_EQ(page.inputsModel()->rowCount(), 1);
  EXPECT_EQ(LabelText(page, "nodeCount"), QStringLiteral("11 nodes"));

  // The histogram has one bar per op type (8, under the top-10 cut), most frequent on top (last).
  ASSERT_EQ(page.opChart()->series().size(), 1);
  const auto axes = page.opChart()->axes(Qt::Vertical);
  ASSERT_EQ(axes.size(), 1);
  const auto* categories = qobject_cast<QBarCategoryAxis*>(axes.first());
  ASSERT_NE(categories, nullptr);
  EXPECT_EQ(categories->count(), 8);

  // cpu:fp32 runs every node; cpu:fp16 does not compile with oneDNN 2.6, which is one row.
  EXPECT_TRUE(LabelText(page, "placementSummary").contains(QStringLiteral("cpu:fp32: every node on cpu")))
      << LabelText(page, "placementSummary").toStdString();
  ASSERT_EQ(page.placementModel()->rowCount(), 1);
  EXPECT_EQ(page.placementModel()->index(0, TargetPlacementModel::kTargetColumn).data().toString(),
            QStringLiteral("cpu:fp16"));

  // The screenshot is the test artefact a reviewer looks at.
  page.resize(1100, 700);
  const QString artifacts = QStringLiteral(CHIPFIT_BINARY_DIR "/test-artifacts");
  ASSERT_TRUE(QDir().mkpath(artifacts));
  EXPECT_TRUE(page.grab().save(artifacts + QStringLiteral("/model_page.png")));
}

TEST(ModelPageTest, FilterNarrowsTheNodeListByNameOrOp) {
  ModelPage page;
  OpenAndWait(page, SampleModel("cnn.onnx"));
  QTest::keyClicks(page.filterEdit(), QStringLiteral("relu"));
  EXPECT_EQ(page.nodeFilter()->rowCount(), 2);
  EXPECT_EQ(LabelText(page, "nodeCount"), QStringLiteral("2 of 11 nodes"));
  const auto* table = page.findChild<QTableView*>(QStringLiteral("nodeTable"));
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->model()->rowCount(), 2);
  page.filterEdit()->clear();
  EXPECT_EQ(page.nodeFilter()->rowCount(), 11);
}

TEST(ModelPageTest, EditingADynamicDimReanalysesWithTheBinding) {
  ModelPage page;
  page.setTargets({MustParse("cpu:fp32")});
  OpenAndWait(page, SampleModel("mlp.onnx"));
  EXPECT_EQ(LabelText(page, "summaryFlops"), QStringLiteral("set the dynamic dims in Inputs"));
  EXPECT_TRUE(LabelText(page, "placementSummary").contains(QStringLiteral("Set the dynamic dims")));
  ASSERT_NE(page.analysis(), nullptr);
  EXPECT_FALSE(page.analysis()->compiled);

  QSignalSpy loaded(&page, &ModelPage::modelLoaded);
  const QModelIndex shape = page.inputsModel()->index(0, ModelInputsModel::kShapeColumn);
  ASSERT_TRUE(page.inputsModel()->setData(shape, QStringLiteral("4x64")));
  EXPECT_TRUE(page.isLoading());
  ASSERT_TRUE(loaded.wait(kAnalysisTimeoutMs)) << page.statusText().toStdString();
  EXPECT_EQ(loaded.first().at(2).toStringList(), QStringList{QStringLiteral("x=4x64")});
  ASSERT_TRUE(page.analysis()->compiled);
  EXPECT_GT(page.analysis()->flops, 0);
  EXPECT_TRUE(LabelText(page, "summaryFlops").contains(QStringLiteral("MFLOP")));
  EXPECT_TRUE(LabelText(page, "placementSummary").contains(QStringLiteral("cpu:fp32: every node on cpu")));
  // The table shows the dims in use, and the node list the shapes they give.
  EXPECT_EQ(page.inputsModel()->data(shape).toString(), QStringLiteral("4x64"));
  EXPECT_EQ(
      page.nodeModel()->index(0, NodeListModel::kInputsColumn).data(NodeListModel::RawValueRole).toStringList().first(),
      QStringLiteral("x: 4x64 f32"));
}

TEST(ModelPageTest, InvalidEditShowsTheErrorNextToTheTableAndRunsNothing) {
  ModelPage page;
  OpenAndWait(page, SampleModel("mlp.onnx"));
  const auto* error = page.findChild<QLabel*>(QStringLiteral("inputsError"));
  ASSERT_NE(error, nullptr);
  EXPECT_TRUE(error->isHidden());

  const QModelIndex shape = page.inputsModel()->index(0, ModelInputsModel::kShapeColumn);
  EXPECT_FALSE(page.inputsModel()->setData(shape, QStringLiteral("4x65")));
  EXPECT_FALSE(page.isLoading());
  EXPECT_FALSE(error->isHidden());
  EXPECT_TRUE(error->text().contains(QStringLiteral("fixed at 64"))) << error->text().toStdString();
  EXPECT_EQ(error->palette().color(QPalette::WindowText).red(), 0xb0);  // red, not the text colour

  // A valid edit clears it.
  QSignalSpy loaded(&page, &ModelPage::modelLoaded);
  EXPECT_TRUE(page.inputsModel()->setData(shape, QStringLiteral("2x64")));
  EXPECT_TRUE(error->isHidden());
  ASSERT_TRUE(loaded.wait(kAnalysisTimeoutMs));
}

TEST(ModelPageTest, DroppingAnOnnxFileOpensIt) {
  ModelPage page;
  const QString path = SampleModel("transformer.onnx");
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(path)});
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&page, &enter);
  EXPECT_TRUE(enter.isAccepted());

  QSignalSpy dropped(&page, &ModelPage::modelDropped);
  QSignalSpy loaded(&page, &ModelPage::modelLoaded);
  QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&page, &drop);
  ASSERT_EQ(dropped.count(), 1);
  EXPECT_EQ(dropped.first().at(0).toString(), path);
  ASSERT_TRUE(loaded.wait(kAnalysisTimeoutMs)) << page.statusText().toStdString();
  EXPECT_EQ(page.modelPath(), path);
  EXPECT_EQ(page.nodeModel()->rowCount(), 45);
}

TEST(ModelPageTest, RefusesToTakeADragWithoutAnOnnxFile) {
  ModelPage page;
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(QStringLiteral("/tmp/notes.txt"))});
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  enter.setAccepted(false);
  QCoreApplication::sendEvent(&page, &enter);
  EXPECT_FALSE(enter.isAccepted());
}

TEST(ModelPageTest, MissingOrMalformedModelEmitsLoadFailedNamingTheFile) {
  const QString garbage = QDir::temp().filePath(QStringLiteral("model_page_test_garbage.onnx"));
  {
    QFile file(garbage);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write("not an onnx model");
  }
  for (const QString& path : {QStringLiteral("/nonexistent/missing_model.onnx"), garbage}) {
    ModelPage page;
    QSignalSpy failed(&page, &ModelPage::loadFailed);
    QSignalSpy loaded(&page, &ModelPage::modelLoaded);
    page.openModel(path);
    ASSERT_TRUE(failed.wait(kAnalysisTimeoutMs)) << path.toStdString();
    EXPECT_EQ(failed.first().at(0).toString(), path);
    const QString message = failed.first().at(1).toString();
    EXPECT_TRUE(message.contains(QFileInfo(path).fileName())) << message.toStdString();
    EXPECT_EQ(page.statusText(), message);  // the page says it too, in its own status line
    EXPECT_FALSE(page.isLoading());
    EXPECT_EQ(loaded.count(), 0);
    EXPECT_EQ(page.findChild<QStackedWidget*>(QStringLiteral("modelStack"))->currentIndex(), 0);
  }
  QFile::remove(garbage);
}

TEST(ModelPageTest, NewTargetsReanalyseTheOpenModel) {
  ModelPage page;
  OpenAndWait(page, SampleModel("cnn.onnx"));
  EXPECT_EQ(page.placementModel()->rowCount(), 0);
  QSignalSpy loaded(&page, &ModelPage::modelLoaded);
  page.setTargets({MustParse("cpu:fp32"), MustParse("cpu:fp16")});
  ASSERT_TRUE(loaded.wait(kAnalysisTimeoutMs));
  ASSERT_EQ(page.analysis()->placements.size(), 2u);
  EXPECT_EQ(page.placementModel()->rowCount(), 1);
}

TEST(ModelPageTest, ASecondOpenWhileLoadingWins) {
  ModelPage page;
  QSignalSpy loaded(&page, &ModelPage::modelLoaded);
  page.openModel(SampleModel("transformer.onnx"));
  page.openModel(SampleModel("cnn.onnx"));
  ASSERT_TRUE(loaded.wait(kAnalysisTimeoutMs));
  QTest::qWait(50);  // a late answer for the first file would arrive now
  EXPECT_EQ(loaded.count(), 1);
  EXPECT_EQ(loaded.first().at(0).toString(), SampleModel("cnn.onnx"));
  EXPECT_EQ(page.nodeModel()->rowCount(), 11);
}

// The analysis says which step it is in: loading and checking, importing, the reference compile, then
// each target in turn with its number.
TEST(ModelPageTest, TheAnalysisReportsEachStep) {
  std::vector<std::string> steps;
  auto analysis =
      AnalyzeModel(SampleModel("cnn.onnx").toStdString(), {}, {MustParse("cpu:fp32"), MustParse("cpu:int8")}, {},
                   [&](const std::string& step) { steps.push_back(step); });
  ASSERT_TRUE(analysis.ok()) << analysis.status().ToString();
  ASSERT_EQ(steps.size(), 5u);
  EXPECT_EQ(steps[0], "loading the file, checking it and inferring shapes");
  EXPECT_EQ(steps[1], "importing the graph");
  EXPECT_EQ(steps[2], "compiling for the reference: compute and memory");
  EXPECT_EQ(steps[3], "compiling for cpu:fp32 (1 of 2): which nodes its device runs");
  EXPECT_EQ(steps[4], "compiling for cpu:int8 (2 of 2): which nodes its device runs");
}

// While it analyses, the page shows the step and the time taken with a Cancel button; Cancel drops the
// analysis (no modelLoaded, even when its answer arrives) and the page says so, keeping what it showed.
TEST(ModelPageTest, ShowsTheStepWhileAnalysingAndCancelAbandonsIt) {
  ModelPage page;
  page.show();
  OpenAndWait(page, SampleModel("mlp.onnx"), {QStringLiteral("x=1x64")});
  auto* progress = page.findChild<QWidget*>(QStringLiteral("analysisProgress"));
  auto* cancel = page.findChild<QPushButton*>(QStringLiteral("analysisCancel"));
  ASSERT_TRUE(progress && cancel);
  EXPECT_FALSE(progress->isVisible());

  QSignalSpy loaded(&page, &ModelPage::modelLoaded);
  page.openModel(SampleModel("cnn.onnx"));
  EXPECT_TRUE(progress->isVisible());
  EXPECT_TRUE(cancel->isVisible());
  EXPECT_TRUE(page.progressText().startsWith(QStringLiteral("Analysing cnn.onnx: ")))
      << page.progressText().toStdString();
  EXPECT_TRUE(page.progressText().endsWith(QStringLiteral(" s"))) << page.progressText().toStdString();
  cancel->click();  // before the event loop can hand over a finished analysis
  EXPECT_FALSE(page.isLoading());
  EXPECT_FALSE(progress->isVisible());
  EXPECT_EQ(page.statusText(), QStringLiteral("Analysis of cnn.onnx cancelled; still showing mlp.onnx."));
  QTest::qWait(500);  // the pool thread's late answer, if any, would arrive now
  EXPECT_EQ(loaded.count(), 0);
  EXPECT_EQ(page.modelPath(), SampleModel("mlp.onnx"));
  EXPECT_EQ(page.analysis()->shapes, (std::vector<std::string>{"x=1x64"}));

  // Opening again works as before.
  const auto args = OpenAndWait(page, SampleModel("cnn.onnx"));
  ASSERT_FALSE(args.isEmpty());
  EXPECT_EQ(page.modelPath(), SampleModel("cnn.onnx"));
  EXPECT_FALSE(progress->isVisible());
}

}  // namespace
}  // namespace chipfit
