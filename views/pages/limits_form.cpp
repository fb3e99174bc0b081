// LimitsForm: the form's controls, their tooltips, and the two-way binding to the LimitsModel.
#include "views/pages/limits_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QLabel>
#include <utility>

#include "views/models/limits_model.h"

namespace chipfit {
namespace {

QDoubleSpinBox* LimitSpin(const QString& name, double minimum, double maximum, int decimals, const QString& suffix,
                          QWidget* parent) {
  auto* box = new QDoubleSpinBox(parent);
  box->setObjectName(name);
  box->setDecimals(decimals);
  box->setRange(minimum, maximum);
  box->setSuffix(suffix);
  box->setGroupSeparatorShown(true);
  box->setEnabled(false);  // until its limit is ticked
  return box;
}

QCheckBox* LimitCheck(const QString& name, const QString& text, const QString& tip, QWidget* parent) {
  auto* box = new QCheckBox(text, parent);
  box->setObjectName(name);
  box->setToolTip(tip);
  return box;
}

}  // namespace

LimitsForm::LimitsForm(LimitsModel* model, QWidget* parent)
    : QGroupBox(tr("Limits and objective"), parent), model_(model) {
  setObjectName(QStringLiteral("limitsForm"));
  setToolTip(
      tr("One set of limits per model: the Targets and Recommend pages show the same ones, saved with the "
         "model's settings and recorded in every report. A change re-ranks the open run from the figures "
         "it measured; nothing is profiled again."));
  build();
  fromModel();
  connect(model_, &LimitsModel::changed, this, &LimitsForm::fromModel);
}

void LimitsForm::build() {
  const QString latency_tip =
      tr("Bounds each target's end-to-end latency at this statistic (p50, p90 or p99 of the timed whole-model runs "
         "after warm-up, without per-layer instrumentation). With a latency limit the ranking uses the same "
         "statistic; without one, targets rank by p50. A projected target (hardware not measured here) meets it only "
         "by the P90 of its error band, and ranks by its median.");
  max_latency_on_ = LimitCheck(QStringLiteral("maxLatencyOn"), tr("Max latency"), latency_tip, this);
  max_latency_ = LimitSpin(QStringLiteral("maxLatency"), 0.0001, 1e6, 4, tr(" ms"), this);
  max_latency_->setToolTip(latency_tip);
  latency_stat_ = new QComboBox(this);
  latency_stat_->setObjectName(QStringLiteral("latencyStat"));
  for (const char* stat : {"p50", "p90", "p99"}) latency_stat_->addItem(QLatin1String(stat), QLatin1String(stat));
  latency_stat_->setToolTip(latency_tip);

  const QString top1_tip =
      tr("Bounds top-1 agreement with the reference: the share of rows whose arg-max class matches the reference "
         "run's on the same drift inputs. On a model without class scores, the worst output's task agreement "
         "(sequence or map IoU). Not measured on a model with neither: the limit then rejects every target.");
  min_top1_on_ = LimitCheck(QStringLiteral("minTop1On"), tr("Min top-1 / task agreement"), top1_tip, this);
  min_top1_ = LimitSpin(QStringLiteral("minTop1"), 0, 100, 2, tr(" %"), this);
  min_top1_->setToolTip(top1_tip);

  const QString sqnr_tip =
      tr("Bounds the worst graph output's SQNR against the reference run on the same inputs: 10·log10(Σr² / "
         "Σ(a−r)²), 200 dB when identical. The inputs are the run's data, or seeded random tensors.");
  min_sqnr_on_ = LimitCheck(QStringLiteral("minSqnrOn"), tr("Min output SQNR"), sqnr_tip, this);
  min_sqnr_ = LimitSpin(QStringLiteral("minSqnr"), -200, 200, 1, tr(" dB"), this);
  min_sqnr_->setToolTip(sqnr_tip);

  const QString memory_tip =
      tr("Bounds the planned peak memory, in MiB: the activation arenas after the planner reuses buffers, plus "
         "the device arena and the weights. Planned, not the heap's measured high-water mark.");
  max_memory_on_ = LimitCheck(QStringLiteral("maxMemoryOn"), tr("Max memory"), memory_tip, this);
  max_memory_ = LimitSpin(QStringLiteral("maxMemory"), 0.001, 1e8, 3, tr(" MiB"), this);
  max_memory_->setToolTip(memory_tip);

  const QString energy_tip =
      tr("Bounds energy per inference, in mJ: measured by a sensor (RAPL, hwmon, NVML) where the run found one, "
         "otherwise ESTIMATED by the energy model from each layer's operations, bytes moved and time. The table "
         "and the chart say which.");
  max_energy_on_ = LimitCheck(QStringLiteral("maxEnergyOn"), tr("Max energy"), energy_tip, this);
  max_energy_ = LimitSpin(QStringLiteral("maxEnergy"), 0.0001, 1e6, 4, tr(" mJ"), this);
  max_energy_->setToolTip(energy_tip);

  objective_ = new QComboBox(this);
  objective_->setObjectName(QStringLiteral("objective"));
  objective_->addItem(tr("Latency"), QStringLiteral("latency"));
  objective_->addItem(tr("Energy per inference"), QStringLiteral("energy"));
  objective_->addItem(tr("Cost per million inferences"), QStringLiteral("cost"));
  objective_->setToolTip(
      tr("How the targets within every limit are ranked: latency (p50, or the latency limit's statistic), energy "
         "per inference, or cost per million inferences (the device's $/hour from the cost table × p50)"));

  accuracy_guard_ = new QCheckBox(tr("Accuracy guard"), this);
  accuracy_guard_->setObjectName(QStringLiteral("accuracyGuard"));
  accuracy_guard_->setToolTip(
      tr("Without an accuracy limit, reject targets under 99 % task agreement (or 20 dB output SQNR where no output "
         "has a task metric) and int8 calibrated on random data. An accuracy limit replaces it."));

  auto* grid = new QGridLayout(this);
  int row = 0;
  grid->addWidget(max_latency_on_, row, 0);
  grid->addWidget(max_latency_, row, 1);
  grid->addWidget(latency_stat_, row++, 2);
  for (auto [check, spin] : {std::pair{min_top1_on_, min_top1_}, std::pair{min_sqnr_on_, min_sqnr_},
                             std::pair{max_memory_on_, max_memory_}, std::pair{max_energy_on_, max_energy_}}) {
    grid->addWidget(check, row, 0);
    grid->addWidget(spin, row++, 1, 1, 2);
  }
  grid->addWidget(new QLabel(tr("Objective"), this), row, 0);
  grid->addWidget(objective_, row++, 1, 1, 2);
  grid->addWidget(accuracy_guard_, row++, 0, 1, 3);
  grid->setColumnStretch(1, 1);

  for (QCheckBox* check :
       {max_latency_on_, min_top1_on_, min_sqnr_on_, max_memory_on_, max_energy_on_, accuracy_guard_}) {
    connect(check, &QCheckBox::toggled, this, &LimitsForm::toModel);
  }
  for (QDoubleSpinBox* spin : {max_latency_, min_top1_, min_sqnr_, max_memory_, max_energy_}) {
    connect(spin, &QDoubleSpinBox::valueChanged, this, &LimitsForm::toModel);
  }
  connect(latency_stat_, &QComboBox::currentIndexChanged, this, &LimitsForm::toModel);
  connect(objective_, &QComboBox::currentIndexChanged, this, &LimitsForm::toModel);
}

void LimitsForm::updateEnabled() {
  max_latency_->setEnabled(max_latency_on_->isChecked());
  latency_stat_->setEnabled(max_latency_on_->isChecked());
  min_top1_->setEnabled(min_top1_on_->isChecked());
  min_sqnr_->setEnabled(min_sqnr_on_->isChecked());
  max_memory_->setEnabled(max_memory_on_->isChecked());
  max_energy_->setEnabled(max_energy_on_->isChecked());
  // The guard stands in for accuracy limits: with one ticked it does nothing, and the box says so by greying.
  accuracy_guard_->setEnabled(!min_top1_on_->isChecked() && !min_sqnr_on_->isChecked());
}

void LimitsForm::fromModel() {
  applying_ = true;
  const LimitsState& s = model_->state();
  auto set = [](QCheckBox* check, QDoubleSpinBox* spin, const LimitsState::Bound& b) {
    check->setChecked(b.on);
    spin->setValue(b.value);
  };
  set(max_latency_on_, max_latency_, s.max_latency_ms);
  set(min_top1_on_, min_top1_, s.min_top1_percent);
  set(min_sqnr_on_, min_sqnr_, s.min_sqnr_db);
  set(max_memory_on_, max_memory_, s.max_memory_mb);
  set(max_energy_on_, max_energy_, s.max_energy_mj);
  if (const int i = latency_stat_->findData(s.latency_stat); i >= 0) latency_stat_->setCurrentIndex(i);
  if (const int i = objective_->findData(s.objective); i >= 0) objective_->setCurrentIndex(i);
  accuracy_guard_->setChecked(s.accuracy_guard);
  updateEnabled();
  applying_ = false;
}

void LimitsForm::toModel() {
  updateEnabled();
  if (applying_) return;
  LimitsState s;
  s.max_latency_ms = {max_latency_on_->isChecked(), max_latency_->value()};
  s.latency_stat = latency_stat_->currentData().toString();
  s.min_top1_percent = {min_top1_on_->isChecked(), min_top1_->value()};
  s.min_sqnr_db = {min_sqnr_on_->isChecked(), min_sqnr_->value()};
  s.max_memory_mb = {max_memory_on_->isChecked(), max_memory_->value()};
  s.max_energy_mj = {max_energy_on_->isChecked(), max_energy_->value()};
  s.objective = objective_->currentData().toString();
  s.accuracy_guard = accuracy_guard_->isChecked();
  model_->setState(s);
}

}  // namespace chipfit
