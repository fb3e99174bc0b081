// CompareModel: both sides' layers matched by ONNX node through the layer table, the diff rules applied.
#include "views/models/compare_model.h"

#include <QColor>
#include <cmath>
#include <unordered_map>

#include "profilers/profile_json.h"
#include "views/charts/formats.h"
#include "views/models/layer_table_model.h"

namespace chipfit {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

// Node → the side's cell, from the run's node table.
std::unordered_map<std::string, LayerCell> CellsOf(const CompareSide& side, std::vector<std::string>* order,
                                                   std::unordered_map<std::string, QString>* ops) {
  std::unordered_map<std::string, LayerCell> cells;
  if (!side.run) return cells;
  const LayerTable table = BuildLayerTable(*side.run, LayerRowMode::kNodes);
  int t = -1;
  for (size_t i = 0; i < table.targets.size(); ++i) {
    if (Q(table.targets[i]->target.ToString()) == side.target) t = static_cast<int>(i);
  }
  if (t < 0) return cells;
  for (const LayerRow& row : table.rows) {
    const LayerCell& cell = row.cells[static_cast<size_t>(t)];
    if (!cell.present) continue;
    const std::string node = row.key.toStdString();
    if (cells.emplace(node, cell).second && order != nullptr) order->push_back(node);
    if (ops != nullptr && !row.op.isEmpty()) ops->emplace(node, row.op);
  }
  return cells;
}

}  // namespace

QString CompareSide::label(bool same_run) const {
  if (same_run || !run) return target;
  return (run->run_id ? QObject::tr("run %1 ").arg(*run->run_id) : QObject::tr("unstored run ")) + target;
}

const TargetResult* CompareSide::result() const { return run ? run->FindTarget(target.toStdString()) : nullptr; }

CompareModel::CompareModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareModel::setSides(CompareSide a, CompareSide b) {
  beginResetModel();
  a_ = std::move(a);
  b_ = std::move(b);
  build();
  endResetModel();
}

bool CompareModel::sameModel() const {
  if (!a_.run || !b_.run) return true;
  const ModelSummary &a = a_.run->model, &b = b_.run->model;
  return !a.sha256.empty() && !b.sha256.empty() ? a.sha256 == b.sha256 : a.path == b.path;
}

void CompareModel::build() {
  rows_.clear();
  totals_ = {};
  totals_.different_models = !sameModel();
  if (totals_.different_models) {
    // Two networks: node names may coincide ("Conv_0") without being the same layer. End to end only.
    const TargetResult* ta = a_.result();
    const TargetResult* tb = b_.result();
    if (ta != nullptr && tb != nullptr && ta->latency.p50 > 0 && tb->latency.p50 > 0) {
      totals_.a_p50 = ta->latency.p50;
      totals_.b_p50 = tb->latency.p50;
      totals_.interval.ratio = totals_.interval.low = totals_.interval.high = tb->latency.p50 / ta->latency.p50;
      totals_.interval.method = "ratio of the p50s";
    }
    return;
  }
  std::vector<std::string> order;
  std::unordered_map<std::string, QString> ops;
  const auto cells_a = CellsOf(a_, &order, &ops);
  std::vector<std::string> order_b;
  const auto cells_b = CellsOf(b_, &order_b, &ops);
  for (const std::string& node : order_b) {
    if (!cells_a.contains(node)) order.push_back(node);
  }
  const DiffOptions options;
  for (const std::string& node : order) {
    CompareRow row;
    row.node = Q(node);
    row.op = ops.contains(node) ? ops.at(node) : QString();
    const auto a = cells_a.find(node), b = cells_b.find(node);
    row.a_ms = a != cells_a.end() ? a->second.p50_ms : LayerCell::kNone;
    row.a_p90 = a != cells_a.end() ? a->second.p90_ms : LayerCell::kNone;
    row.b_ms = b != cells_b.end() ? b->second.p50_ms : LayerCell::kNone;
    row.b_p90 = b != cells_b.end() ? b->second.p90_ms : LayerCell::kNone;
    if (a != cells_a.end()) {
      row.a_kernel = a->second.kernel;
      row.a_device = a->second.device;
      row.a_precision = a->second.precision;
    }
    if (b != cells_b.end()) {
      row.b_kernel = b->second.kernel;
      row.b_device = b->second.device;
      row.b_precision = b->second.precision;
    }
    if (a != cells_a.end() && b != cells_b.end()) {
      const LayerJudgement judged = JudgeLayer(KernelOf(a->second), KernelOf(b->second), options);
      row.change = judged.change;
      row.verdict = judged.verdict;
      row.same_kernel = judged.same_kernel;
    }
    if (!std::isfinite(row.a_ms) || !std::isfinite(row.b_ms)) row.change.ratio = LayerCell::kNone;
    QStringList changes;
    if (a == cells_a.end()) changes << tr("only in B");
    if (b == cells_b.end()) changes << tr("only in A");
    if (a != cells_a.end() && b != cells_b.end()) {
      if (row.a_precision != row.b_precision) changes << tr("precision %1 → %2").arg(row.a_precision, row.b_precision);
      if (row.a_device != row.b_device) changes << tr("device %1 → %2").arg(row.a_device, row.b_device);
      if (a->second.kernel_nodes != b->second.kernel_nodes)
        changes << tr("fused with %1 → %2 nodes").arg(a->second.kernel_nodes).arg(b->second.kernel_nodes);
    }
    row.placement_change = changes.join(QStringLiteral("; "));
    totals_.regressions += row.change.regressed ? 1 : 0;
    totals_.improvements += row.change.improved ? 1 : 0;
    totals_.same_kernel += row.verdict == LayerVerdict::kSameKernel ? 1 : 0;
    totals_.placement_changes += row.placement_change.isEmpty() ? 0 : 1;
    rows_.push_back(std::move(row));
  }

  const TargetResult* ta = a_.result();
  const TargetResult* tb = b_.result();
  if (ta != nullptr && tb != nullptr && ta->latency.p50 > 0 && tb->latency.p50 > 0) {
    totals_.a_p50 = ta->latency.p50;
    totals_.b_p50 = tb->latency.p50;
    if (!ta->latency.samples.empty() && !tb->latency.samples.empty()) {
      totals_.interval = BootstrapMedianRatio(ta->latency.samples, tb->latency.samples, options.confidence,
                                              options.resamples, options.seed);
    } else {
      totals_.interval.ratio = totals_.interval.low = totals_.interval.high = tb->latency.p50 / ta->latency.p50;
      totals_.interval.method = "ratio of the p50s";
    }
    // Without samples there is no interval, and no verdict a team could gate on.
    if (!totals_.interval.method.starts_with("ratio of the p50s"))
      totals_.verdict = Q(RatioVerdict(totals_.interval, options.min_latency_change));
  }
  if (a_.run && b_.run && a_.run != b_.run) {
    for (const std::string& d : ComparabilityDifferences(RunResultToJson(*a_.run), RunResultToJson(*b_.run)))
      totals_.differences << Q(d);
  }
}

int CompareModel::rowOfNode(const QString& node) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].node == node) return static_cast<int>(i);
  }
  return -1;
}

int CompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CompareModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant CompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const CompareRow& r = rows_[static_cast<size_t>(index.row())];
  // Units scaled to the value, as on the Layers page and the charts ("14.1 µs", "−530 ns" for a delta).
  const auto ms = [](double v) {
    if (!std::isfinite(v)) return QString();
    const QString text = QString::fromStdString(formats::FormatDuration(std::abs(v)));
    return v < 0 ? QChar(0x2212) + text : text;
  };
  const QString verdict = r.change.regressed                       ? tr("slower")
                          : r.change.improved                      ? tr("faster")
                          : r.verdict == LayerVerdict::kSameKernel ? tr("same kernel")
                                                                   : QString();
  if (role == NodeRole) return r.node;
  if (role == RawRole) {
    // Absent values sort below every number: last when the largest regression leads.
    const auto raw = [](double v) { return std::isfinite(v) ? v : -INFINITY; };
    switch (index.column()) {
      case kAColumn: return raw(r.a_ms);
      case kBColumn: return raw(r.b_ms);
      case kRatioColumn: return raw(r.change.ratio);
      case kDeltaColumn: return std::isfinite(r.a_ms) && std::isfinite(r.b_ms) ? r.b_ms - r.a_ms : -INFINITY;
      case kVerdictColumn: return r.change.regressed ? 1 : r.change.improved ? -1 : 0;
      default: break;
    }
  }
  switch (role) {
    case Qt::DisplayRole:
    case RawRole:
      switch (index.column()) {
        case kNodeColumn: return r.node;
        case kOpColumn: return r.op;
        case kAColumn: return ms(r.a_ms);
        case kBColumn: return ms(r.b_ms);
        case kRatioColumn:
          return std::isfinite(r.change.ratio) ? QString::number(r.change.ratio, 'f', 2) + QChar(0x00D7) : QString();
        case kDeltaColumn: return std::isfinite(r.a_ms) && std::isfinite(r.b_ms) ? ms(r.b_ms - r.a_ms) : QString();
        case kVerdictColumn: return verdict;
        case kAKernelColumn:
          return r.a_kernel.isEmpty() ? QString() : r.a_kernel + QStringLiteral(" (") + r.a_precision + QChar(')');
        case kBKernelColumn:
          return r.b_kernel.isEmpty() ? QString() : r.b_kernel + QStringLiteral(" (") + r.b_precision + QChar(')');
        case kChangeColumn: return r.placement_change;
        default: return {};
      }
    case Qt::TextAlignmentRole:
      return index.column() >= kAColumn && index.column() <= kDeltaColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                                                          : QVariant();
    case Qt::ForegroundRole:
      if (index.column() == kVerdictColumn || index.column() == kRatioColumn) {
        if (r.change.regressed) return QColor(0xB0, 0x30, 0x20);
        if (r.change.improved) return QColor(0x1E, 0x7B, 0x3E);
      }
      return {};
    case Qt::ToolTipRole:
      if (r.verdict == LayerVerdict::kSameKernel)
        return tr("B/A %1: the same kernel (%2, %3 on %4) on both sides, within noise (%5 %: both sides' p90 − "
                  "p50 spread, at least %6 % for the same kernel), so neither is faster")
            .arg(r.change.ratio, 0, 'f', 3)
            .arg(r.a_kernel, r.a_precision, r.a_device)
            .arg(r.change.threshold * 100, 0, 'f', 1)
            .arg(kSameKernelMinChange * 100, 0, 'f', 0);
      if (std::isfinite(r.change.ratio))
        return tr("B/A %1; flagged beyond %2 % (the larger of 10 % and both sides' p90 − p50 spread; layers under "
                  "20 µs never), as chipfit diff does")
            .arg(r.change.ratio, 0, 'f', 3)
            .arg(r.change.threshold * 100, 0, 'f', 1);
      return r.placement_change;
    default: return {};
  }
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  const bool same = sameRun();
  switch (section) {
    case kNodeColumn: return tr("ONNX node");
    case kOpColumn: return tr("op");
    case kAColumn: return tr("A: %1\np50").arg(a_.label(same));
    case kBColumn: return tr("B: %1\np50").arg(b_.label(same));
    case kRatioColumn: return tr("B / A");
    case kDeltaColumn: return tr("B − A");
    case kVerdictColumn: return tr("verdict");
    case kAKernelColumn: return tr("A kernel");
    case kBKernelColumn: return tr("B kernel");
    case kChangeColumn: return tr("placement / precision change");
    default: return {};
  }
}

}  // namespace chipfit
