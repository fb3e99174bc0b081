// ModelPage: layout, the pool-thread analysis hand-off, and filling the summary, chart and tables.
#include "views/pages/model_page.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QThread>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>
#include <utility>

#include "views/models/gui_wording.h"

namespace chipfit {
namespace {

constexpr int kTopOps = 10;  // bars in the op histogram; the rest share one "other" bar
const QColor kErrorColor(0xb0, 0x00, 0x20);

QString ToQString(const std::string& text) { return QString::fromStdString(text); }

std::vector<std::string> ToStdStrings(const QStringList& list) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(list.size()));
  for (const QString& text : list) out.push_back(text.toStdString());
  return out;
}

QStringList ToQStringList(const std::vector<std::string>& list) {
  QStringList out;
  for (const auto& text : list) out << ToQString(text);
  return out;
}

// Runs on a pool thread: nothing here touches the page, so a page closed meanwhile is no hazard.
ModelLoadOutcome Analyze(quint64 generation, const QString& path, const QStringList& shapes,
                         const std::vector<Target>& targets, const std::stop_token& stop,
                         const std::shared_ptr<AnalysisStep>& step) {
  ModelLoadOutcome outcome{.generation = generation, .path = path, .shapes = shapes};
  const auto say = [&step](const std::string& text) {
    const std::lock_guard lock(step->mutex);
    step->text = text;
  };
  try {
    auto analysis = AnalyzeModel(std::filesystem::path(path.toStdString()), ToStdStrings(shapes), targets, stop, say);
    if (analysis.ok()) {
      outcome.analysis = std::make_shared<const ModelAnalysis>(std::move(*analysis));
    } else {
      outcome.cancelled = analysis.status().code() == StatusCode::kCancelled;
      outcome.error = GuiWording(analysis.status().message());
    }
  } catch (const std::exception& error) {
    // protobuf and device libraries may throw; QFuture::result() must not rethrow in the GUI's event loop.
    outcome.error = ModelPage::tr("analysing '%1' failed: %2").arg(path, QString::fromUtf8(error.what()));
  }
  return outcome;
}

// "x=1x3x48x192" as the page writes shapes: "x 1×3×48×192".
QString ShapesText(const QStringList& shapes) {
  QStringList out;
  for (const QString& binding : shapes) {
    const qsizetype eq = binding.indexOf(QLatin1Char('='));
    if (eq < 0) {
      out << binding;
      continue;
    }
    QString dims = binding.mid(eq + 1);
    out << binding.left(eq) + QLatin1Char(' ') + dims.replace(QLatin1Char('x'), QChar(0x00D7));
  }
  return out.join(QStringLiteral(", "));
}

QString Bytes(int64_t bytes) { return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeIecFormat); }

// Three significant digits in GFLOP ("0.0403 GFLOP"), without the exponent 'g' would use for tiny
// models: those read in MFLOP.
QString FlopsText(int64_t flops) {
  const double gflop = static_cast<double>(flops) / 1e9;
  if (gflop >= 1) return ModelPage::tr("%1 GFLOP per inference").arg(QLocale().toString(gflop, 'f', 2));
  if (gflop >= 1e-3) return ModelPage::tr("%1 GFLOP per inference").arg(QLocale().toString(gflop, 'g', 3));
  return ModelPage::tr("%1 MFLOP per inference").arg(QLocale().toString(gflop * 1e3, 'g', 3));
}

QLabel* ValueLabel(QWidget* parent, const QString& object_name) {
  auto* label = new QLabel(parent);
  label->setObjectName(object_name);
  label->setTextFormat(Qt::PlainText);  // names come from the model file and may hold '<' or '&'
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setWordWrap(true);
  return label;
}

QTableView* Table(QWidget* parent, const QString& object_name) {
  auto* table = new QTableView(parent);
  table->setObjectName(object_name);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setAlternatingRowColors(true);
  table->setWordWrap(false);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setStretchLastSection(true);
  table->horizontalHeader()->setMaximumSectionSize(280);
  // One line per row: the default section height leaves half of each row empty.
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 8);
  return table;
}

// Sized to its rows up to `max_rows`: short tables leave the room to the widgets that need it.
void FitHeightToRows(QTableView* table, int max_rows) {
  const int rows = std::clamp(table->model()->rowCount(), 1, max_rows);
  table->setFixedHeight(table->horizontalHeader()->sizeHint().height() +
                        rows * table->verticalHeader()->defaultSectionSize() + 2 * table->frameWidth() +
                        (table->horizontalScrollBar()->isVisible() ? table->horizontalScrollBar()->height() : 0));
}

void SetErrorColor(QLabel* label) {
  QPalette palette = label->palette();
  palette.setColor(QPalette::WindowText, kErrorColor);
  label->setPalette(palette);
}

}  // namespace

QString ModelPage::OnnxFileIn(const QMimeData* mime) {
  if (mime == nullptr || !mime->hasUrls()) return {};
  for (const QUrl& url : mime->urls()) {
    if (url.isLocalFile() && url.toLocalFile().endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive)) {
      return url.toLocalFile();
    }
  }
  return {};
}

ModelPage::ModelPage(QWidget* parent)
    : QWidget(parent),
      node_model_(new NodeListModel({}, this)),
      node_filter_(new NodeFilterModel(this)),
      inputs_model_(new ModelInputsModel({}, this)),
      placement_model_(new TargetPlacementModel({}, this)),
      status_label_(new QLabel(this)),
      stack_(new QStackedWidget(this)) {
  progress_timer_ = new QTimer(this);
  progress_timer_->setInterval(250);
  connect(progress_timer_, &QTimer::timeout, this, &ModelPage::updateProgress);
  setAcceptDrops(true);
  node_filter_->setSourceModel(node_model_);
  status_label_->setObjectName(QStringLiteral("modelStatus"));
  status_label_->setTextFormat(Qt::PlainText);
  status_label_->setWordWrap(true);
  status_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);  // error text goes into bug reports
  status_label_->hide();
  stack_->setObjectName(QStringLiteral("modelStack"));

  auto* hint = new QLabel(tr("Open an ONNX model (Ctrl+O) or drop it here"), this);
  hint->setObjectName(QStringLiteral("emptyHint"));
  hint->setAlignment(Qt::AlignCenter);
  QFont hint_font = hint->font();
  hint_font.setPointSizeF(hint_font.pointSizeF() * 1.3);
  hint->setFont(hint_font);
  hint->setEnabled(false);  // the disabled palette greys it: a hint, not content
  stack_->addWidget(hint);
  stack_->addWidget(buildContent());

  // While analysing: the step, the time it has taken, a busy bar and Cancel. The first analysis of a model
  // compiles it for every target (int8 calibrates): tens of seconds on a busy machine.
  busy_row_ = new QWidget(this);
  busy_row_->setObjectName(QStringLiteral("analysisProgress"));
  busy_label_ = new QLabel(busy_row_);
  busy_label_->setObjectName(QStringLiteral("analysisStep"));
  busy_label_->setTextFormat(Qt::PlainText);
  busy_bar_ = new QProgressBar(busy_row_);
  busy_bar_->setRange(0, 0);  // no fraction to show: steps differ by orders of magnitude
  busy_bar_->setTextVisible(false);
  busy_bar_->setMaximumWidth(160);
  cancel_button_ = new QPushButton(tr("Cancel"), busy_row_);
  cancel_button_->setObjectName(QStringLiteral("analysisCancel"));
  cancel_button_->setToolTip(tr("Stop analysing; the page keeps what it showed before"));
  connect(cancel_button_, &QPushButton::clicked, this, &ModelPage::cancelAnalysis);
  auto* busy_layout = new QHBoxLayout(busy_row_);
  busy_layout->setContentsMargins(0, 0, 0, 0);
  busy_layout->addWidget(busy_label_, 1);
  busy_layout->addWidget(busy_bar_);
  busy_layout->addWidget(cancel_button_);
  busy_row_->hide();

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(busy_row_);
  layout->addWidget(status_label_);
  layout->addWidget(stack_, 1);

  connect(&watcher_, &QFutureWatcher<ModelLoadOutcome>::finished, this, &ModelPage::onAnalysisFinished);
  connect(inputs_model_, &ModelInputsModel::invalidEdit, this, [this](const QString& message) {
    inputs_error_->setText(message);
    inputs_error_->show();
  });
  connect(inputs_model_, &ModelInputsModel::shapesChanged, this, [this](const QStringList& shapes) {
    inputs_error_->hide();
    if (!model_path_.isEmpty()) openModel(model_path_, shapes);
  });
}

ModelPage::~ModelPage() {
  // The pool thread holds no pointer to the page; stopping it only saves the work nobody will see.
  stop_.request_stop();
}

QWidget* ModelPage::buildContent() {
  auto* left_column = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left_column);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(buildSummary());
  left_layout->addWidget(buildInputs());
  left_layout->addWidget(buildOpChart(), 1);
  // Notes, many inputs or many op types can outgrow a small window: scroll rather than squeeze the
  // chart or clip the summary.
  auto* left = new QScrollArea(this);
  left->setObjectName(QStringLiteral("modelSummaryScroll"));
  left->setWidget(left_column);
  left->setWidgetResizable(true);
  left->setFrameShape(QFrame::NoFrame);
  left->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  // Narrower, the chart's op names ("BatchNormalization") run off its left edge.
  left->setMinimumWidth(380);

  auto* right = new QWidget(this);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  right_layout->addWidget(buildNodes(), 1);
  right_layout->addWidget(buildPlacement());

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->setObjectName(QStringLiteral("modelSplitter"));
  splitter->addWidget(left);
  splitter->addWidget(right);
  splitter->setStretchFactor(0, 2);
  splitter->setStretchFactor(1, 3);
  splitter->setChildrenCollapsible(false);
  return splitter;
}

QWidget* ModelPage::buildSummary() {
  auto* box = new QGroupBox(tr("Summary"), this);
  box->setObjectName(QStringLiteral("summaryBox"));
  summary_form_ = new QFormLayout(box);
  summary_form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  summary_file_ = ValueLabel(box, QStringLiteral("summaryFile"));
  summary_format_ = ValueLabel(box, QStringLiteral("summaryFormat"));
  summary_producer_ = ValueLabel(box, QStringLiteral("summaryProducer"));
  summary_nodes_ = ValueLabel(box, QStringLiteral("summaryNodes"));
  summary_parameters_ = ValueLabel(box, QStringLiteral("summaryParameters"));
  summary_flops_ = ValueLabel(box, QStringLiteral("summaryFlops"));
  summary_memory_ = ValueLabel(box, QStringLiteral("summaryMemory"));
  summary_outputs_ = ValueLabel(box, QStringLiteral("summaryOutputs"));
  summary_notes_ = ValueLabel(box, QStringLiteral("summaryNotes"));
  summary_form_->addRow(tr("File"), summary_file_);
  summary_form_->addRow(tr("Format"), summary_format_);
  summary_form_->addRow(tr("Producer"), summary_producer_);
  summary_form_->addRow(tr("Nodes"), summary_nodes_);
  summary_form_->addRow(tr("Parameters"), summary_parameters_);
  summary_form_->addRow(tr("Compute"), summary_flops_);
  summary_form_->addRow(tr("Memory"), summary_memory_);
  summary_form_->addRow(tr("Outputs"), summary_outputs_);
  summary_form_->addRow(tr("Notes"), summary_notes_);
  return box;
}

QWidget* ModelPage::buildInputs() {
  auto* box = new QGroupBox(tr("Inputs"), this);
  box->setObjectName(QStringLiteral("inputsBox"));
  inputs_table_ = Table(box, QStringLiteral("inputsTable"));
  inputs_table_->setModel(inputs_model_);
  inputs_table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                                 QAbstractItemView::AnyKeyPressed);
  inputs_table_->setSelectionBehavior(QAbstractItemView::SelectItems);
  inputs_hint_ = new QLabel(box);
  inputs_hint_->setObjectName(QStringLiteral("inputsHint"));
  inputs_hint_->setWordWrap(true);
  inputs_hint_->setEnabled(false);  // greyed: a hint, not a result
  inputs_hint_->hide();
  inputs_error_ = ValueLabel(box, QStringLiteral("inputsError"));
  SetErrorColor(inputs_error_);
  inputs_error_->hide();
  auto* layout = new QVBoxLayout(box);
  layout->addWidget(inputs_table_);
  layout->addWidget(inputs_hint_);
  layout->addWidget(inputs_error_);
  return box;
}

QWidget* ModelPage::buildOpChart() {
  auto* box = new QGroupBox(tr("Nodes by op"), this);
  box->setObjectName(QStringLiteral("opChartBox"));
  op_chart_ = new QChart();
  op_chart_->legend()->hide();
  op_chart_->setAnimationOptions(QChart::NoAnimation);
  op_chart_->setMargins(QMargins(0, 0, 0, 0));
  op_chart_->setBackgroundRoundness(0);
  op_chart_view_ = new QChartView(op_chart_, box);  // takes ownership of the chart
  op_chart_view_->setObjectName(QStringLiteral("opChart"));
  op_chart_view_->setRenderHint(QPainter::Antialiasing);
  op_chart_view_->setMinimumHeight(180);
  op_chart_view_->setAcceptDrops(false);  // a dropped model belongs to the page, not to the scene
  auto* layout = new QVBoxLayout(box);
  layout->addWidget(op_chart_view_);
  return box;
}

QWidget* ModelPage::buildNodes() {
  auto* box = new QGroupBox(tr("Nodes"), this);
  box->setObjectName(QStringLiteral("nodesBox"));
  filter_edit_ = new QLineEdit(box);
  filter_edit_->setObjectName(QStringLiteral("nodeFilter"));
  filter_edit_->setPlaceholderText(tr("Filter by node name or op…"));
  filter_edit_->setClearButtonEnabled(true);
  filter_edit_->setAcceptDrops(false);  // dropping a model on the page must open it, not paste its URL
  node_count_ = new QLabel(box);
  node_count_->setObjectName(QStringLiteral("nodeCount"));
  show_constants_ = new QCheckBox(box);
  show_constants_->setObjectName(QStringLiteral("showConstants"));
  show_constants_->hide();  // until a model has Constant nodes
  node_filter_->setShowConstants(false);
  connect(show_constants_, &QCheckBox::toggled, node_filter_, &NodeFilterModel::setShowConstants);
  node_table_ = Table(box, QStringLiteral("nodeTable"));
  node_table_->setModel(node_filter_);
  node_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  node_table_->setSortingEnabled(true);
  node_table_->sortByColumn(-1, Qt::AscendingOrder);  // graph order until the user picks a column
  connect(filter_edit_, &QLineEdit::textChanged, node_filter_, &QSortFilterProxyModel::setFilterFixedString);
  connect(node_filter_, &QAbstractItemModel::rowsInserted, this, &ModelPage::updateNodeCount);
  connect(node_filter_, &QAbstractItemModel::rowsRemoved, this, &ModelPage::updateNodeCount);
  connect(node_filter_, &QAbstractItemModel::modelReset, this, &ModelPage::updateNodeCount);
  connect(node_filter_, &QAbstractItemModel::layoutChanged, this, &ModelPage::updateNodeCount);

  auto* filter_row = new QHBoxLayout();
  filter_row->addWidget(filter_edit_, 1);
  filter_row->addWidget(show_constants_);
  filter_row->addWidget(node_count_);
  auto* layout = new QVBoxLayout(box);
  layout->addLayout(filter_row);
  layout->addWidget(node_table_, 1);
  return box;
}

QWidget* ModelPage::buildPlacement() {
  auto* box = new QGroupBox(tr("Placement: nodes a target's device cannot run"), this);
  box->setObjectName(QStringLiteral("placementBox"));
  placement_summary_ = ValueLabel(box, QStringLiteral("placementSummary"));
  placement_table_ = Table(box, QStringLiteral("placementTable"));
  placement_table_->setModel(placement_model_);
  placement_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  auto* layout = new QVBoxLayout(box);
  layout->addWidget(placement_summary_);
  layout->addWidget(placement_table_);
  return box;
}

void ModelPage::openModel(const QString& path, const QStringList& shapes) {
  Q_ASSERT(QThread::currentThread() == thread());
  stop_.request_stop();  // the analysis under way answers a question nobody asks any more
  stop_ = std::stop_source();
  loading_ = true;
  pending_path_ = path;
  pending_shapes_ = shapes;
  const quint64 generation = ++generation_;
  showStatus({}, false);
  step_ = std::make_shared<AnalysisStep>();
  step_->text = "starting";
  elapsed_.start();
  setBusy(true);
  watcher_.setFuture(QtConcurrent::run(&Analyze, generation, path, shapes, targets_, stop_.get_token(), step_));
}

void ModelPage::cancelAnalysis() {
  Q_ASSERT(QThread::currentThread() == thread());
  if (!loading_) return;
  stop_.request_stop();
  ++generation_;  // whatever the pool thread still hands back answers nothing now
  loading_ = false;
  setBusy(false);
  const QString name = QFileInfo(pending_path_).fileName();
  showStatus(analysis_ ? tr("Analysis of %1 cancelled; still showing %2.").arg(name, QFileInfo(model_path_).fileName())
                       : tr("Analysis of %1 cancelled.").arg(name),
             false);
  // A cancelled edit of the dims: the inputs go back to what the analysis on screen used.
  if (analysis_) inputs_model_->setAnalysis(analysis_);
}

void ModelPage::setBusy(bool busy) {
  busy_row_->setVisible(busy);
  if (busy) {
    updateProgress();
    progress_timer_->start();
  } else {
    progress_timer_->stop();
  }
}

void ModelPage::updateProgress() {
  std::string step;
  if (step_) {
    const std::lock_guard lock(step_->mutex);
    step = step_->text;
  }
  const QString name = QFileInfo(pending_path_).fileName();
  const QString what = pending_shapes_.isEmpty() ? name : tr("%1 with %2").arg(name, ShapesText(pending_shapes_));
  busy_label_->setText(tr("Analysing %1: %2… %3 s").arg(what, ToQString(step)).arg(elapsed_.elapsed() / 1000));
}

QString ModelPage::progressText() const { return busy_row_->isVisible() || loading_ ? busy_label_->text() : QString(); }

void ModelPage::setTargets(std::vector<Target> targets) {
  Q_ASSERT(QThread::currentThread() == thread());
  targets_ = std::move(targets);
  // An analysis under way was started with the old targets: start it again rather than show a stale answer.
  if (loading_) {
    openModel(pending_path_, pending_shapes_);
  } else if (analysis_) {
    openModel(model_path_, ToQStringList(analysis_->shapes));
  }
}

QString ModelPage::statusText() const { return status_label_->text(); }

void ModelPage::showStatus(const QString& text, bool error) {
  status_label_->setText(text);
  status_label_->setVisible(!text.isEmpty());
  QPalette palette = status_label_->palette();
  palette.setColor(QPalette::WindowText, error ? kErrorColor : this->palette().color(QPalette::WindowText));
  status_label_->setPalette(palette);
}

void ModelPage::onAnalysisFinished() {
  Q_ASSERT(QThread::currentThread() == thread());
  const ModelLoadOutcome outcome = watcher_.result();
  if (outcome.generation != generation_) return;  // a newer openModel is under way, or Cancel dropped it
  loading_ = false;
  setBusy(false);
  if (outcome.analysis) {
    showAnalysis(outcome.path, outcome.analysis);
    showStatus({}, false);
    emit modelLoaded(outcome.path, ToQString(outcome.analysis->summary.sha256), outcome.shapes);
    return;
  }
  if (outcome.cancelled) return;
  showStatus(outcome.error, true);
  // A re-analysis that failed leaves the previous one on screen; the inputs go back to what it used.
  if (analysis_) inputs_model_->setAnalysis(analysis_);
  emit loadFailed(outcome.path, outcome.error);
}

void ModelPage::showAnalysis(const QString& path, std::shared_ptr<const ModelAnalysis> analysis) {
  model_path_ = path;
  analysis_ = std::move(analysis);
  node_model_->setAnalysis(analysis_);
  inputs_model_->setAnalysis(analysis_);
  placement_model_->setAnalysis(analysis_);
  inputs_error_->hide();
  showSummary(*analysis_);
  showOpHistogram(analysis_->summary);
  showPlacementSummary(*analysis_);
  const int constants = static_cast<int>(
      std::ranges::count_if(analysis_->nodes, [](const NodeRow& node) { return node.op == "Constant"; }));
  show_constants_->setText(tr("Constant nodes (%1)").arg(constants));
  show_constants_->setVisible(constants > 0);
  inputs_table_->resizeColumnsToContents();
  FitHeightToRows(inputs_table_, 6);
  const bool any_dynamic = std::ranges::any_of(analysis_->declared_inputs, [](const TensorSpec& input) {
    return !input.has_shape || std::ranges::any_of(input.dims, [](const DimSpec& dim) { return !dim.is_static(); });
  });
  inputs_hint_->setText(
      !analysis_->unbound_inputs.empty()
          ? tr("Double-click a shape to set its dynamic dims: compute, memory and placement need them.")
          : tr("Double-click a shape to change its dynamic dims."));
  inputs_hint_->setVisible(any_dynamic);
  node_table_->resizeColumnsToContents();
  placement_table_->resizeColumnsToContents();
  FitHeightToRows(placement_table_, 8);
  stack_->setCurrentIndex(1);
}

void ModelPage::showSummary(const ModelAnalysis& analysis) {
  const ModelSummary& s = analysis.summary;
  const QFileInfo file(model_path_);
  summary_file_->setText(file.fileName());
  summary_file_->setToolTip(tr("%1\nsha256 %2").arg(file.absoluteFilePath(), ToQString(s.sha256)));
  QStringList opsets;
  for (const auto& [domain, version] : s.opsets) {
    if (!domain.empty() && domain != "ai.onnx")
      opsets << ToQString(domain) + QLatin1Char(' ') + QString::number(version);
  }
  summary_format_->setText(tr("ONNX IR %1, opset %2").arg(s.ir_version).arg(s.default_opset) +
                           (opsets.isEmpty() ? QString() : QStringLiteral(" (+ ") + opsets.join(", ") + ")"));
  summary_producer_->setText(s.producer.empty() ? tr("not recorded") : ToQString(s.producer));
  summary_nodes_->setText(s.op_histogram.size() == 1
                              ? tr("%1 of one op type").arg(s.node_count)
                              : tr("%1 in %2 op types").arg(s.node_count).arg(s.op_histogram.size()));
  QStringList holders;
  if (s.initializer_count > 0 || s.constant_node_count == 0) holders << tr("%1 initializers").arg(s.initializer_count);
  if (s.constant_node_count > 0) holders << tr("%1 Constant nodes").arg(s.constant_node_count);
  const QString parameters = tr("%1 (%2) in %3")
                                 .arg(QLocale().toString(static_cast<qlonglong>(s.parameter_count)),
                                      Bytes(s.parameter_bytes), holders.join(tr(" and ")));
  summary_parameters_->setText(parameters);
  if (!analysis.unbound_inputs.empty()) {
    summary_flops_->setText(tr("set the dynamic dims in Inputs"));
    summary_memory_->setText(tr("set the dynamic dims in Inputs"));
  } else if (!analysis.compiled) {
    summary_flops_->setText(tr("unknown: the reference does not compile it (see notes)"));
    summary_memory_->setText(tr("unknown"));
  } else {
    summary_flops_->setText(FlopsText(analysis.flops));
    summary_memory_->setText(tr("%1 activations (planned peak), %2 constants")
                                 .arg(Bytes(analysis.planned_peak_bytes), Bytes(analysis.constant_bytes)));
  }
  QStringList outputs;
  for (const TensorSpec& out : analysis.outputs) {
    outputs << ToQString(out.name) + QStringLiteral("  ") + ToQString(out.dtype) + QStringLiteral("  ") +
                   ToQString(FormatDims(out));
  }
  summary_outputs_->setText(outputs.join(QLatin1Char('\n')));
  summary_notes_->setText(ToQStringList(analysis.notes).join(QLatin1Char('\n')));
  summary_form_->setRowVisible(summary_notes_, !analysis.notes.empty());
}

void ModelPage::showOpHistogram(const ModelSummary& summary) {
  op_chart_->removeAllSeries();
  for (QAbstractAxis* axis : op_chart_->axes()) {
    op_chart_->removeAxis(axis);
    delete axis;
  }
  std::vector<std::pair<std::string, int64_t>> ops(summary.op_histogram.begin(), summary.op_histogram.end());
  std::ranges::stable_sort(ops, [](const auto& a, const auto& b) { return a.second > b.second; });
  int64_t other = 0;
  int other_types = 0;
  for (size_t i = kTopOps; i < ops.size(); ++i) {
    other += ops[i].second;
    ++other_types;
  }
  if (ops.size() > static_cast<size_t>(kTopOps)) ops.resize(kTopOps);
  if (other_types > 0) ops.emplace_back(tr("%1 other ops").arg(other_types).toStdString(), other);

  // Horizontal bars are drawn bottom-up: feeding them smallest first puts the most frequent op on top.
  auto* set = new QBarSet(tr("Nodes"));
  QStringList categories;
  int64_t most = 1;
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    *set << static_cast<qreal>(it->second);
    categories << ToQString(it->first);
    most = std::max(most, it->second);
  }
  auto* series = new QHorizontalBarSeries();
  series->append(set);
  op_chart_->addSeries(series);
  auto* ops_axis = new QBarCategoryAxis();
  ops_axis->append(categories);
  ops_axis->setTruncateLabels(false);  // op names are short; elided they read "..."
  op_chart_->addAxis(ops_axis, Qt::AlignLeft);
  series->attachAxis(ops_axis);
  auto* count_axis = new QValueAxis();
  // Room past the longest bar for its label; whole numbers only, nodes come in units.
  count_axis->setRange(0, static_cast<qreal>(most) * 1.15 + 1);
  count_axis->setLabelFormat(QStringLiteral("%d"));
  count_axis->applyNiceNumbers();
  op_chart_->addAxis(count_axis, Qt::AlignBottom);
  series->attachAxis(count_axis);
  series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
  series->setLabelsFormat(QStringLiteral("@value"));
  series->setLabelsVisible(true);
  // The theme's label colour is white, meant for labels inside the bar: outside it they would vanish.
  set->setLabelColor(palette().color(QPalette::WindowText));
  op_chart_view_->setMinimumHeight(std::max(180, 22 * static_cast<int>(categories.size()) + 60));
}

void ModelPage::showPlacementSummary(const ModelAnalysis& analysis) {
  QStringList lines;
  if (!analysis.unbound_inputs.empty()) {
    lines << tr("Set the dynamic dims in Inputs to see where each target runs the model.");
  } else if (analysis.placements.empty()) {
    lines << tr("No targets to place the model on yet (devices are discovered when the window opens).");
  }
  for (const TargetPlacement& p : analysis.placements) {
    const QString target = ToQString(p.target.ToString());
    if (p.status != "ok") {
      lines << tr("%1: %2").arg(target, ToQString(p.status));
    } else if (p.fallbacks.empty()) {
      lines << tr("%1: every node on %2").arg(target, ToQString(p.target.DeviceId()));
    } else {
      // Where they go instead depends on the device kind: the CPU's kernels first for a GPU, else ref.
      const QString elsewhere = p.target.kind == DeviceKind::kCpu ? tr("ref") : tr("cpu, else ref");
      lines << (p.fallbacks.size() == 1
                    ? tr("%1: 1 node falls back to %2").arg(target, elsewhere)
                    : tr("%1: %2 nodes fall back to %3").arg(target).arg(p.fallbacks.size()).arg(elsewhere));
    }
  }
  placement_summary_->setText(lines.join(QLatin1Char('\n')));
  placement_table_->setVisible(placement_model_->rowCount() > 0);
}

void ModelPage::updateNodeCount() {
  const int total = node_model_->rowCount();
  const int shown = node_filter_->rowCount();
  if (shown != total) {
    node_count_->setText(tr("%1 of %2 nodes").arg(shown).arg(total));
  } else {
    node_count_->setText(total == 1 ? tr("1 node") : tr("%1 nodes").arg(total));
  }
}

void ModelPage::dragEnterEvent(QDragEnterEvent* event) {
  if (!OnnxFileIn(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void ModelPage::dropEvent(QDropEvent* event) {
  const QString path = OnnxFileIn(event->mimeData());
  if (path.isEmpty()) return;
  event->acceptProposedAction();
  emit modelDropped(path);
  openModel(path);
}

}  // namespace chipfit
