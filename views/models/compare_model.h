// CompareModel: one target against another, layer by layer — two targets of one run, or one target in
// two runs. Layers are matched by ONNX node, flagged only beyond noise by the rules of `chipfit diff`,
// with the placement and precision changes between the two. Widget-free.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <memory>
#include <optional>
#include <vector>

#include "core/store/layer_verdict.h"
#include "core/store/run_diff.h"
#include "profilers/run_result.h"

namespace chipfit {

// One side of a comparison: a run and one of its targets.
struct CompareSide {
  std::shared_ptr<const RunResult> run;
  QString target;  // "cpu:int8"
  // "run 12 cpu:int8", or the target alone when both sides are of one run.
  QString label(bool same_run) const;
  const TargetResult* result() const;
};

struct CompareRow {
  QString node, op;
  double a_ms = 0, b_ms = 0, a_p90 = 0, b_p90 = 0;  // NaN where the side has no kernel for the node
  LayerChange change;
  // JudgeLayer's verdict: kSameKernel where both sides ran the same kernel (implementation, precision,
  // device, nodes) and its time moved within noise: never faster or slower then.
  LayerVerdict verdict = LayerVerdict::kNotCompared;
  bool same_kernel = false;
  QString a_kernel, b_kernel, a_device, b_device, a_precision, b_precision;
  // Why the row differs besides time: "precision fp32 → int8", "device cpu → opencl:0", "fused into …".
  QString placement_change;
};

// The whole-target figures: p50 of each, and the verdict on B/A from their timed samples (the
// bootstrap interval `chipfit diff` uses), or from p50/p90 where a side has no samples.
struct CompareTotals {
  double a_p50 = 0, b_p50 = 0;
  RatioInterval interval;
  QString verdict;       // regressed | improved | unchanged | inconclusive | "" (no latency, or no samples)
  int regressions = 0;   // layers flagged slower
  int improvements = 0;  // layers flagged faster
  int same_kernel = 0;   // layers that ran the same kernel on both sides, within noise
  int placement_changes = 0;
  QStringList differences;  // two runs that measured different things (ComparabilityDifferences)
  // The runs profiled different model files (another sha256): their layers are other networks' layers,
  // so nothing is matched by node name and no verdict is given; only the end-to-end figures are shown.
  bool different_models = false;
};

class CompareModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kNodeColumn,
    kOpColumn,
    kAColumn,
    kBColumn,
    kRatioColumn,
    kDeltaColumn,
    kVerdictColumn,
    kAKernelColumn,
    kBKernelColumn,
    kChangeColumn,
    kColumnCount
  };
  enum Role { RawRole = Qt::UserRole + 1, NodeRole };

  explicit CompareModel(QObject* parent = nullptr);

  void setSides(CompareSide a, CompareSide b);
  const CompareSide& a() const { return a_; }
  const CompareSide& b() const { return b_; }
  bool sameRun() const { return a_.run && a_.run == b_.run; }
  // Both sides profiled the same model file (its sha256; the path where a run recorded no hash).
  bool sameModel() const;
  const std::vector<CompareRow>& rows() const { return rows_; }
  const CompareTotals& totals() const { return totals_; }
  int rowOfNode(const QString& node) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  void build();

  CompareSide a_, b_;
  std::vector<CompareRow> rows_;
  CompareTotals totals_;
};

}  // namespace chipfit
