// The layer × target heat map over the layer table's rows.
#include "views/models/heat_map_model.h"

#include <algorithm>
#include <cmath>

#include "views/charts/formats.h"

namespace chipfit {

HeatMapModel::HeatMapModel(const LayerTableModel* layers, QObject* parent)
    : QAbstractTableModel(parent), layers_(layers) {
  // Follow the layer table: a new run or mode is a new heat map.
  connect(layers_, &QAbstractItemModel::modelAboutToBeReset, this, [this] { beginResetModel(); });
  connect(layers_, &QAbstractItemModel::modelReset, this, [this] { endResetModel(); });
}

void HeatMapModel::setMeasure(Measure measure) {
  if (measure == measure_) return;
  measure_ = measure;
  if (rowCount() > 0 && columnCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
  emit headerDataChanged(Qt::Horizontal, 0, std::max(columnCount() - 1, 0));
}

int HeatMapModel::baseline() const {
  const int fp32 = layers_->targetIndex(QStringLiteral("cpu:fp32"));
  return fp32 >= 0 ? fp32 : (layers_->targetCount() > 0 ? 0 : -1);
}

double HeatMapModel::value(int row, int target) const {
  const auto& rows = layers_->table().rows;
  if (row < 0 || row >= static_cast<int>(rows.size()) || target < 0 || target >= layers_->targetCount())
    return LayerCell::kNone;
  const LayerRow& r = rows[static_cast<size_t>(row)];
  const LayerCell& c = r.cells[static_cast<size_t>(target)];
  if (measure_ == Measure::kDrift) return c.sqnr_db;
  const int base = baseline();
  if (base < 0) return LayerCell::kNone;
  const LayerCell& b = r.cells[static_cast<size_t>(base)];
  const double v = measure_ == Measure::kTime ? c.p50_ms : c.energy_j;
  const double bv = measure_ == Measure::kTime ? b.p50_ms : b.energy_j;
  if (!std::isfinite(v) || !std::isfinite(bv) || bv <= 0) return LayerCell::kNone;
  return v / bv;
}

LayerJudgement HeatMapModel::judgement(int row, int target) const {
  const auto& rows = layers_->table().rows;
  const int base = baseline();
  if (measure_ != Measure::kTime || row < 0 || row >= static_cast<int>(rows.size()) || target < 0 ||
      target >= layers_->targetCount() || base < 0 || target == base)
    return {};
  const LayerRow& r = rows[static_cast<size_t>(row)];
  const LayerCell& c = r.cells[static_cast<size_t>(target)];
  const LayerCell& b = r.cells[static_cast<size_t>(base)];
  if (!c.present || !b.present) return {};
  return JudgeLayer(KernelOf(b), KernelOf(c));
}

QColor HeatMapModel::cellColour(int row, int target) const {
  if (judgement(row, target).verdict == LayerVerdict::kSameKernel) return colour(1.0);
  return colour(value(row, target));
}

QColor HeatMapModel::colour(double v) const {
  if (!std::isfinite(v)) return QColor(0xEE, 0xEE, 0xEE);
  double t = 0;  // -1 best … +1 worst
  if (measure_ == Measure::kDrift) {
    t = std::clamp((60.0 - std::min(v, 90.0)) / 30.0, -1.0, 1.0);  // 30 dB → worst, 90 dB and up → best
  } else {
    t = std::clamp(std::log2(std::max(v, 1e-9)) / 2.0, -1.0, 1.0);  // 4× slower → worst, 4× faster → best
  }
  const QColor good(0x2E, 0x9E, 0x5B), bad(0xD6, 0x45, 0x3D), neutral(0xFA, 0xFA, 0xFA);
  const QColor& end = t < 0 ? good : bad;
  const double a = std::abs(t);
  return QColor::fromRgbF(static_cast<float>(neutral.redF() + (end.redF() - neutral.redF()) * a),
                          static_cast<float>(neutral.greenF() + (end.greenF() - neutral.greenF()) * a),
                          static_cast<float>(neutral.blueF() + (end.blueF() - neutral.blueF()) * a));
}

int HeatMapModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : layers_->rowCount(); }

int HeatMapModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 1 + layers_->targetCount();
}

QVariant HeatMapModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const LayerRow& row = layers_->table().rows[static_cast<size_t>(index.row())];
  if (role == KeyRole) return row.key;
  if (index.column() == 0) {
    if (role == Qt::DisplayRole || role == RawRole) return row.key;
    if (role == Qt::ToolTipRole) return row.op;
    return {};
  }
  const int target = index.column() - 1;
  const double v = value(index.row(), target);
  const bool same_kernel = judgement(index.row(), target).verdict == LayerVerdict::kSameKernel;
  switch (role) {
    case Qt::DisplayRole:
      if (!std::isfinite(v)) return {};
      if (measure_ == Measure::kDrift) return QString::fromStdString(formats::FormatSqnr(v));
      return QString::number(v, 'f', 2) + QChar(0x00D7) + (same_kernel ? tr(" same kernel") : QString());
    case RawRole: return v;
    case Qt::BackgroundRole: return cellColour(index.row(), target);
    case Qt::ForegroundRole:
      return QColor(0x20, 0x20, 0x20);  // the cells carry their own light colours, whatever the palette
    case Qt::TextAlignmentRole: return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
      if (measure_ == Measure::kDrift)
        return tr("%1 on %2: output SQNR against the reference").arg(row.key, layers_->targetName(target));
      if (same_kernel) {
        const LayerCell& c = row.cells[static_cast<size_t>(target)];
        return tr("%1: the same kernel (%2, %3 on %4) on %5 and %6; its times differ by no more than noise "
                  "(%7 %: both sides' p90 − p50 spread, at least %8 %), so neither target is faster here")
            .arg(row.key, c.implementation, c.precision, c.device, layers_->targetName(target),
                 layers_->targetName(baseline()))
            .arg(judgement(index.row(), target).change.threshold * 100, 0, 'f', 0)
            .arg(kSameKernelMinChange * 100, 0, 'f', 0);
      }
      return tr("%1 on %2 over %3 (%4, each the whole time of the kernel that computes the node): below 1× "
                "this target is faster/cheaper for this layer")
          .arg(row.key, layers_->targetName(target), layers_->targetName(baseline()),
               measure_ == Measure::kTime ? tr("p50 time") : tr("energy"));
    default: return {};
  }
}

QVariant HeatMapModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == 0) return tr("layer");
  const QString name = layers_->targetName(section - 1);
  if (measure_ == Measure::kDrift) return name + tr("\nSQNR");
  return name + tr("\n÷ %1").arg(layers_->targetName(baseline()));
}

}  // namespace chipfit
