// The layer table of a run: rows built once per run and mode, cells read directly by the proxy.
#include "views/models/layer_table_model.h"

#include <QLocale>
#include <algorithm>
#include <cmath>
#include <list>
#include <set>

#include "views/charts/formats.h"

namespace chipfit {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }
bool Has(double v) { return std::isfinite(v); }
double Or(double v) { return std::isfinite(v) ? v : LayerCell::kNone; }

// The ONNX nodes a kernel stands for (a copy or reorder with no node of its own: its name).
std::vector<std::string> NodesOf(const LayerResult& layer) {
  return layer.onnx_nodes.empty() ? std::vector<std::string>{layer.name} : layer.onnx_nodes;
}

// Keys in one order that keeps each target's execution order: a key the order lacks goes right after
// the key the target ran before it. Linear in the number of layers (a 5,000-layer model stays fast).
template <typename KeysOf>
std::vector<std::string> MergedOrder(const std::vector<std::shared_ptr<const TargetResult>>& targets, KeysOf keys_of) {
  std::list<std::string> order;
  std::unordered_map<std::string, std::list<std::string>::iterator> where;
  for (const auto& t : targets) {
    auto previous = order.end();
    for (const LayerResult& layer : t->layers) {
      for (const std::string& key : keys_of(layer)) {
        if (const auto found = where.find(key); found != where.end()) {
          previous = found->second;
          continue;
        }
        const auto at = previous == order.end() ? order.begin() : std::next(previous);
        previous = order.insert(at, key);
        where.emplace(key, previous);
      }
    }
  }
  return {order.begin(), order.end()};
}

// A copy or reorder chipfit inserted in front of a node: named after the node with a suffix
// ("conv1/reorder:input"), where a kernel that computes nodes is named after its first one.
bool Inserted(const LayerResult& l) { return !l.onnx_nodes.empty() && l.name != l.onnx_nodes.front(); }

// Whether `l` rather than `current` is the kernel that computes a node both touch: a kernel of the
// graph before an inserted one, then one with arithmetic before one without.
bool ComputesBetter(const LayerResult& l, const LayerResult& current) {
  if (Inserted(l) != Inserted(current)) return Inserted(current);
  return current.flops <= 0 && l.flops > 0;
}

// A kernel's own figures, shared by every row it covers.
void FillKernel(LayerCell& cell, const TargetResult& t, int index, const std::set<std::string>& fallback_nodes) {
  const LayerResult& l = t.layers[static_cast<size_t>(index)];
  cell.present = true;
  cell.layer = index;
  cell.kernel_nodes = static_cast<int>(NodesOf(l).size());
  cell.flops = static_cast<double>(l.flops);
  cell.bytes = static_cast<double>(l.bytes_read + l.bytes_written);
  cell.intensity = l.flops > 0 ? Or(l.arithmetic_intensity) : LayerCell::kNone;
  cell.gflops_per_s = l.flops > 0 ? Or(l.gflops_per_s) : LayerCell::kNone;
  cell.gb_per_s = Or(l.gb_per_s);
  cell.kernel = Q(l.op) + QStringLiteral(" ") + Q(l.name);
  cell.device = Q(l.device);
  cell.implementation = Q(l.implementation);
  cell.precision = Q(l.precision);
  cell.bound = Q(l.bound);
  if (l.drift) {
    cell.sqnr_db = l.drift->sqnr_db;
    cell.cosine = l.drift->cosine;
  }
  if (l.energy) cell.energy_source = Q(l.energy->source);
  const std::string device_id = t.target.DeviceId();
  cell.fallback = (!l.device.empty() && l.device != device_id) ||
                  std::any_of(l.onnx_nodes.begin(), l.onnx_nodes.end(),
                              [&](const std::string& n) { return fallback_nodes.count(n) > 0; });
}

void AddTime(LayerCell& cell, const LayerResult& l) {
  const auto add = [](double& to, double v) {
    if (!Has(v)) return;
    to = (Has(to) ? to : 0) + v;
  };
  add(cell.p50_ms, l.time_p50_ms);
  add(cell.p90_ms, l.time_p90_ms);
  if (l.energy) add(cell.energy_j, l.energy->joules);
}

// A cell's times once every kernel of the target is in: a node row takes its computing kernel's whole
// time (never a share of it) and names the others' time apart; a kernel row adds up the kernels of its
// name (normally one).
void SetTimes(LayerCell& cell, const TargetResult& t, bool nodes) {
  for (const int k : cell.kernels) {
    const LayerResult& l = t.layers[static_cast<size_t>(k)];
    if (!nodes || k == cell.layer) {
      AddTime(cell, l);
    } else if (Has(l.time_p50_ms)) {
      cell.other_kernels_ms += l.time_p50_ms;
    }
  }
}

}  // namespace

LayerTable BuildLayerTable(const RunResult& run, LayerRowMode mode) {
  LayerTable table;
  for (const auto& t : run.targets) {
    if (t && t->status == "ok") table.targets.push_back(t);
  }
  const bool nodes = mode == LayerRowMode::kNodes;
  const std::vector<std::string> keys =
      nodes ? MergedOrder(table.targets, NodesOf)
            : MergedOrder(table.targets, [](const LayerResult& l) { return std::vector<std::string>{l.name}; });
  std::unordered_map<std::string, int> row_of_key;
  table.rows.resize(keys.size());
  for (size_t r = 0; r < keys.size(); ++r) {
    LayerRow& row = table.rows[r];
    row.key = Q(keys[r]);
    row.cells.resize(table.targets.size());
    row_of_key.emplace(keys[r], static_cast<int>(r));
    if (nodes) {
      row.nodes = {row.key};
      if (const auto op = run.node_ops.find(keys[r]); op != run.node_ops.end()) row.op = Q(op->second);
    }
  }
  for (size_t ti = 0; ti < table.targets.size(); ++ti) {
    const TargetResult& t = *table.targets[ti];
    std::set<std::string> fallback_nodes;
    for (const Fallback& f : t.fallbacks) fallback_nodes.insert(f.node);
    double total = 0;
    for (const LayerResult& l : t.layers) total += Has(l.time_p50_ms) ? l.time_p50_ms : 0;
    for (size_t li = 0; li < t.layers.size(); ++li) {
      const LayerResult& l = t.layers[li];
      const std::vector<std::string> covered = NodesOf(l);
      const std::vector<std::string> row_keys = nodes ? covered : std::vector<std::string>{l.name};
      for (const std::string& key : row_keys) {
        LayerRow& row = table.rows[static_cast<size_t>(row_of_key.at(key))];
        LayerCell& cell = row.cells[ti];
        // A node two kernels touch (a reorder and its conv): the kernel that computes it names the cell
        // and gives its time; the other's time is named apart (SetTimes).
        if (!cell.present || ComputesBetter(l, t.layers[static_cast<size_t>(cell.layer)]))
          FillKernel(cell, t, static_cast<int>(li), fallback_nodes);
        cell.kernels.push_back(static_cast<int>(li));
        if (row.op.isEmpty()) row.op = Q(l.op);
        if (!nodes) {
          for (const std::string& n : covered) {
            if (!row.nodes.contains(Q(n))) row.nodes << Q(n);
          }
        }
      }
    }
    for (LayerRow& row : table.rows) {
      LayerCell& cell = row.cells[ti];
      if (!cell.present) continue;
      SetTimes(cell, t, nodes);
      if (total > 0 && Has(cell.p50_ms)) cell.share = cell.p50_ms / total;
    }
  }
  for (size_t r = 0; r < table.rows.size(); ++r) {
    for (const QString& n : table.rows[r].nodes) table.row_of_node.emplace(n.toStdString(), static_cast<int>(r));
  }
  return table;
}

double SumP50(const LayerTable& table, int target, const std::vector<int>& rows) {
  if (target < 0 || target >= static_cast<int>(table.targets.size())) return LayerCell::kNone;
  const TargetResult& t = *table.targets[static_cast<size_t>(target)];
  std::set<int> counted;
  double sum = LayerCell::kNone;
  for (const int r : rows) {
    if (r < 0 || r >= static_cast<int>(table.rows.size())) continue;
    for (const int k : table.rows[static_cast<size_t>(r)].cells[static_cast<size_t>(target)].kernels) {
      const double ms = t.layers[static_cast<size_t>(k)].time_p50_ms;
      if (!counted.insert(k).second || !Has(ms)) continue;
      sum = (Has(sum) ? sum : 0) + ms;
    }
  }
  return sum;
}

LayerTableModel::LayerTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void LayerTableModel::setRun(std::shared_ptr<const RunResult> run, LayerRowMode mode) {
  beginResetModel();
  run_ = std::move(run);
  mode_ = mode;
  table_ = run_ ? BuildLayerTable(*run_, mode_) : LayerTable{};
  resolveRatioTargets();
  endResetModel();
}

void LayerTableModel::setRatioTargets(const QString& a, const QString& b) {
  ratio_a_name_ = a;
  ratio_b_name_ = b;
  resolveRatioTargets();
  if (rowCount() > 0) emit dataChanged(index(0, kRatioColumn), index(rowCount() - 1, kRatioColumn));
  emit headerDataChanged(Qt::Horizontal, kRatioColumn, kRatioColumn);
}

void LayerTableModel::resolveRatioTargets() {
  ratio_a_ = targetIndex(ratio_a_name_);
  ratio_b_ = targetIndex(ratio_b_name_);
}

void LayerTableModel::setMode(LayerRowMode mode) {
  if (mode != mode_) setRun(run_, mode);
}

QString LayerTableModel::targetName(int target) const {
  if (target < 0 || target >= targetCount()) return {};
  return Q(table_.targets[static_cast<size_t>(target)]->target.ToString());
}

int LayerTableModel::targetIndex(const QString& target) const {
  for (int i = 0; i < targetCount(); ++i) {
    if (targetName(i) == target) return i;
  }
  return -1;
}

int LayerTableModel::rowOfNode(const QString& node) const {
  const auto it = table_.row_of_node.find(node.toStdString());
  return it == table_.row_of_node.end() ? -1 : it->second;
}

bool LayerTableModel::isNumeric(int column) {
  if (column == kRatioColumn) return true;
  if (column < kFixedColumns) return false;
  switch (metricOfColumn(column)) {
    case kKernel:
    case kBound:
    case kPrecision: return false;
    default: return true;
  }
}

Qt::SortOrder LayerTableModel::initialSortOrder(int column) {
  if (!isNumeric(column)) return Qt::AscendingOrder;
  if (column == kRatioColumn) return Qt::DescendingOrder;
  const Metric metric = metricOfColumn(column);
  return metric == kSqnr || metric == kCosine ? Qt::AscendingOrder : Qt::DescendingOrder;
}

double LayerTableModel::number(int row, int column) const {
  if (column == kRatioColumn) {
    if (row < 0 || row >= rowCount() || ratio_a_ < 0 || ratio_b_ < 0) return LayerCell::kNone;
    const LayerRow& r = table_.rows[static_cast<size_t>(row)];
    const double a = r.cells[static_cast<size_t>(ratio_a_)].p50_ms, b = r.cells[static_cast<size_t>(ratio_b_)].p50_ms;
    return Has(a) && Has(b) && a > 0 ? b / a : LayerCell::kNone;
  }
  const int t = targetOfColumn(column);
  if (row < 0 || row >= rowCount() || t < 0 || t >= targetCount()) return LayerCell::kNone;
  const LayerCell& c = table_.rows[static_cast<size_t>(row)].cells[static_cast<size_t>(t)];
  switch (metricOfColumn(column)) {
    case kP50: return c.p50_ms;
    case kP90: return c.p90_ms;
    case kShare: return c.share;
    case kFlops: return c.flops;
    case kBytes: return c.bytes;
    case kIntensity: return c.intensity;
    case kGflops: return c.gflops_per_s;
    case kGbs: return c.gb_per_s;
    case kSqnr: return c.sqnr_db;
    case kCosine: return c.cosine;
    case kEnergy: return c.energy_j;
    default: return LayerCell::kNone;
  }
}

QString LayerTableModel::text(int row, int column) const {
  if (row < 0 || row >= rowCount()) return {};
  const LayerRow& r = table_.rows[static_cast<size_t>(row)];
  if (column == kNameColumn) return r.key;
  if (column == kOpColumn) return r.op;
  const int t = targetOfColumn(column);
  if (t < 0 || t >= targetCount()) return {};
  const LayerCell& c = r.cells[static_cast<size_t>(t)];
  switch (metricOfColumn(column)) {
    case kKernel: return c.kernel;
    case kBound: return c.bound;
    case kPrecision:
      return c.fallback ? c.precision + QStringLiteral(" (fallback: ") + c.device + QStringLiteral(")") : c.precision;
    default: return {};
  }
}

QString LayerTableModel::metricName(Metric metric) {
  switch (metric) {
    case kKernel: return tr("kernel");
    case kP50: return tr("p50");
    case kP90: return tr("p90");
    case kShare: return tr("% of total");
    case kFlops: return tr("FLOPs");
    case kBytes: return tr("bytes");
    case kIntensity: return tr("FLOP/byte");
    case kGflops: return tr("GFLOP/s");
    case kGbs: return tr("GB/s");
    case kBound: return tr("bound");
    case kPrecision: return tr("precision");
    case kSqnr: return tr("drift SQNR dB");
    case kCosine: return tr("drift cosine");
    case kEnergy: return tr("energy");
    case kMetricCount: break;
  }
  return {};
}

QString LayerTableModel::metricToolTip(Metric metric) {
  switch (metric) {
    case kKernel:
      return tr(
          "The kernel that computes this node: its op and first ONNX node. A fused kernel covers "
          "several nodes; each of their rows shows the kernel's whole time, marked \"shared by N\".");
    case kP50:
      return tr(
          "Median device time of the kernel over the observed per-layer runs: on a node of a fused kernel, "
          "the whole kernel's time, \"shared by N\" nodes (a sum over rows counts it once). Per-layer timing "
          "adds a timer around each kernel; the end-to-end latency is measured without it.");
    case kP90: return tr("90th percentile of the per-layer device time over the observed runs.");
    case kShare:
      return tr(
          "This row's kernel's p50 over the sum of the target's layer p50 times (the nodes of a fused "
          "kernel show the same share: the kernel's).");
    case kFlops:
      return tr(
          "Floating-point (or integer) operations of the kernel, counted from the op and its shapes "
          "(multiply-add = 2).");
    case kBytes: return tr("Bytes the kernel reads and writes, from its tensors' shapes and types (no cache model).");
    case kIntensity: return tr("Arithmetic intensity: FLOPs over bytes read and written.");
    case kGflops: return tr("Achieved GFLOP/s: FLOPs over the p50 time.");
    case kGbs: return tr("Achieved GB/s: bytes over the p50 time.");
    case kBound:
      return tr(
          "Roofline verdict from the device's measured ceilings (Devices page): memory when "
          "the intensity is left of the ridge point, else compute.");
    case kPrecision:
      return tr("The precision the kernel ran in; a fallback ran on another device or the reference kernels.");
    case kSqnr:
      return tr(
          "Signal-to-quantisation-noise ratio of the kernel's output against the reference, in dB "
          "(higher is closer; under 30 dB is marked).");
    case kCosine: return tr("Cosine similarity of the kernel's output with the reference.");
    case kEnergy:
      return tr(
          "Energy per inference of the kernel: measured where a sensor was read, otherwise estimated "
          "from the device's power model (the source says which).");
    case kMetricCount: break;
  }
  return {};
}

int LayerTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.rows.size());
}

int LayerTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kFixedColumns + targetCount() * kMetricCount;
}

QString LayerTableModel::display(int row, int column) const {
  if (!isNumeric(column)) return text(row, column);
  const double v = number(row, column);
  if (!Has(v)) return {};
  if (column == kRatioColumn) return Q(formats::FormatSig(v)) + QStringLiteral("×");
  switch (metricOfColumn(column)) {
    case kP50: {
      // A fused kernel's whole time on each of its nodes, marked so no one adds the rows up.
      const LayerCell& c = table_.rows[static_cast<size_t>(row)].cells[static_cast<size_t>(targetOfColumn(column))];
      // Scaled like every chart and report ("17.4 µs", "3.20 ms"); sorting reads the raw number.
      const QString time = Q(formats::FormatDuration(v));
      return mode_ == LayerRowMode::kNodes && c.kernel_nodes > 1 ? tr("%1 (shared by %2)").arg(time).arg(c.kernel_nodes)
                                                                 : time;
    }
    case kP90: return Q(formats::FormatDuration(v));
    case kShare: return QString::number(v * 100, 'f', 1) + QStringLiteral(" %");
    case kFlops: return Q(formats::FormatSi(v));
    case kBytes: return Q(formats::FormatBytes(v));
    case kSqnr: return Q(formats::FormatSqnr(v));
    case kCosine: return QString::number(v, 'f', 5);
    case kEnergy: {
      const LayerCell& c = table_.rows[static_cast<size_t>(row)].cells[static_cast<size_t>(targetOfColumn(column))];
      return Q(formats::FormatEnergy(v)) + (c.energy_source.startsWith(QStringLiteral("measured"))
                                                ? QStringLiteral(" (measured)")
                                                : QStringLiteral(" (est.)"));
    }
    default: return Q(formats::FormatSig(v));
  }
}

QVariant LayerTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const LayerRow& row = table_.rows[static_cast<size_t>(index.row())];
  const int column = index.column();
  switch (role) {
    case Qt::DisplayRole: return display(index.row(), column);
    case RawRole:
      return isNumeric(column) ? QVariant(number(index.row(), column)) : QVariant(text(index.row(), column));
    case KeyRole: return row.key;
    case NodesRole: return row.nodes;
    case Qt::TextAlignmentRole: return isNumeric(column) ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    case Qt::ForegroundRole: {
      const int t = targetOfColumn(column);
      if (t < 0) return {};
      const LayerCell& c = row.cells[static_cast<size_t>(t)];
      if (c.fallback) return QColor(0xD0, 0x40, 0x30);  // readable on light and dark palettes
      // Dark text on the light shading of a low-drift cell, whatever the palette (dark themes too).
      if (metricOfColumn(column) == kSqnr && c.sqnr_db < 30) return QColor(0x20, 0x20, 0x20);
      return {};
    }
    case Qt::BackgroundRole: {
      const int t = targetOfColumn(column);
      if (t >= 0 && metricOfColumn(column) == kSqnr && row.cells[static_cast<size_t>(t)].sqnr_db < 30)
        return QColor(0xF8, 0xD7, 0xD3);
      return {};
    }
    case Qt::ToolTipRole: {
      if (column == kRatioColumn) return ratioToolTip();
      const int t = targetOfColumn(column);
      if (t < 0) return row.nodes.size() > 1 ? tr("ONNX nodes: %1").arg(row.nodes.join(QStringLiteral(", "))) : row.key;
      const LayerCell& c = row.cells[static_cast<size_t>(t)];
      if (!c.present) return tr("%1 has no kernel for this row").arg(targetName(t));
      QString tip = tr("%1: %2 on %3 (%4)").arg(targetName(t), c.kernel, c.device, c.implementation);
      if (c.kernel_nodes > 1) {
        tip += mode_ == LayerRowMode::kNodes
                   ? tr("\nshared by %1 ONNX nodes: the fused kernel's whole time, shown on each of its nodes "
                        "and counted once in any sum")
                         .arg(c.kernel_nodes)
                   : tr("\nfused kernel over %1 ONNX nodes").arg(c.kernel_nodes);
      }
      if (c.other_kernels_ms > 0) {
        tip += tr("\nplus %1 in %n other kernel(s) that touch this node (a reorder or copy; each has its own "
                  "kernel row)",
                  nullptr, static_cast<int>(c.kernels.size()) - 1)
                   .arg(Q(formats::FormatDuration(c.other_kernels_ms)));
      }
      if (c.fallback) tip += tr("\nfallback: ran off the target's device");
      if (metricOfColumn(column) == kEnergy && !c.energy_source.isEmpty())
        tip += tr("\nenergy: %1").arg(c.energy_source);
      return tip;
    }
    default: return {};
  }
}

QString LayerTableModel::ratioToolTip() const {
  if (ratio_a_ < 0 || ratio_b_ < 0) return tr("The p50 of one target over another's: pick \"A vs B\" above the table.");
  return tr("%1's p50 over %2's: above 1× the layer is slower on %1. Each a whole kernel's time.")
      .arg(targetName(ratio_b_), targetName(ratio_a_));
}

QVariant LayerTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
  if (role == Qt::DisplayRole) {
    if (section == kNameColumn) return mode_ == LayerRowMode::kNodes ? tr("ONNX node") : tr("kernel");
    if (section == kOpColumn) return tr("op");
    if (section == kRatioColumn) {
      return ratio_a_ < 0 || ratio_b_ < 0 ? tr("p50 ratio")
                                          : tr("%1 ÷ %2\np50").arg(targetName(ratio_b_), targetName(ratio_a_));
    }
    return targetName(targetOfColumn(section)) + QChar('\n') + metricName(metricOfColumn(section));
  }
  if (role == Qt::InitialSortOrderRole) return static_cast<int>(initialSortOrder(section));
  if (role == Qt::ToolTipRole) {
    if (section == kRatioColumn) return ratioToolTip();
    if (section == kNameColumn) {
      return mode_ == LayerRowMode::kNodes ? tr("The ONNX node; it stays in view when the table scrolls sideways.")
                                           : tr("The kernel; it stays in view when the table scrolls sideways.");
    }
    if (section < kFixedColumns) return {};
    return targetName(targetOfColumn(section)) + QStringLiteral(": ") + metricToolTip(metricOfColumn(section));
  }
  return {};
}

LayerFilterProxy::LayerFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(LayerTableModel::RawRole);
}

const LayerTableModel* LayerFilterProxy::table() const { return qobject_cast<const LayerTableModel*>(sourceModel()); }

void LayerFilterProxy::setTextFilter(const QString& text) {
  text_ = text.trimmed();
  invalidateRowsFilter();
}

void LayerFilterProxy::setOpFilter(const QString& op) {
  op_ = op;
  invalidateRowsFilter();
}

void LayerFilterProxy::setDeviceFilter(const QString& device) {
  device_ = device;
  invalidateRowsFilter();
}

void LayerFilterProxy::setBoundFilter(const QString& bound) {
  bound_ = bound;
  invalidateRowsFilter();
}

void LayerFilterProxy::setDriftBelow(int target, double db) {
  drift_target_ = target;
  drift_db_ = db;
  invalidateRowsFilter();
}

void LayerFilterProxy::setSlowerThan(int a, int b, double factor) {
  slower_a_ = a;
  slower_b_ = b;
  slower_factor_ = factor;
  invalidateRowsFilter();
}

void LayerFilterProxy::clearFilters() {
  text_.clear();
  op_.clear();
  device_.clear();
  bound_.clear();
  drift_target_ = slower_a_ = slower_b_ = -1;
  invalidateRowsFilter();
}

bool LayerFilterProxy::filterAcceptsRow(int source_row, const QModelIndex& /*source_parent*/) const {
  const LayerTableModel* model = table();
  if (model == nullptr) return true;
  const LayerRow& row = model->table().rows[static_cast<size_t>(source_row)];
  if (!op_.isEmpty() && row.op != op_) return false;
  if (!text_.isEmpty()) {
    bool found = row.key.contains(text_, Qt::CaseInsensitive) || row.op.contains(text_, Qt::CaseInsensitive);
    for (size_t t = 0; !found && t < row.cells.size(); ++t)
      found = row.cells[t].kernel.contains(text_, Qt::CaseInsensitive);
    if (!found) return false;
  }
  if (!device_.isEmpty() && std::none_of(row.cells.begin(), row.cells.end(),
                                         [&](const LayerCell& c) { return c.present && c.device == device_; }))
    return false;
  if (!bound_.isEmpty() && std::none_of(row.cells.begin(), row.cells.end(),
                                        [&](const LayerCell& c) { return c.present && c.bound == bound_; }))
    return false;
  const int n = static_cast<int>(row.cells.size());
  if (drift_target_ >= 0 && drift_target_ < n) {
    const double db = row.cells[static_cast<size_t>(drift_target_)].sqnr_db;
    if (!Has(db) || db >= drift_db_) return false;
  }
  if (slower_a_ >= 0 && slower_b_ >= 0 && slower_a_ < n && slower_b_ < n) {
    const double a = row.cells[static_cast<size_t>(slower_a_)].p50_ms;
    const double b = row.cells[static_cast<size_t>(slower_b_)].p50_ms;
    if (!Has(a) || !Has(b) || b <= 0 || a / b < slower_factor_) return false;
  }
  return true;
}

bool LayerFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const LayerTableModel* model = table();
  const int column = left.column();
  if (model == nullptr) return QSortFilterProxyModel::lessThan(left, right);
  if (LayerTableModel::isNumeric(column)) {
    const double a = model->number(left.row(), column), b = model->number(right.row(), column);
    // Absent values sort after every number, in both directions.
    const bool descending = sortOrder() == Qt::DescendingOrder;
    if (!Has(a) || !Has(b)) {
      if (Has(a) != Has(b)) return Has(a) != descending;
    } else if (a != b) {
      return a < b;
    }
    // Ties (the nodes of one fused kernel share its time) keep model order in both directions, so the
    // kernel's first node leads its group however the table was sorted before.
    return descending ? left.row() > right.row() : left.row() < right.row();
  }
  return QString::localeAwareCompare(model->text(left.row(), column), model->text(right.row(), column)) < 0;
}

// What ran for a layer on one side, for the same-kernel rule.
LayerKernelTiming KernelOf(const LayerCell& c) {
  LayerKernelTiming k;
  k.implementation = c.implementation.toStdString();
  k.precision = c.precision.toStdString();
  k.device = c.device.toStdString();
  k.nodes = c.kernel_nodes;
  k.p50_ms = c.p50_ms;
  k.p90_ms = c.p90_ms;
  return k;
}

}  // namespace chipfit
