// TargetsPage: layout, the ProfileOptions it fills, and the per-model settings in QSettings.
#include "views/pages/targets_page.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QThread>
#include <QVBoxLayout>
#include <algorithm>
#include <utility>

#include "core/quant/calibration.h"
#include "views/charts/formats.h"
#include "views/models/limits_model.h"
#include "views/pages/limits_form.h"

namespace chipfit {
namespace {

const QString kTargetsKey = QStringLiteral("targets");
const QString kProjectHardwareKey = QStringLiteral("projectHardware");
const QString kProjectFilesKey = QStringLiteral("projectFiles");
const QColor kErrorColor(0xb0, 0x00, 0x20);  // the other pages' error red

QString ToQString(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())); }

QString SettingsGroup(const QString& model_key) { return QStringLiteral("models/") + model_key; }

// Grey, wrapped, small: explains a control without competing with it. The placeholder colour, not a
// disabled label: disabled text is too pale to read, and these lines say things users need.
QLabel* HintLabel(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  QPalette palette = label->palette();
  palette.setColor(QPalette::WindowText, palette.color(QPalette::PlaceholderText));
  label->setPalette(palette);
  QFont font = label->font();
  font.setPointSizeF(font.pointSizeF() * 0.9);
  label->setFont(font);
  return label;
}

// Red, wrapped, selectable, hidden while empty: the other pages' error line.
QLabel* ErrorLabel(const QString& name, QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setObjectName(name);
  label->setWordWrap(true);
  label->setTextFormat(Qt::PlainText);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QPalette palette = label->palette();
  palette.setColor(QPalette::WindowText, kErrorColor);
  label->setPalette(palette);
  label->hide();
  return label;
}

QString Short(double value) { return ToQString(formats::FormatShort(value, 3)); }

// 8100 GFLOP/s at fp32 → "8.1 TFLOP/s"; int8 counts operations, not floating-point ones.
QString PeakText(Precision precision, double gflops) {
  const bool integer = precision == Precision::kInt8;
  if (gflops >= 1000) return Short(gflops / 1000) + (integer ? QStringLiteral(" TOP/s") : QStringLiteral(" TFLOP/s"));
  return Short(gflops) + (integer ? QStringLiteral(" GOP/s") : QStringLiteral(" GFLOP/s"));
}

// "NVIDIA T4 (t4)": what the user knows the device by, and the id the CLI takes.
QString HardwareLabel(const HardwareSpec& spec) {
  return QStringLiteral("%1 (%2)").arg(ToQString(spec.name), ToQString(spec.id));
}

// The device's headline figures and where each comes from, as rich text (Qt wraps it).
QString HardwareToolTip(const HardwareSpec& spec) {
  const auto esc = [](const std::string& text) { return ToQString(text).toHtmlEscaped(); };
  QStringList peaks;
  for (const auto& [precision, gflops] : spec.peak_gflops) {
    peaks << QStringLiteral("%1 %2").arg(ToQString(PrecisionName(precision)), PeakText(precision, gflops));
  }
  QString html = QStringLiteral("<p><b>%1</b> — %2 %3</p>").arg(esc(spec.name), esc(spec.vendor), esc(spec.kind));
  html += QStringLiteral("<p>");
  html += TargetsPage::tr("Dense peaks: %1").arg(peaks.join(QStringLiteral(", ")).toHtmlEscaped());
  html += QStringLiteral("<br>") +
          TargetsPage::tr("Memory: %1 GB at %2 GB/s").arg(Short(spec.memory_gb), Short(spec.memory_bandwidth_gbs));
  if (spec.on_chip_memory_mb) {
    html += TargetsPage::tr("; %1 MB on chip").arg(Short(*spec.on_chip_memory_mb));
  }
  html +=
      QStringLiteral("<br>") + TargetsPage::tr("Power: %1 W TDP, %2 W idle").arg(Short(spec.tdp_w), Short(spec.idle_w));
  html += QStringLiteral("<br>") + (spec.price_per_hour_usd
                                        ? TargetsPage::tr("Price: $%1 per hour").arg(Short(*spec.price_per_hour_usd))
                                        : TargetsPage::tr("Price: none listed (no cost per inference)"));
  html += QStringLiteral("</p><p><i>");
  html += TargetsPage::tr("Figures from chipfit's hardware catalog (%1); each has a source and a date there:")
              .arg(QFileInfo(ToQString(spec.file)).fileName().toHtmlEscaped());
  html += QStringLiteral("</i></p><ul>");
  for (const std::string& key : HardwareFigureKeys()) {
    const bool shown = key.rfind("peak_gflops.", 0) == 0 || key == "memory_bandwidth_gbs" || key == "memory_gb" ||
                       key == "tdp_w" || key == "price_per_hour_usd";
    const auto it = spec.sources.find(key);
    if (!shown || it == spec.sources.end()) continue;
    html += QStringLiteral("<li>%1: %2 (%3)</li>").arg(esc(key), esc(it->second.source), esc(it->second.date));
  }
  html += QStringLiteral("</ul><p>");
  html += TargetsPage::tr("Projected, not measured: a median with a P10–P90 band, energy estimated.");
  html += QStringLiteral("</p>");
  return html;
}

QSpinBox* SpinBox(const QString& name, int minimum, int maximum, int value, QWidget* parent) {
  auto* box = new QSpinBox(parent);
  box->setObjectName(name);
  box->setRange(minimum, maximum);
  box->setValue(value);
  box->setGroupSeparatorShown(true);
  return box;
}

QDoubleSpinBox* DoubleSpinBox(const QString& name, double maximum, int decimals, const QString& suffix,
                              QWidget* parent) {
  auto* box = new QDoubleSpinBox(parent);
  box->setObjectName(name);
  box->setDecimals(decimals);
  box->setRange(0, maximum);
  box->setSuffix(suffix);
  box->setGroupSeparatorShown(true);
  return box;
}

QComboBox* Combo(const QString& name, const std::vector<std::pair<QString, QString>>& items, QWidget* parent) {
  auto* combo = new QComboBox(parent);
  combo->setObjectName(name);
  for (const auto& [text, data] : items) combo->addItem(text, data);
  return combo;
}

QVariant FieldValue(const QWidget* widget) {
  if (const auto* spin = qobject_cast<const QSpinBox*>(widget)) return spin->value();
  if (const auto* spin = qobject_cast<const QDoubleSpinBox*>(widget)) return spin->value();
  if (const auto* combo = qobject_cast<const QComboBox*>(widget)) return combo->currentData();
  if (const auto* edit = qobject_cast<const QLineEdit*>(widget)) return edit->text();
  return {};
}

// A value that does not fit (hand-edited file, a combo entry since removed) leaves the control as is.
void SetFieldValue(QWidget* widget, const QVariant& value) {
  bool ok = false;
  if (auto* spin = qobject_cast<QSpinBox*>(widget)) {
    const int number = value.toInt(&ok);
    if (ok) spin->setValue(number);
  } else if (auto* spin = qobject_cast<QDoubleSpinBox*>(widget)) {
    const double number = value.toDouble(&ok);
    if (ok) spin->setValue(number);
  } else if (auto* combo = qobject_cast<QComboBox*>(widget)) {
    const int index = combo->findData(value.toString());
    if (index >= 0) combo->setCurrentIndex(index);
  } else if (auto* edit = qobject_cast<QLineEdit*>(widget)) {
    edit->setText(value.toString());
  }
}

std::vector<Target> ParseTargets(const QStringList& texts) {
  std::vector<Target> targets;
  for (const QString& text : texts) {
    auto target = ParseTarget(text.toStdString());
    if (target.ok()) targets.push_back(*target);
  }
  return targets;
}

// Puts the check box in the middle of its cell, under the centred precision header where the eye
// scans a column, and lets a click anywhere in the cell toggle it: the cell is the target.
class CenteredCheckDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;

  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    if (!(opt.features & QStyleOptionViewItem::HasCheckIndicator)) {
      QStyledItemDelegate::paint(painter, option, index);
      return;
    }
    const QWidget* widget = option.widget;
    QStyle* style = widget ? widget->style() : QApplication::style();
    opt.features &= ~QStyleOptionViewItem::HasCheckIndicator;
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);  // background and focus only

    QStyleOptionViewItem check = opt;
    check.rect = QStyle::alignedRect(opt.direction, Qt::AlignCenter,
                                     QSize(style->pixelMetric(QStyle::PM_IndicatorWidth, &opt, widget),
                                           style->pixelMetric(QStyle::PM_IndicatorHeight, &opt, widget)),
                                     opt.rect);
    check.state &= ~QStyle::State_HasFocus;
    check.state |= opt.checkState == Qt::Checked ? QStyle::State_On : QStyle::State_Off;
    style->drawPrimitive(QStyle::PE_IndicatorItemViewItemCheck, &check, painter, widget);
  }

  bool editorEvent(QEvent* event, QAbstractItemModel* model, const QStyleOptionViewItem& /*option*/,
                   const QModelIndex& index) override {
    const Qt::ItemFlags flags = model->flags(index);
    if (!(flags & Qt::ItemIsUserCheckable) || !(flags & Qt::ItemIsEnabled)) return false;
    switch (event->type()) {
      case QEvent::MouseButtonPress:
      case QEvent::MouseButtonDblClick:
        // Taken, so the view does not start anything else; the release toggles.
        return static_cast<QMouseEvent*>(event)->button() == Qt::LeftButton;
      case QEvent::MouseButtonRelease:
        if (static_cast<QMouseEvent*>(event)->button() != Qt::LeftButton) return false;
        break;
      case QEvent::KeyPress: {
        const int key = static_cast<QKeyEvent*>(event)->key();
        if (key != Qt::Key_Space && key != Qt::Key_Select) return false;
        break;
      }
      default: return false;
    }
    const bool checked = index.data(Qt::CheckStateRole).toInt() == Qt::Checked;
    return model->setData(index, checked ? Qt::Unchecked : Qt::Checked, Qt::CheckStateRole);
  }
};

}  // namespace

TargetsPage::TargetsPage(LimitsModel* limits, QWidget* parent)
    : QWidget(parent),
      matrix_(new TargetMatrixModel(this)),
      limits_(limits != nullptr ? limits : new LimitsModel(this)) {
  connect(limits_, &LimitsModel::changed, this, &TargetsPage::optionsChanged);
  auto* columns = new QHBoxLayout;
  columns->addWidget(buildRunSettings(), 1);
  columns->addWidget(buildLimits(), 1);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(buildMatrix());
  layout->addLayout(columns);
  layout->addWidget(buildProjection());
  layout->addStretch(1);

  // Built once, in this order; the value each control starts with is the default a new model gets.
  for (QWidget* widget : std::initializer_list<QWidget*>{iterations_, warmup_, min_time_, data_dir_, calibration_,
                                                         int8_layers_, drift_samples_}) {
    fields_.push_back({widget, FieldValue(widget)});
  }
  watchEdits();
  updateCount();
  fitMatrixHeight();
  loadHardwareCatalog(DefaultHardwareDir());
}

QWidget* TargetsPage::buildMatrix() {
  auto* box = new QGroupBox(tr("Targets"), this);
  matrix_view_ = new QTableView(box);
  matrix_view_->setObjectName(QStringLiteral("targetMatrix"));
  matrix_view_->setModel(matrix_);
  matrix_view_->setSelectionMode(QAbstractItemView::NoSelection);
  matrix_view_->setEditTriggers(QAbstractItemView::NoEditTriggers);  // the check box toggles; nothing else edits
  matrix_view_->setWordWrap(false);
  matrix_view_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  matrix_view_->verticalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  matrix_view_->setItemDelegate(new CenteredCheckDelegate(matrix_view_));
  // A machine has a handful of devices: show them all (fitMatrixHeight) instead of a scrolled strip.
  matrix_view_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  matrix_view_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  matrix_view_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);

  auto* all = new QPushButton(tr("All"), box);
  all->setObjectName(QStringLiteral("checkAll"));
  all->setToolTip(tr("Tick every supported target"));
  auto* none = new QPushButton(tr("None"), box);
  none->setObjectName(QStringLiteral("checkNone"));
  none->setToolTip(tr("Untick every target"));
  connect(all, &QPushButton::clicked, this, [this] { matrix_->setAllChecked(true); });
  connect(none, &QPushButton::clicked, this, [this] { matrix_->setAllChecked(false); });
  count_label_ = new QLabel(box);
  count_label_->setObjectName(QStringLiteral("targetCount"));

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(all);
  buttons->addWidget(none);
  buttons->addSpacing(12);
  buttons->addWidget(count_label_, 1);

  auto* layout = new QVBoxLayout(box);
  layout->addWidget(
      HintLabel(tr("Unticked targets are skipped; greyed cells are unsupported — hover for the reason."), box));
  layout->addWidget(matrix_view_);
  layout->addLayout(buttons);
  connect(matrix_, &TargetMatrixModel::checkedTargetsChanged, this, &TargetsPage::onMatrixChanged);
  return box;
}

QWidget* TargetsPage::buildRunSettings() {
  const ProfileOptions defaults;
  auto* box = new QGroupBox(tr("Run settings"), this);
  iterations_ = SpinBox(QStringLiteral("iterations"), 1, 1'000'000, defaults.iterations, box);
  iterations_->setToolTip(tr("Timed runs per target, at least; more when the minimum time is not reached"));
  warmup_ = SpinBox(QStringLiteral("warmup"), 0, 100'000, defaults.warmup, box);
  warmup_->setToolTip(tr("Untimed runs before timing: caches, clocks and lazy allocations settle"));
  min_time_ = DoubleSpinBox(QStringLiteral("minTime"), 3600, 2, tr(" s"), box);
  min_time_->setSingleStep(0.5);
  min_time_->setValue(defaults.min_time_s);
  min_time_->setToolTip(tr("Keep timing until this much time has passed, even after the iterations"));
  calibration_ = Combo(QStringLiteral("calibration"),
                       {{tr("MinMax"), ToQString(CalibrationMethodName(CalibrationMethod::kMinMax))},
                        {tr("Entropy (KL)"), ToQString(CalibrationMethodName(CalibrationMethod::kEntropy))},
                        {tr("Percentile (99.99)"), ToQString(CalibrationMethodName(CalibrationMethod::kPercentile))}},
                       box);
  calibration_->setCurrentIndex(calibration_->findData(ToQString(CalibrationMethodName(defaults.calibration))));
  calibration_->setToolTip(tr("How int8 targets choose activation ranges from the calibration data"));
  int8_layers_ = Combo(QStringLiteral("int8Layers"),
                       {{tr("Where int8 is faster here"), QStringLiteral("faster")},
                        {tr("Every eligible layer"), QStringLiteral("all")}},
                       box);
  int8_layers_->setCurrentIndex(
      int8_layers_->findData(defaults.int8_all_layers ? QStringLiteral("all") : QStringLiteral("faster")));
  int8_layers_->setToolTip(
      tr("int8 and bf16 targets time each layer in their precision and in fp32 when compiling and keep fp32 "
         "where the low precision is no faster; 'Every eligible layer' runs them all in int8 (bf16)"));
  drift_samples_ = SpinBox(QStringLiteral("driftSamples"), 1, 10'000, defaults.drift_samples, box);
  drift_samples_->setToolTip(tr("Inputs compared against the reference for accuracy drift"));

  auto* form = new QFormLayout(box);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->addRow(tr("Iterations:"), iterations_);
  form->addRow(tr("Warm-up:"), warmup_);
  form->addRow(tr("Min time:"), min_time_);
  form->addRow(tr("Data folder:"), buildDataDir());
  form->addRow(tr("INT8 calibration:"), calibration_);
  form->addRow(tr("INT8 layers:"), int8_layers_);
  form->addRow(tr("Drift samples:"), drift_samples_);
  return box;
}

QWidget* TargetsPage::buildDataDir() {
  auto* holder = new QWidget(this);
  data_dir_ = new QLineEdit(holder);
  data_dir_->setObjectName(QStringLiteral("dataDir"));
  data_dir_->setPlaceholderText(tr("seeded random inputs"));
  data_dir_->setClearButtonEnabled(true);
  // Room for the placeholder at least: squeezed to "seed…" it no longer says what empty means.
  data_dir_->setMinimumWidth(data_dir_->fontMetrics().horizontalAdvance(data_dir_->placeholderText()) + 48);
  auto* browse = new QPushButton(tr("Browse…"), holder);
  browse->setObjectName(QStringLiteral("browseDataDir"));
  connect(browse, &QPushButton::clicked, this, &TargetsPage::browseDataDir);

  auto* row = new QHBoxLayout;
  row->addWidget(data_dir_, 1);
  row->addWidget(browse);
  auto* layout = new QVBoxLayout(holder);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(row);
  layout->addWidget(HintLabel(tr("One .npy file per model input, for calibration, timing and drift. "
                                 "Empty: seeded random inputs, and the results say so."),
                              holder));
  return holder;
}

QWidget* TargetsPage::buildLimits() {
  auto* holder = new QWidget(this);
  auto* layout = new QVBoxLayout(holder);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(new LimitsForm(limits_, holder));
  layout->addWidget(HintLabel(tr("The Recommend page shows these same limits. Targets that break a limit are listed "
                                 "there with the limit and by how much."),
                              holder));
  layout->addStretch(1);
  return holder;
}

QWidget* TargetsPage::buildProjection() {
  auto* box = new QGroupBox(tr("Projected hardware (not measured here)"), this);
  box->setObjectName(QStringLiteral("projectedHardware"));
  catalog_status_ = ErrorLabel(QStringLiteral("catalogStatus"), box);
  catalog_grid_ = new QGridLayout;
  catalog_grid_->setHorizontalSpacing(16);
  catalog_grid_->setVerticalSpacing(0);  // the page fits a 1280×800 window with a file listed and an error shown

  auto* add = new QPushButton(tr("Add device file…"), box);
  add->setObjectName(QStringLiteral("addHardwareFile"));
  add->setToolTip(
      tr("A device of your own, described in a YAML file with the catalog's keys (resources/hardware/README.md)"));
  connect(add, &QPushButton::clicked, this, &TargetsPage::browseHardwareFile);
  remove_file_ = new QPushButton(tr("Remove"), box);
  remove_file_->setObjectName(QStringLiteral("removeHardwareFile"));
  remove_file_->setToolTip(tr("Stop projecting onto the selected device file"));
  remove_file_->setEnabled(false);
  projection_summary_ = new QLabel(box);
  projection_summary_->setObjectName(QStringLiteral("projectionSummary"));
  projection_summary_->setWordWrap(true);

  files_list_ = new QListWidget(box);
  files_list_->setObjectName(QStringLiteral("hardwareFiles"));
  files_list_->setSelectionMode(QAbstractItemView::SingleSelection);
  files_list_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  files_list_->hide();  // shown once a file is added
  connect(files_list_, &QListWidget::itemSelectionChanged, this,
          [this] { remove_file_->setEnabled(!files_list_->selectedItems().isEmpty()); });
  connect(remove_file_, &QPushButton::clicked, this, [this] {
    const auto selected = files_list_->selectedItems();
    if (!selected.isEmpty()) removeHardwareFile(selected.front()->data(Qt::UserRole).toString());
  });
  projection_error_ = ErrorLabel(QStringLiteral("projectionError"), box);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(add);
  buttons->addWidget(remove_file_);
  buttons->addSpacing(12);
  buttons->addWidget(projection_summary_, 1);

  auto* layout = new QVBoxLayout(box);
  layout->addWidget(HintLabel(tr("Estimated from each device's published figures and the targets ticked above: a "
                                 "median with a P10–P90 band, ranked with them. Hover a device for its figures and "
                                 "sources."),
                              box));
  layout->addWidget(catalog_status_);
  layout->addLayout(catalog_grid_);
  layout->addLayout(buttons);
  layout->addWidget(files_list_);
  layout->addWidget(projection_error_);
  return box;
}

void TargetsPage::loadHardwareCatalog(const std::filesystem::path& dir) {
  const QStringList ticked = projectedHardware() + absent_hardware_;
  for (QCheckBox* check : hardware_checks_) delete check;
  hardware_checks_.clear();
  catalog_.clear();
  Result<std::vector<HardwareSpec>> catalog = LoadHardwareCatalog(dir);
  if (!catalog.ok()) {
    catalog_status_->setText(tr("The hardware catalog could not be read, so no catalog device can be projected: "
                                "%1\nA device file of your own still can.")
                                 .arg(ToQString(catalog.status().message())));
    catalog_status_->show();
  } else if (catalog->empty()) {
    catalog_status_->setText(tr("The hardware catalog in %1 lists no device.").arg(ToQString(dir.string())));
    catalog_status_->show();
  } else {
    catalog_status_->clear();
    catalog_status_->hide();
    catalog_ = std::move(catalog).value();
  }
  // Two columns, filled down each column so that the sorted ids read top to bottom. Two, not more: the longest
  // catalog names ("Qualcomm Snapdragon X Elite Hexagon NPU (snapdragon-x-elite-npu)") would otherwise make the
  // page wider than the window's page area and squeeze the navigation.
  constexpr int kColumns = 2;
  const int rows = (static_cast<int>(catalog_.size()) + kColumns - 1) / kColumns;
  for (size_t i = 0; i < catalog_.size(); ++i) {
    const HardwareSpec& spec = catalog_[i];
    auto* check = new QCheckBox(HardwareLabel(spec), catalog_status_->parentWidget());
    check->setObjectName(QStringLiteral("project:") + ToQString(spec.id));
    check->setToolTip(HardwareToolTip(spec));
    check->setChecked(ticked.contains(ToQString(spec.id)));
    connect(check, &QCheckBox::toggled, this, &TargetsPage::onProjectionEdited);
    catalog_grid_->addWidget(check, static_cast<int>(i) % rows, static_cast<int>(i) / rows);
    hardware_checks_.push_back(check);
  }
  absent_hardware_.clear();
  for (const QString& id : ticked) {
    if (!projectedHardware().contains(id)) absent_hardware_ << id;
  }
  updateProjectionSummary();
}

QStringList TargetsPage::projectedHardware() const {
  QStringList ids;
  for (size_t i = 0; i < hardware_checks_.size(); ++i) {
    if (hardware_checks_[i]->isChecked()) ids << ToQString(catalog_[i].id);
  }
  return ids;
}

QStringList TargetsPage::hardwareFiles() const {
  QStringList paths;
  for (const HardwareFile& file : hardware_files_) paths << file.path;
  return paths;
}

QString TargetsPage::projectionError() const { return projection_error_->text(); }

void TargetsPage::showProjectionError(const QString& text) {
  projection_error_->setText(text);
  projection_error_->setVisible(!text.isEmpty());
}

Result<HardwareSpec> TargetsPage::checkHardwareFile(const QString& path) const {
  ASSIGN_OR_RETURN(HardwareSpec spec, LoadHardwareFile(std::filesystem::path(path.toStdString())));
  // SelectHardware refuses these at the start of a run; said here, where the file is chosen.
  for (const HardwareSpec& c : catalog_) {
    if (c.id == spec.id) {
      return InvalidArgument(path.toStdString() + ": id '" + spec.id + "' is already the catalog's (" + c.file +
                             "); give yours another id");
    }
  }
  for (const HardwareFile& file : hardware_files_) {
    if (file.spec.id == spec.id) {
      return InvalidArgument(path.toStdString() + ": id '" + spec.id + "' is also in " + file.path.toStdString());
    }
  }
  return spec;
}

void TargetsPage::appendHardwareFile(const QString& path, const HardwareSpec& spec) {
  hardware_files_.push_back({path, spec});
  auto* item = new QListWidgetItem(tr("%1 — %2").arg(HardwareLabel(spec), path), files_list_);
  item->setData(Qt::UserRole, path);
  item->setToolTip(HardwareToolTip(spec));
  files_list_->setVisible(true);
  // Every file in view without a scroll bar for the handful a user adds; more scroll.
  const int shown = std::min(files_list_->count(), 4);
  files_list_->setFixedHeight(files_list_->sizeHintForRow(0) * shown + 2 * files_list_->frameWidth() + 2);
}

bool TargetsPage::addHardwareFile(const QString& path) {
  if (path.isEmpty()) return false;
  if (hardwareFiles().contains(path)) {
    showProjectionError({});
    return true;  // already there: nothing to add
  }
  Result<HardwareSpec> spec = checkHardwareFile(path);
  if (!spec.ok()) {
    showProjectionError(tr("Device file not added: %1").arg(ToQString(spec.status().message())));
    return false;
  }
  showProjectionError({});
  appendHardwareFile(path, *spec);
  onProjectionEdited();
  return true;
}

void TargetsPage::removeHardwareFile(const QString& path) {
  const auto it = std::find_if(hardware_files_.begin(), hardware_files_.end(),
                               [&](const HardwareFile& file) { return file.path == path; });
  if (it == hardware_files_.end()) return;
  delete files_list_->takeItem(static_cast<int>(it - hardware_files_.begin()));
  hardware_files_.erase(it);
  files_list_->setVisible(!hardware_files_.empty());
  if (!hardware_files_.empty()) {
    const int shown = std::min(files_list_->count(), 4);
    files_list_->setFixedHeight(files_list_->sizeHintForRow(0) * shown + 2 * files_list_->frameWidth() + 2);
  }
  onProjectionEdited();
}

void TargetsPage::browseHardwareFile() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Add a device file"), QString(),
                                                    tr("Device files (*.yaml *.yml);;All files (*)"));
  if (!path.isEmpty()) addHardwareFile(path);
}

void TargetsPage::onProjectionEdited() {
  updateProjectionSummary();
  if (applying_) return;
  save();
  emit optionsChanged();
}

void TargetsPage::updateProjectionSummary() {
  QStringList devices = projectedHardware();
  for (const HardwareFile& file : hardware_files_) devices << ToQString(file.spec.id);
  if (devices.isEmpty()) {
    projection_summary_->setText(tr("None chosen: nothing is projected."));
  } else {
    projection_summary_->setText(
        tr("Projecting onto %n device(s), every precision each supports: %1", nullptr, static_cast<int>(devices.size()))
            .arg(devices.join(QStringLiteral(", "))));
  }
}

void TargetsPage::watchEdits() {
  for (const Field& field : fields_) {
    if (auto* spin = qobject_cast<QSpinBox*>(field.widget)) {
      connect(spin, &QSpinBox::valueChanged, this, &TargetsPage::onEdited);
    } else if (auto* spin = qobject_cast<QDoubleSpinBox*>(field.widget)) {
      connect(spin, &QDoubleSpinBox::valueChanged, this, &TargetsPage::onEdited);
    } else if (auto* combo = qobject_cast<QComboBox*>(field.widget)) {
      connect(combo, &QComboBox::currentIndexChanged, this, &TargetsPage::onEdited);
    } else if (auto* edit = qobject_cast<QLineEdit*>(field.widget)) {
      connect(edit, &QLineEdit::textChanged, this, &TargetsPage::onEdited);
    }
  }
}

void TargetsPage::setDevices(DevicesModel::Snapshot devices) {
  Q_ASSERT(QThread::currentThread() == thread());
  applying_ = true;
  matrix_->setDevices(std::move(devices));
  applyTargets();
  applying_ = false;
  fitMatrixHeight();
  emit optionsChanged();
}

void TargetsPage::fitMatrixHeight() {
  const int rows = matrix_view_->verticalHeader()->length();
  const int header = matrix_view_->horizontalHeader()->sizeHint().height();
  matrix_view_->setFixedHeight(header + rows + 2 * matrix_view_->frameWidth());
}

void TargetsPage::setModelKey(const QString& sha256) {
  if (sha256 == model_key_) return;
  // Nothing to save for the model being left: every edit was saved as it happened.
  model_key_ = sha256;
  load();
  limits_->setModelKey(sha256);
}

void TargetsPage::load() {
  applying_ = true;
  QSettings settings;
  if (!model_key_.isEmpty()) settings.beginGroup(SettingsGroup(model_key_));
  const bool saved = !model_key_.isEmpty();
  for (const Field& field : fields_) {
    const QString key = field.widget->objectName();
    SetFieldValue(field.widget, saved ? settings.value(key, field.default_value) : field.default_value);
  }
  chosen_targets_.reset();
  if (saved && settings.contains(kTargetsKey)) chosen_targets_ = settings.value(kTargetsKey).toStringList();
  applyTargets();

  const QStringList hardware = saved ? settings.value(kProjectHardwareKey).toStringList() : QStringList();
  absent_hardware_.clear();
  for (const QString& id : hardware) {
    if (std::none_of(catalog_.begin(), catalog_.end(), [&](const HardwareSpec& c) { return ToQString(c.id) == id; }))
      absent_hardware_ << id;
  }
  for (size_t i = 0; i < hardware_checks_.size(); ++i) {
    hardware_checks_[i]->setChecked(hardware.contains(ToQString(catalog_[i].id)));
  }
  hardware_files_.clear();
  files_list_->clear();
  files_list_->hide();
  showProjectionError({});
  QStringList unreadable;
  for (const QString& path : saved ? settings.value(kProjectFilesKey).toStringList() : QStringList()) {
    Result<HardwareSpec> spec = checkHardwareFile(path);
    if (spec.ok()) {
      appendHardwareFile(path, *spec);
    } else {
      unreadable << ToQString(spec.status().message());
    }
  }
  if (!unreadable.isEmpty()) {
    showProjectionError(tr("A device file this model projected onto is no longer usable, so it was left out: %1")
                            .arg(unreadable.join(QStringLiteral("; "))));
  }
  updateProjectionSummary();
  applying_ = false;
  emit optionsChanged();
}

void TargetsPage::save() const {
  if (model_key_.isEmpty()) return;
  QSettings settings;
  settings.beginGroup(SettingsGroup(model_key_));
  for (const Field& field : fields_) settings.setValue(field.widget->objectName(), FieldValue(field.widget));
  if (chosen_targets_) {
    settings.setValue(kTargetsKey, *chosen_targets_);
  } else {
    settings.remove(kTargetsKey);
  }
  const QStringList hardware = projectedHardware() + absent_hardware_;
  const QStringList files = hardwareFiles();
  if (hardware.isEmpty()) {
    settings.remove(kProjectHardwareKey);
  } else {
    settings.setValue(kProjectHardwareKey, hardware);
  }
  if (files.isEmpty()) {
    settings.remove(kProjectFilesKey);
  } else {
    settings.setValue(kProjectFilesKey, files);
  }
}

void TargetsPage::applyTargets() {
  if (chosen_targets_) {
    matrix_->setCheckedTargets(ParseTargets(*chosen_targets_));
  } else {
    matrix_->setAllChecked(true);
  }
  updateCount();
}

QStringList TargetsPage::targetsToSave() const {
  QStringList texts;
  for (const Target& target : matrix_->checkedTargets()) texts << QString::fromStdString(target.ToString());
  if (!chosen_targets_) return texts;
  for (const Target& target : ParseTargets(*chosen_targets_)) {
    const QString text = QString::fromStdString(target.ToString());
    if (!matrix_->indexOf(target).isValid() && !texts.contains(text)) texts << text;
  }
  return texts;
}

void TargetsPage::onEdited() {
  if (applying_) return;
  save();
  emit optionsChanged();
}

void TargetsPage::onMatrixChanged() {
  updateCount();
  if (applying_) return;
  chosen_targets_ = targetsToSave();
  save();
  emit optionsChanged();
}

void TargetsPage::updateCount() {
  if (!matrix_->devices()) {
    count_label_->setText(tr("Waiting for device discovery…"));
    return;
  }
  const int checked = matrix_->checkedCount();
  if (checked == 0) {
    count_label_->setText(tr("No target ticked: a run would have nothing to profile."));
  } else {
    count_label_->setText(tr("%1 of %2 supported targets ticked").arg(checked).arg(matrix_->supportedCount()));
  }
}

void TargetsPage::browseDataDir() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Data folder"), data_dir_->text());
  if (!folder.isEmpty()) data_dir_->setText(folder);
}

bool TargetsPage::hasCheckedTargets() const { return matrix_->checkedCount() > 0; }

ProfileOptions TargetsPage::options() const {
  ProfileOptions options;
  options.targets = matrix_->checkedTargets();
  options.iterations = iterations_->value();
  options.warmup = warmup_->value();
  options.min_time_s = min_time_->value();
  options.data_dir = data_dir_->text().trimmed().toStdString();
  options.calibration =
      ParseCalibrationMethod(calibration_->currentData().toString().toStdString()).value_or(options.calibration);
  options.int8_all_layers = int8_layers_->currentData().toString() == QStringLiteral("all");
  options.drift_samples = drift_samples_->value();

  options.recommend = limits_->settings();

  for (const QString& id : projectedHardware()) options.project_request.hardware.push_back(id.toStdString());
  for (const HardwareFile& file : hardware_files_)
    options.project_request.hardware_files.push_back(file.path.toStdString());
  options.project = !options.project_request.hardware.empty() || !options.project_request.hardware_files.empty();
  return options;
}

}  // namespace chipfit
