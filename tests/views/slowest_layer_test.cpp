// One attribution of time across the views: the Layers table (node rows, slowest first), its time chart,
// the detail pane and the Graph page name the same kernel as a target's slowest layer, on a run where
// splitting a fused kernel's time over its nodes would have put another layer on top, and on the real
// profile run in tests/data/sample_run.json. Screenshots of both pages are written for a human to check.
#include <gtest/gtest.h>

#include <QAbstractBarSeries>
#include <QBarSet>
#include <QChartView>
#include <QDir>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QTextBrowser>
#include <fstream>
#include <iostream>
#include <set>

#include "profilers/profile_json.h"
#include "views/charts/run_charts.h"
#include "views/models/layer_selection.h"
#include "views/pages/graph_page.h"
#include "views/pages/layers_page.h"

namespace chipfit {
namespace {

constexpr int kLayoutTimeoutMs = 120000;  // generous: a loaded machine or a sanitizer build

LayerResult Kernel(std::string name, std::string op, std::vector<std::string> nodes, double ms, int64_t flops,
                   const char* precision) {
  LayerResult l;
  l.name = std::move(name);
  l.op = std::move(op);
  l.onnx_nodes = std::move(nodes);
  l.device = "cpu";
  l.precision = precision;
  l.implementation = std::string("onednn:") + precision;
  l.time_p50_ms = ms;
  l.time_p90_ms = ms * 1.05;
  l.flops = flops;
  return l;
}

// conv+bn+relu fused into one 30 µs kernel behind a 4 µs reorder, then a 15 µs MaxPool: split evenly,
// each conv node would read 10 µs and the pool would look slowest.
std::shared_ptr<const RunResult> FusedRun() {
  auto run = std::make_shared<RunResult>();
  run->status = "ok";
  run->node_ops = {
      {"conv", "Conv"}, {"bn", "BatchNormalization"}, {"relu", "Relu"}, {"pool", "MaxPool"}, {"fc", "Gemm"}};
  for (const char* precision : {"fp32", "int8"}) {
    auto t = std::make_shared<TargetResult>();
    t->target = *ParseTarget(std::string("cpu:") + precision);
    const double scale = std::string(precision) == "int8" ? 0.8 : 1.0;
    t->layers = {Kernel("conv/reorder:input", "Reorder", {"conv"}, 0.004, 0, precision),
                 Kernel("conv", "FusedConv", {"conv", "bn", "relu"}, 0.030 * scale, 5000000, precision),
                 Kernel("pool", "MaxPool", {"pool"}, 0.015, 0, "fp32"),
                 Kernel("fc", "Gemm", {"fc"}, 0.002, 20000, precision)};
    run->targets.push_back(std::move(t));
  }
  return run;
}

std::shared_ptr<const RunResult> SampleRun() {
  std::ifstream in(std::string(CHIPFIT_SOURCE_DIR) + "/tests/data/sample_run.json");
  EXPECT_TRUE(in.good()) << "missing fixture tests/data/sample_run.json";
  Result<RunResult> run = RunResultFromJson(nlohmann::json::parse(in));
  EXPECT_TRUE(run.ok()) << run.status().message();
  return std::make_shared<const RunResult>(run.ok() ? std::move(run).value() : RunResult{});
}

// The run's nodes as a chain in the first target's kernel order (each consumes the one before): enough
// of a model for the Graph page to lay out and colour.
std::shared_ptr<const ModelAnalysis> ChainOf(const RunResult& run) {
  auto analysis = std::make_shared<ModelAnalysis>();
  std::set<std::string> seen;
  std::string previous = "input";
  for (const LayerResult& l : run.targets.front()->layers) {
    for (const std::string& node : l.onnx_nodes) {
      if (!seen.insert(node).second) continue;
      NodeRow row;
      row.name = node;
      row.op = run.node_ops.contains(node) ? run.node_ops.at(node) : l.op;
      row.inputs = {previous};
      row.outputs = {node + "_out"};
      previous = row.outputs.front();
      analysis->nodes.push_back(std::move(row));
    }
  }
  return analysis;
}

// The kernel with the largest p50 of a target: what every view must call its slowest layer.
const LayerResult& SlowestKernel(const TargetResult& t) {
  const LayerResult* slowest = &t.layers.front();
  for (const LayerResult& l : t.layers) {
    if (l.time_p50_ms > slowest->time_p50_ms) slowest = &l;
  }
  return *slowest;
}

QStringList NodesOf(const LayerResult& l) {
  QStringList nodes;
  for (const std::string& n : l.onnx_nodes) nodes << QString::fromStdString(n);
  return nodes;
}

// The nodes of the time chart's top bar (bars run bottom to top: the last one is the slowest).
QStringList TopBarNodes(const QChart& chart) {
  for (QAbstractSeries* series : chart.series()) {
    if (auto* bars = qobject_cast<QAbstractBarSeries*>(series); bars != nullptr && !bars->barSets().isEmpty()) {
      const std::vector<QStringList> nodes = charts::NodesOfPoints(bars->barSets().front());
      return nodes.empty() ? QStringList() : nodes.back();
    }
  }
  return {};
}

void CheckEveryViewAgrees(const std::shared_ptr<const RunResult>& run, const char* shot_prefix) {
  LayerSelection selection;
  LayersPage layers(&selection);
  layers.resize(1400, 900);
  layers.setRun(run);
  layers.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&layers));
  GraphPage graph(&selection);
  graph.resize(1100, 800);
  graph.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&graph));
  QSignalSpy laid_out(&graph, &GraphPage::laidOut);
  graph.setModel(ChainOf(*run));
  ASSERT_TRUE(laid_out.wait(kLayoutTimeoutMs)) << graph.statusText().toStdString();
  graph.setRun(run);

  const LayerTableModel& model = *layers.model();
  ASSERT_GT(model.targetCount(), 0);
  for (int t = 0; t < model.targetCount(); ++t) {
    const TargetResult& target = *model.table().targets[static_cast<size_t>(t)];
    if (target.layers.empty()) continue;
    const QString name = model.targetName(t);
    SCOPED_TRACE(name.toStdString());
    const LayerResult& slowest = SlowestKernel(target);
    const QStringList kernel_nodes = NodesOf(slowest);

    // The table: node rows sorted by this target's p50, slowest first; the top row is one of the
    // slowest kernel's nodes and shows its whole time.
    layers.table()->sortByColumn(LayerTableModel::column(t, LayerTableModel::kP50), Qt::DescendingOrder);
    const QModelIndex top = layers.proxy()->index(0, LayerTableModel::column(t, LayerTableModel::kP50));
    const QString top_node = top.data(LayerTableModel::KeyRole).toString();
    EXPECT_TRUE(kernel_nodes.contains(top_node))
        << top_node.toStdString() << " tops the table, the slowest kernel is " << slowest.name;
    EXPECT_DOUBLE_EQ(top.data(LayerTableModel::RawRole).toDouble(), slowest.time_p50_ms);

    // The time chart of the same target: its top bar is the same kernel.
    layers.setChartTarget(name);
    const QChart& chart = *layers.chartViews().front()->chart();
    EXPECT_EQ(TopBarNodes(chart), kernel_nodes);

    // Selecting the top row marks that bar, names the kernel in the detail pane, and highlights its node
    // on the graph.
    layers.table()->selectRow(0);
    ASSERT_EQ(selection.current(), top_node);
    EXPECT_TRUE(charts::HighlightedNodes(chart).contains(top_node));
    EXPECT_TRUE(layers.details()->toPlainText().contains(QString::fromStdString(slowest.op + " " + slowest.name)));
    ASSERT_NE(graph.itemFor(top_node), nullptr);
    EXPECT_TRUE(graph.itemFor(top_node)->isHighlighted());

    // The graph on this target, coloured by time share: the darkest boxes are exactly the kernel's
    // nodes, drawn as one cluster when it is fused.
    graph.setCurrentTarget(name);
    graph.setColourMode(GraphPage::ColourMode::kTimeShare);
    QStringList hottest;
    const auto chain = ChainOf(*run);
    for (const NodeRow& node : chain->nodes) {
      const QString n = QString::fromStdString(node.name);
      if (graph.itemFor(n)->fill() == QColor(0xb0, 0x10, 0x10)) hottest << n;
    }
    EXPECT_EQ(hottest, kernel_nodes);
    if (kernel_nodes.size() > 1) {
      const bool clustered = std::any_of(graph.clusters().begin(), graph.clusters().end(),
                                         [&](const GraphClusterItem* c) { return c->nodes() == kernel_nodes; });
      EXPECT_TRUE(clustered) << "the fused kernel's nodes are one cluster";
    }
    selection.clear();
  }

  // Screenshots for a human: the first target, its slowest row selected.
  layers.table()->sortByColumn(LayerTableModel::column(0, LayerTableModel::kP50), Qt::DescendingOrder);
  layers.setChartTarget(model.targetName(0));
  layers.table()->selectRow(0);
  graph.setCurrentTarget(model.targetName(0));
  graph.fitToView();
  QTest::qWait(50);
  for (const auto& [widget, name] : {std::pair<QWidget*, const char*>{&layers, "layers"}, {&graph, "graph"}}) {
    const QString path = QDir::current().filePath(QStringLiteral("%1_%2.png").arg(shot_prefix, name));
    ASSERT_TRUE(widget->grab().toImage().save(path)) << path.toStdString();
    std::cout << "[ slowest  ] screenshot " << path.toStdString() << "\n";
  }
}

TEST(SlowestLayer, EveryViewNamesTheSameKernelOnAFusedRun) { CheckEveryViewAgrees(FusedRun(), "slowest_fused"); }

TEST(SlowestLayer, EveryViewNamesTheSameKernelOnTheSampleRun) { CheckEveryViewAgrees(SampleRun(), "slowest_sample"); }

}  // namespace
}  // namespace chipfit
