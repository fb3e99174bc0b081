// LayerTableModel: every layer of a run on every target in one table (rows: ONNX nodes, or kernels;
// a column group per target), and LayerFilterProxy, its sort and filters. Widget-free.
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <QSortFilterProxyModel>
#include <QString>
#include <QStringList>
#include <limits>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/store/layer_verdict.h"
#include "profilers/run_result.h"

namespace chipfit {

// What a row is: an ONNX node or a kernel (matched across targets by its first ONNX node's name;
// targets that fuse differently leave gaps). The executed kernel is the unit of time: a node row shows
// the whole time of the kernel that computes it, "shared by N nodes" when that kernel is fused, so it
// reads the same number as the kernel's row, the charts and the graph; sums over node rows count each
// kernel once (SumP50).
enum class LayerRowMode { kNodes, kKernels };

// One target's figures for one row. NaN: not measured (or not this target's).
struct LayerCell {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  bool present = false;
  int layer = -1;            // index of the kernel in TargetResult::layers: the one that computes the row
  int kernel_nodes = 0;      // ONNX nodes that kernel covers: > 1 on a node row is "shared by N nodes"
  std::vector<int> kernels;  // every kernel that touches the row (a reorder or copy feeding it too)
  // The computing kernel's whole p50/p90 (a kernel row whose name two kernels share: their sum);
  // share: of the target's Σ layer p50, 0..1.
  double p50_ms = kNone, p90_ms = kNone, share = kNone;
  // Node rows: the p50 of the other kernels that touch the node (a reorder or copy chipfit inserted in
  // front of it), each a kernel of its own with its own kernel row; 0 when none.
  double other_kernels_ms = 0;
  double flops = kNone, bytes = kNone, intensity = kNone, gflops_per_s = kNone, gb_per_s = kNone;
  double sqnr_db = kNone, cosine = kNone, energy_j = kNone;
  QString kernel, device, implementation, precision, bound, energy_source;
  bool fallback = false;  // the node ran off the target's device (its reason in TargetResult::fallbacks)
};

// What ran for a layer on one side (implementation, precision, device, nodes, times), for the
// same-kernel rule of core/store/layer_verdict.h that Compare and the heat map apply.
LayerKernelTiming KernelOf(const LayerCell& c);

struct LayerRow {
  QString key;  // ONNX node name (nodes) or kernel name (kernels): what the selection holds
  QString op;
  QStringList nodes;             // the ONNX nodes the row stands for (a kernel row: every node it covers)
  std::vector<LayerCell> cells;  // one per table target
};

// The rows of `run` in model order (every ok target's order merged), one cell per ok target.
struct LayerTable {
  std::vector<std::shared_ptr<const TargetResult>> targets;  // the ok targets, in run order
  std::vector<LayerRow> rows;
  std::unordered_map<std::string, int> row_of_node;  // ONNX node → row (kernels: every covered node)
};
LayerTable BuildLayerTable(const RunResult& run, LayerRowMode mode);

// Σ p50 on table target `target` over `rows`, each kernel counted once however many of the rows it
// covers (the nodes of a fused kernel, a reorder and its convolution). NaN when no row has a time.
double SumP50(const LayerTable& table, int target, const std::vector<int>& rows);

class LayerTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // Per target, in this order; column = kFixedColumns + target × kMetricCount + metric.
  enum Metric {
    kKernel,
    kP50,
    kP90,
    kShare,
    kFlops,
    kBytes,
    kIntensity,
    kGflops,
    kGbs,
    kBound,
    kPrecision,
    kSqnr,
    kCosine,
    kEnergy,
    kMetricCount
  };
  // kRatioColumn: target B's p50 over target A's (setRatioTargets), for the "A vs B" column set.
  enum FixedColumn { kNameColumn, kOpColumn, kRatioColumn, kFixedColumns };
  // RawRole: the number (double, NaN when absent) or text a column sorts by; KeyRole: the row's key;
  // NodesRole: its ONNX nodes (QStringList).
  enum Role { RawRole = Qt::UserRole + 1, KeyRole, NodesRole };

  explicit LayerTableModel(QObject* parent = nullptr);

  void setRun(std::shared_ptr<const RunResult> run, LayerRowMode mode = LayerRowMode::kNodes);
  void setMode(LayerRowMode mode);
  // The pair kRatioColumn compares, by target name so it outlives a setRun of the same run grown by a
  // target; empty or unknown names leave the column blank.
  void setRatioTargets(const QString& a, const QString& b);
  int ratioA() const { return ratio_a_; }
  int ratioB() const { return ratio_b_; }
  LayerRowMode mode() const { return mode_; }
  const std::shared_ptr<const RunResult>& run() const { return run_; }
  const LayerTable& table() const { return table_; }

  int targetCount() const { return static_cast<int>(table_.targets.size()); }
  QString targetName(int target) const;
  int targetIndex(const QString& target) const;  // -1 when not in the table
  static int column(int target, Metric metric) { return kFixedColumns + target * kMetricCount + metric; }
  static int targetOfColumn(int column) {
    return column < kFixedColumns ? -1 : (column - kFixedColumns) / kMetricCount;
  }
  static Metric metricOfColumn(int column) { return static_cast<Metric>((column - kFixedColumns) % kMetricCount); }
  // The row holding ONNX node `node`, or -1.
  int rowOfNode(const QString& node) const;
  // The sort value of a cell: a number (NaN when absent) for numeric columns.
  double number(int row, int column) const;
  QString text(int row, int column) const;
  static bool isNumeric(int column);
  // The order a first click on the column's header sorts in: costs (time, share, FLOPs, bytes,
  // energy, a ratio) largest first; names, and drift (lowest, the worst, first), ascending.
  static Qt::SortOrder initialSortOrder(int column);
  static QString metricName(Metric metric);
  static QString metricToolTip(Metric metric);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  QString display(int row, int column) const;
  QString ratioToolTip() const;
  void resolveRatioTargets();

  std::shared_ptr<const RunResult> run_;
  LayerRowMode mode_ = LayerRowMode::kNodes;
  LayerTable table_;
  QString ratio_a_name_, ratio_b_name_;
  int ratio_a_ = -1, ratio_b_ = -1;
};

// Sort by any column (numbers by value, absent values last) and filters a user combines: text (name,
// op, kernel), op, device, bound, "drift below N dB" on a target, "target A slower than target B by
// at least N×". Reads the source's cells directly, so sorting thousands of rows stays instant.
class LayerFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit LayerFilterProxy(QObject* parent = nullptr);

  void setTextFilter(const QString& text);
  void setOpFilter(const QString& op);          // empty: any
  void setDeviceFilter(const QString& device);  // a row some target ran on this device ("cpu", "opencl:0")
  void setBoundFilter(const QString& bound);    // "memory" | "compute" on any target; empty: any
  // Rows whose drift SQNR on `target` (a table target index) is below `db`; target < 0: off.
  void setDriftBelow(int target, double db);
  // Rows where target `a` takes at least `factor` × target `b`'s time; a or b < 0: off.
  void setSlowerThan(int a, int b, double factor);
  void clearFilters();

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  const LayerTableModel* table() const;

  QString text_, op_, device_, bound_;
  int drift_target_ = -1;
  double drift_db_ = 30;
  int slower_a_ = -1, slower_b_ = -1;
  double slower_factor_ = 1;
};

}  // namespace chipfit
