// MainWindow: layout, menus, the model/targets/run hand-offs between pages, the store check and the
// QtConcurrent discovery hand-off.
#include "app/mainwindow.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QShowEvent>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QThread>
#include <QThreadPool>
#include <QUrl>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>
#include <utility>
#include <vector>

#include "chipfit/version.h"
#include "core/quant/calibration.h"
#include "core/store/run_store.h"
#include "profilers/profile_json.h"
#include "profilers/session/model_analysis.h"
#include "views/models/gui_wording.h"
#include "views/models/layer_selection.h"
#include "views/models/limits_model.h"
#include "views/pages/compare_page.h"
#include "views/pages/devices_page.h"
#include "views/pages/graph_page.h"
#include "views/pages/history_page.h"
#include "views/pages/layers_page.h"
#include "views/pages/model_actions.h"
#include "views/pages/model_page.h"
#include "views/pages/recommend_page.h"
#include "views/pages/run_page.h"
#include "views/pages/targets_page.h"

namespace chipfit {
namespace {

constexpr int kMaxRecentFiles = 8;
const char kRecentKey[] = "recentFiles";

// Runs on a pool thread. Exceptions stop here: the GUI gets a note instead of a rethrow from
// QFuture::result() in the middle of event handling.
DiscoveredDevices Discover(const MainWindow::DiscoverFunction& discover) {
  auto infos = std::make_shared<std::vector<DeviceInfo>>();
  DiscoveredDevices result;
  try {
    DiscoveryReport report = discover();
    infos->reserve(report.devices.size());
    for (const auto& device : report.devices) infos->push_back(device->info());
    for (const auto& note : report.notes) result.notes << QString::fromStdString(note);
  } catch (const std::exception& error) {
    result.notes << MainWindow::tr("Device discovery failed: %1").arg(QString::fromUtf8(error.what()));
  }
  result.devices = std::move(infos);
  return result;
}

// Opens the store once (creating it as the CLI would) so a file that is not chipfit's, is newer than
// this binary or is damaged is reported when the window opens, not after a profile. Empty: usable.
QString CheckStoreOnPool(const std::filesystem::path& db) {
  auto store = RunStore::Open(db);
  return store.ok() ? QString() : QString::fromStdString(store.status().message());
}

}  // namespace

MainWindow::MainWindow(DiscoverFunction discover, QWidget* parent, std::filesystem::path db)
    : QMainWindow(parent),
      db_(db.empty() ? RunStore::DefaultPath() : std::move(db)),
      navigation_(new QListWidget(this)),
      pages_(new QStackedWidget(this)),
      limits_(new LimitsModel(this)),
      model_page_(new ModelPage(this)),
      targets_page_(new TargetsPage(limits_, this)),
      run_page_(new RunPage(discover, this)),
      devices_page_(new DevicesPage(this)),
      selection_(new LayerSelection(this)),
      layers_page_(new LayersPage(selection_, this)),
      graph_page_(new GraphPage(selection_, this)),
      compare_page_(new ComparePage(selection_, this)),
      recommend_page_(new RecommendPage(limits_, this)),
      history_page_(new HistoryPage(db_, this)),
      machine_label_(new QLabel(this)),
      device_count_label_(new QLabel(tr("Discovering devices…"), this)),
      store_label_(new QLabel(this)) {
  setWindowTitle(QStringLiteral("chipfit"));
  resize(1280, 800);
  // Pool threads (discovery, model analysis) that ran oneDNN each keep an OpenMP thread team while
  // they live. With more OpenMP threads than cores, libgomp stops spinning at its barriers and sleeps
  // instead, and the profile's kernels pay a futex round trip at every barrier: PP-OCR cls on cpu:fp32
  // measured 5 ms instead of the CLI's 0.5 ms on 2 cores. Pool threads that exit as soon as they are
  // idle take their teams with them, so during a profile its worker is the only OpenMP master.
  QThreadPool::globalInstance()->setExpiryTimeout(0);
  setAcceptDrops(true);

  navigation_->setObjectName(QStringLiteral("navigation"));
  navigation_->setMaximumWidth(180);
  navigation_->setSelectionMode(QAbstractItemView::SingleSelection);
  pages_->setObjectName(QStringLiteral("pages"));
  // In the order of the work: set up, run, analyse, decide, look back; Ctrl+1 … Ctrl+9 go to them.
  addPage(tr("Model"), model_page_);
  addPage(tr("Targets"), targets_page_);
  addPage(tr("Run"), run_page_);
  addPage(tr("Layers"), layers_page_);
  addPage(tr("Graph"), graph_page_);
  addPage(tr("Compare"), compare_page_);
  addPage(tr("Recommend"), recommend_page_);
  addPage(tr("History"), history_page_);
  addPage(tr("Devices"), devices_page_);
  connect(navigation_, &QListWidget::currentRowChanged, pages_, &QStackedWidget::setCurrentIndex);
  connect(pages_, &QStackedWidget::currentChanged, this, [this](int index) { refreshPage(pages_->widget(index)); });
  navigation_->setCurrentRow(0);

  auto* central = new QWidget(this);
  auto* layout = new QHBoxLayout(central);
  layout->addWidget(navigation_);
  layout->addWidget(pages_, 1);
  setCentralWidget(central);

  machine_label_->setObjectName(QStringLiteral("machine"));
  device_count_label_->setObjectName(QStringLiteral("deviceCount"));
  store_label_->setObjectName(QStringLiteral("storePath"));
  store_label_->setText(tr("store: %1").arg(QString::fromStdString(db_.string())));
  statusBar()->addWidget(device_count_label_);
  statusBar()->addWidget(machine_label_);
  statusBar()->addPermanentWidget(store_label_);

  connect(model_page_, &ModelPage::modelLoaded, this, &MainWindow::onModelLoaded);
  connect(model_page_, &ModelPage::loadFailed, this, [this](const QString& path, const QString& message) {
    showError(tr("Cannot open the model"), tr("%1\n\n%2").arg(path, message));
  });
  connect(targets_page_, &TargetsPage::optionsChanged, this, &MainWindow::updateActions);
  connect(devices_page_, &DevicesPage::measuringFinished, this, &MainWindow::updateActions);
  connect(recommend_page_, &RecommendPage::chooseDataFolderRequested, this, [this] {
    showPage(targets_page_);
    if (auto* browse = targets_page_->findChild<QPushButton*>(QStringLiteral("browseDataDir"))) browse->click();
  });
  connect(run_page_, &RunPage::runningChanged, this, &MainWindow::updateActions);
  connect(run_page_, &RunPage::runFailed, this,
          [this](const QString& message) { showError(tr("The run stopped"), message); });

  connect(run_page_, &RunPage::runFinished, this, &MainWindow::onRunFinished);
  connect(run_page_, &RunPage::partialRun, this, &MainWindow::onPartialRun);
  connect(history_page_, &HistoryPage::openRun, this, [this](std::shared_ptr<const RunResult> run) {
    showRun(std::move(run), tr("opened from History"));
    showPage(layers_page_);
  });
  connect(history_page_, &HistoryPage::compareRuns, this,
          [this](std::shared_ptr<const RunResult> a, std::shared_ptr<const RunResult> b) {
            // Compare shows the two runs; the open run and model stay as they are (the pages that follow
            // the open run must not switch models behind the user's back).
            stale_pages_.removeOne(compare_page_);
            compare_page_->setRuns(std::move(a), std::move(b));
            showPage(compare_page_);
          });
  connect(history_page_, &HistoryPage::rerunRequested, this,
          [this](const std::shared_ptr<const RunResult>& run) { rerun(run); });
  connect(history_page_, &HistoryPage::failed, this,
          [this](const QString& message) { showError(tr("The run store"), message); });
  connect(layers_page_, &LayersPage::whatIfRequested, this, [this](const QString& target, const QStringList& nodes) {
    if (current_run_) rerun(current_run_, target, nodes);
  });

  createMenus();
  updateActions();
  startDiscovery(std::move(discover));
  checkStore();
}

bool MainWindow::isDiscovering() const { return devices_page_->isDiscovering(); }

QString MainWindow::aboutText(const QStringList& versions) {
  QString text = tr("<h3>chipfit %1</h3>"
                    "<p>Model profiling and hardware selection workbench.</p>"
                    "<p>Revision %2, Qt %3 (built with %4)</p>")
                     .arg(QStringLiteral(CHIPFIT_VERSION), QStringLiteral(CHIPFIT_GIT_REVISION),
                          QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR));
  if (!versions.isEmpty()) {
    text += tr("<p>Found on this machine:<br>%1</p>").arg(versions.join(QStringLiteral("<br>")));
  } else {
    text += tr("<p>Device libraries: discovery has not finished (or found none).</p>");
  }
  return text;
}

void MainWindow::addPage(const QString& title, QWidget* page) {
  pages_->addWidget(page);
  navigation_->addItem(title);
}

void MainWindow::showPage(QWidget* page) {
  const int index = pages_->indexOf(page);
  if (index >= 0) navigation_->setCurrentRow(index);
}

void MainWindow::createMenus() {
  QMenu* file_menu = menuBar()->addMenu(tr("&File"));
  QAction* open = open_action_ = file_menu->addAction(tr("&Open model…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open an ONNX model"), QString(),
                                                      tr("ONNX models (*.onnx);;All files (*)"));
    if (!path.isEmpty()) openModel(path);
  });
  open->setObjectName(QStringLiteral("openAction"));
  open->setShortcut(QKeySequence::Open);
  recent_menu_ = file_menu->addMenu(tr("Open &recent"));
  recent_menu_->setObjectName(QStringLiteral("recentMenu"));
  rebuildRecentMenu();
  // The long jobs of the File and Model menus: dialogs, a progress dialog with Cancel, a result message.
  model_actions_ = new ModelActions(this);
  connect(model_actions_, &ModelActions::runOpened, this, [this](std::shared_ptr<const RunResult> run) {
    showRun(std::move(run));
    showPage(layers_page_);
  });
  QAction* open_json = file_menu->addAction(tr("Open profile &JSON…"), model_actions_, &ModelActions::openProfileJson);
  open_json->setObjectName(QStringLiteral("openProfileJsonAction"));
  open_json->setToolTip(tr("Show a profile saved as JSON (a JSON report, or one made on another machine)"));
  export_action_ = file_menu->addAction(tr("&Export report…"), this, [this] {
    refreshPage(recommend_page_);  // the report of the current run, even when Recommend was never shown
    recommend_page_->exportClicked();
  });
  export_action_->setObjectName(QStringLiteral("exportAction"));
  export_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  file_menu->addSeparator();
  QAction* quit = file_menu->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows);
  quit->setObjectName(QStringLiteral("quitAction"));
  // Not every platform theme has a Quit key (the offscreen one has none): Ctrl+Q then.
  quit->setShortcut(QKeySequence(QKeySequence::Quit).isEmpty() ? QKeySequence(Qt::CTRL | Qt::Key_Q)
                                                               : QKeySequence(QKeySequence::Quit));
  quit->setMenuRole(QAction::QuitRole);

  QMenu* model_menu = menuBar()->addMenu(tr("&Model"));
  model_menu->setObjectName(QStringLiteral("modelMenu"));
  QAction* export_int8 = model_menu->addAction(tr("Export &int8 model…"), this, [this] {
    const ProfileOptions settings = targets_page_->options();  // the data folder and calibration to use
    Int8ExportRequest request{.model = model_path_.toStdString(), .shapes = {}, .output = {}};
    for (const QString& shape : model_shapes_) request.shapes.push_back(shape.toStdString());
    request.data_dir = settings.data_dir;
    request.data = settings.data;
    request.method = settings.calibration;
    request.percentile = settings.calibration_percentile;
    request.random_samples = settings.calibration_samples;
    request.seed = settings.seed;
    request.keep_fp32 = settings.keep_fp32;
    model_actions_->exportInt8(std::move(request));
  });
  export_int8->setObjectName(QStringLiteral("exportInt8Action"));
  QAction* save_outputs = model_menu->addAction(tr("&Save outputs…"), this, [this] {
    const ProfileOptions settings = targets_page_->options();
    SaveOutputsRequest request{.model = model_path_.toStdString(), .shapes = {}, .target = {}, .folder = {}};
    for (const QString& shape : model_shapes_) request.shapes.push_back(shape.toStdString());
    request.data_dir = settings.data_dir;
    request.data = settings.data;
    QStringList targets;
    if (const auto analysis = model_page_->analysis()) {
      for (const TargetPlacement& p : analysis->placements) {
        if (p.status == "ok") targets << QString::fromStdString(p.target.ToString());
      }
    }
    if (targets.isEmpty()) targets << QStringLiteral("cpu:fp32");
    model_actions_->saveOutputs(std::move(request), targets);
  });
  save_outputs->setObjectName(QStringLiteral("saveOutputsAction"));
  // Both need an analysed model with its dims bound, and no profile timing on the same cores.
  connect(model_menu, &QMenu::aboutToShow, this, [this, export_int8, save_outputs] {
    const auto analysis = model_page_->analysis();
    const bool ready = analysis && analysis->unbound_inputs.empty() && !run_page_->isRunning() &&
                       !model_actions_->isBusy() && !model_path_.isEmpty();
    export_int8->setEnabled(ready);
    save_outputs->setEnabled(ready);
  });

  QMenu* run_menu = menuBar()->addMenu(tr("&Run"));
  run_action_ = run_menu->addAction(tr("&Profile ticked targets"), this, &MainWindow::runProfile);
  run_action_->setObjectName(QStringLiteral("runAction"));
  run_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  cancel_action_ = run_menu->addAction(tr("&Cancel the run"), this, &MainWindow::cancelRun);
  cancel_action_->setObjectName(QStringLiteral("cancelAction"));
  cancel_action_->setShortcut(QKeySequence(Qt::Key_Escape));
  run_menu->addSeparator();
  QAction* batch = run_menu->addAction(tr("&Batch manifest…"), this, [this] { model_actions_->runBatch(db_); });
  batch->setObjectName(QStringLiteral("batchAction"));
  batch->setToolTip(tr("Profile every model a batch manifest lists, with its targets and limits, into this store"));
  // Not while a profile times its targets: the batch's kernels would share the cores.
  connect(run_menu, &QMenu::aboutToShow, this,
          [this, batch] { batch->setEnabled(!run_page_->isRunning() && !model_actions_->isBusy()); });
  // A finished batch (or a merge-like import) adds runs: History reads the store again.
  connect(model_actions_, &ModelActions::finished, history_page_, &HistoryPage::refresh);

  QMenu* view_menu = menuBar()->addMenu(tr("&View"));
  for (int i = 0; i < pages_->count() && i < 9; ++i) {
    QAction* go =
        view_menu->addAction(navigation_->item(i)->text(), this, [this, i] { navigation_->setCurrentRow(i); });
    go->setObjectName(QStringLiteral("page%1Action").arg(i + 1));
    go->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
  }
  view_menu->addSeparator();
  QAction* find = view_menu->addAction(tr("&Find layer"), this, [this] {
    showPage(layers_page_);
    if (auto* search = layers_page_->findChild<QWidget*>(QStringLiteral("layerSearch"))) search->setFocus();
  });
  find->setObjectName(QStringLiteral("findAction"));
  find->setShortcut(QKeySequence::Find);
  QAction* refresh = view_menu->addAction(tr("&Refresh history"), history_page_, &HistoryPage::refresh);
  refresh->setObjectName(QStringLiteral("refreshHistoryAction"));
  refresh->setShortcut(QKeySequence::Refresh);

  QMenu* help_menu = menuBar()->addMenu(tr("&Help"));
  QAction* keys = help_menu->addAction(tr("&Keyboard shortcuts"), this, [this] {
    auto* box = new QMessageBox(
        QMessageBox::Information, tr("Keyboard shortcuts"),
        QStringLiteral("<table>") +
            shortcutList()
                .replaceInStrings(QStringLiteral("\t"), QStringLiteral("</b></td><td>"))
                .replaceInStrings(QRegularExpression(QStringLiteral("^")), QStringLiteral("<tr><td><b>"))
                .join(QStringLiteral("</td></tr>")) +
            QStringLiteral("</td></tr></table>"),
        QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("shortcutsDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  });
  keys->setObjectName(QStringLiteral("shortcutsAction"));
  keys->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Slash));
  QAction* about = help_menu->addAction(tr("&About chipfit"), this, [this] {
    QMessageBox::about(this, tr("About chipfit"), aboutText(device_versions_));
  });
  about->setObjectName(QStringLiteral("aboutAction"));
  about->setMenuRole(QAction::AboutRole);
}

void MainWindow::updateActions() {
  const bool running = run_page_->isRunning();
  // No model analysis while a profile runs: its kernels would share the cores (and OpenMP) with the
  // targets being timed. Opening, dropping and editing dims wait for the run to end.
  open_action_->setEnabled(!running);
  recent_menu_->setEnabled(!running && !recent_menu_->actions().isEmpty());
  model_page_->setEnabled(!running);
  devices_page_->setMeasureAllowed(!running);
  run_action_->setEnabled(!running && !devices_page_->isMeasuring() && !model_path_.isEmpty() &&
                          targets_page_->hasCheckedTargets());
  cancel_action_->setEnabled(running);
  export_action_->setEnabled(current_run_ != nullptr);
}

void MainWindow::openModel(const QString& path, const QStringList& shapes) {
  showPage(model_page_);
  model_page_->openModel(path, shapes);
}

void MainWindow::onModelLoaded(const QString& path, const QString& sha256, const QStringList& shapes) {
  const bool fresh = path != model_path_;
  model_path_ = path;
  model_shapes_ = shapes;
  setWindowTitle(tr("%1 — chipfit").arg(QFileInfo(path).fileName()));
  if (fresh) {
    targets_page_->setModelKey(sha256);
    rememberRecent(path);
  }
  // The graph and the layer details read the model's nodes (with the shapes of this binding).
  graph_page_->setModel(model_page_->analysis());
  layers_page_->setAnalysis(model_page_->analysis());
  updateActions();
  if (std::exchange(profile_after_load_, false)) runProfile();
}

void MainWindow::showRun(std::shared_ptr<const RunResult> run) { showRun(std::move(run), tr("opened")); }

void MainWindow::showRun(std::shared_ptr<const RunResult> run, const QString& origin) {
  if (!run) return;
  current_run_ = std::move(run);
  stale_pages_ = {layers_page_, graph_page_, compare_page_, recommend_page_};
  // Every page follows the open run: Run too, unless it is showing the profile in progress.
  run_page_->showRun(current_run_, origin);
  refreshPage(pages_->currentWidget());
  // A stored run of another model (or shapes): open that model too, without leaving the page the user
  // is on, so the graph and the details show its nodes. A file that moved since is said on the Model page.
  QStringList shapes;
  for (const auto& [name, dims] : current_run_->inputs.shapes) shapes << QString::fromStdString(name + "=" + dims);
  const QString path = QString::fromStdString(current_run_->model.path);
  const bool same_model =
      QFileInfo(path).absoluteFilePath() == QFileInfo(model_path_).absoluteFilePath() && shapes == model_shapes_;
  if (!same_model && !run_page_->isRunning() && QFileInfo::exists(path)) model_page_->openModel(path, shapes);
  updateActions();
}

void MainWindow::onPartialRun(std::shared_ptr<const RunResult> run) {
  // The profile in progress, one finished target more: the pages show it at once (the model is the
  // open one, nothing to load), and the run before it is kept for a cancel that leaves nothing.
  if (!profiling_run_shown_) {
    run_before_profile_ = current_run_;
    profiling_run_shown_ = true;
  }
  current_run_ = std::move(run);
  stale_pages_ = {layers_page_, graph_page_, compare_page_, recommend_page_};
  refreshPage(pages_->currentWidget());
  updateActions();
}

void MainWindow::refreshPage(QWidget* page) {
  if (!stale_pages_.removeOne(page)) return;
  if (page == layers_page_) {
    layers_page_->setRun(current_run_);
  } else if (page == graph_page_) {
    graph_page_->setRun(current_run_);
  } else if (page == compare_page_) {
    compare_page_->setRuns(current_run_, current_run_);
  } else if (page == recommend_page_) {
    recommend_page_->setRun(current_run_);
  }
}

void MainWindow::onRunFinished(std::shared_ptr<const RunResult> run) {
  history_page_->refresh();
  const std::shared_ptr<const RunResult> base = std::exchange(what_if_base_, nullptr);
  const std::shared_ptr<const RunResult> before = std::exchange(run_before_profile_, nullptr);
  profiling_run_shown_ = false;
  const bool any_figures =
      std::any_of(run->targets.begin(), run->targets.end(), [](const auto& t) { return t->status == "ok"; });
  if (!any_figures) {
    // Nothing measured (cancelled before a target finished, or every target failed): the pages keep the
    // run they showed; the Run page says what happened to this one.
    if (before) showRun(before, tr("shown again"));
    statusBar()->showMessage(
        tr("Run %1 %2 before any target finished; the pages still show the previous run.")
            .arg(run->run_id ? QString::number(*run->run_id) : QString(), QString::fromStdString(run->status)),
        10000);
    return;
  }
  current_run_ = nullptr;  // so showRun hands the finished run to every page, the Run page included
  showRun(run, tr("just profiled"));
  if (base) {
    // What-if: the old result beside the new one, with what the re-run was for: the drift it bought.
    stale_pages_.removeOne(compare_page_);
    compare_page_->setRuns(base, run);
    compare_page_->setTargets(what_if_target_, what_if_target_);
    compare_page_->setNote(tr("What-if on %1: kept in fp32 %2.").arg(what_if_target_, what_if_nodes_.join(", ")));
    showPage(compare_page_);
  }
}

bool MainWindow::rerun(const std::shared_ptr<const RunResult>& run, const QString& target,
                       const QStringList& keep_fp32) {
  if (!run || run_page_->isRunning()) return false;
  const QString path = QString::fromStdString(run->model.path);
  if (!QFileInfo::exists(path)) {
    showError(tr("Cannot re-run"), tr("The model of run %1 is no longer at %2.")
                                       .arg(run->run_id ? QString::number(*run->run_id) : QString(), path));
    return false;
  }
  ProfileOptions options;
  const RunSettings& s = run->settings;
  options.warmup = s.warmup;
  options.iterations = s.iterations;
  options.min_time_s = s.min_time_s;
  options.threads = s.threads;
  options.reference = s.reference;
  if (const auto method = ParseCalibrationMethod(s.calibration)) options.calibration = *method;
  options.int8_all_layers = s.int8_all_layers;
  std::vector<std::string> names;
  if (!target.isEmpty()) {
    names.push_back(target.toStdString());
  } else if (s.targets == "all") {
    options.all_targets = true;
  } else {
    for (const auto& t : run->targets) names.push_back(t->target.ToString());
  }
  for (const std::string& name : names) {
    auto parsed = ParseTarget(name);
    if (!parsed.ok()) {
      showError(tr("Cannot re-run"), QString::fromStdString(parsed.status().message()));
      return false;
    }
    options.targets.push_back(*parsed);
  }
  options.targets_text = target.isEmpty() ? s.targets : target.toStdString();
  for (const auto& [name, dims] : run->inputs.shapes) options.shapes.push_back(name + "=" + dims);
  if (run->inputs.source.rfind("data ", 0) == 0) options.data_dir = run->inputs.source.substr(5);
  for (const QString& node : keep_fp32) options.keep_fp32.push_back(node.toStdString());
  // Re-running a What-if run repeats it: the same layers in fp32.
  if (keep_fp32.isEmpty()) options.keep_fp32 = s.keep_fp32;
  options.store = true;
  options.db = db_;
  options.source = "gui";
  options.stop_source = "Cancel";
  options.command = "chipfit-gui " + path.toStdString() +
                    (keep_fp32.isEmpty() ? "" : " (what-if: keep in fp32 " + keep_fp32.join(",").toStdString() + ")");
  what_if_base_ = keep_fp32.isEmpty() ? nullptr : run;
  what_if_target_ = target;
  what_if_nodes_ = keep_fp32;
  showPage(run_page_);
  if (!run_page_->start(path, options)) {
    what_if_base_ = nullptr;
    return false;
  }
  return true;
}

void MainWindow::openStoredRun(qint64 run_id, bool show_layers) {
  auto error = std::make_shared<QString>();
  auto load = [db = db_, run_id, error]() -> std::shared_ptr<const RunResult> {
    auto store = RunStore::Open(db);
    if (!store.ok()) {
      *error = QString::fromStdString(store.status().message());
      return nullptr;
    }
    auto json = (*store)->LoadRun(run_id);
    if (!json.ok()) {
      *error = QString::fromStdString(json.status().message());
      return nullptr;
    }
    auto run = RunResultFromJson(*json);
    if (!run.ok()) {
      *error = QString::fromStdString(run.status().message());
      return nullptr;
    }
    return std::make_shared<const RunResult>(std::move(*run));
  };
  stored_run_watcher_.disconnect(this);
  connect(&stored_run_watcher_, &QFutureWatcher<std::shared_ptr<const RunResult>>::finished, this,
          [this, run_id, error, show_layers] {
            std::shared_ptr<const RunResult> run = stored_run_watcher_.result();
            if (!run) {
              showError(tr("Cannot open run %1").arg(run_id),
                        tr("%1\n\nstore: %2").arg(*error, QString::fromStdString(db_.string())));
              return;
            }
            showRun(std::move(run));
            if (show_layers) showPage(layers_page_);
          });
  stored_run_watcher_.setFuture(QtConcurrent::run(std::move(load)));
}

bool MainWindow::showPageNamed(const QString& title) {
  for (int i = 0; i < navigation_->count(); ++i) {
    if (navigation_->item(i)->text().compare(title, Qt::CaseInsensitive) == 0) {
      navigation_->setCurrentRow(i);
      return true;
    }
  }
  return false;
}

bool MainWindow::exportReport(const QString& path) {
  refreshPage(recommend_page_);  // the report of the current run, even when Recommend was never shown
  QString error;
  if (recommend_page_->exportReport(path, &error)) {
    statusBar()->showMessage(tr("Report written to %1").arg(path), 5000);
    return true;
  }
  showError(tr("Cannot export the report"), error);
  return false;
}

QStringList MainWindow::shortcutList() const {
  QStringList out;
  for (const QAction* action : findChildren<QAction*>()) {
    if (action->shortcut().isEmpty()) continue;
    out << action->shortcut().toString(QKeySequence::NativeText) + QStringLiteral("\t") +
               QString(action->text()).remove(QChar('&'));
  }
  out << tr("Ctrl+Wheel\tZoom the graph") << tr("Delete\tDelete the selected runs (History)");
  return out;
}

void MainWindow::restoreLayout() {
  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  for (QSplitter* splitter : findChildren<QSplitter*>()) {
    if (splitter->objectName().isEmpty()) continue;
    splitter->restoreState(settings.value(QStringLiteral("splitters/") + splitter->objectName()).toByteArray());
  }
}

void MainWindow::saveLayout() const {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  for (const QSplitter* splitter : findChildren<QSplitter*>()) {
    if (!splitter->objectName().isEmpty())
      settings.setValue(QStringLiteral("splitters/") + splitter->objectName(), splitter->saveState());
  }
}

void MainWindow::showEvent(QShowEvent* event) {
  // Once, before the first paint: the size and splitters the user left.
  if (!layout_restored_) {
    layout_restored_ = true;
    restoreLayout();
  }
  QMainWindow::showEvent(event);
}

bool MainWindow::runProfile() {
  if (run_page_->isRunning()) return false;
  if (devices_page_->isMeasuring()) {
    showError(tr("Measuring the devices"),
              tr("The Devices page is measuring the ceilings: profile once it has finished (or Cancel it there), "
                 "so the two do not time the same cores."));
    return false;
  }
  if (model_path_.isEmpty()) {
    showError(tr("No model"), tr("Open an ONNX model first (File › Open, Ctrl+O)."));
    return false;
  }
  if (const auto analysis = model_page_->analysis(); analysis && !analysis->unbound_inputs.empty()) {
    askForUnboundDims(*analysis);
    return false;
  }
  ProfileOptions options = targets_page_->options();
  if (options.targets.empty()) {
    showError(tr("No target"), tr("Tick at least one target on the Targets page."));
    return false;
  }
  for (const QString& shape : model_shapes_) options.shapes.push_back(shape.toStdString());
  options.store = true;
  options.db = db_;
  options.source = "gui";
  options.stop_source = "Cancel";
  options.command = "chipfit-gui " + model_path_.toStdString();
  showPage(run_page_);
  return run_page_->start(model_path_, options);
}

void MainWindow::cancelRun() { run_page_->cancel(); }

QStringList MainWindow::batchOnlyBindings(const ModelAnalysis& analysis, const QStringList& shapes) {
  QStringList bindings = shapes;
  for (const TensorSpec& input : analysis.declared_inputs) {
    const QString name = QString::fromStdString(input.name);
    if (std::any_of(shapes.begin(), shapes.end(), [&](const QString& s) { return s.startsWith(name + '='); })) continue;
    if (input.dims.empty() ||
        std::all_of(input.dims.begin(), input.dims.end(), [](const DimSpec& d) { return d.is_static(); })) {
      continue;
    }
    // Only the leading dim may be open: the others have no size a default could guess.
    if (input.dims[0].is_static()) return {};
    QStringList dims{QStringLiteral("1")};
    for (size_t i = 1; i < input.dims.size(); ++i) {
      if (!input.dims[i].is_static()) return {};
      dims << QString::number(input.dims[i].value);
    }
    bindings << name + '=' + dims.join('x');
  }
  return bindings == shapes ? QStringList() : bindings;
}

void MainWindow::askForUnboundDims(const ModelAnalysis& analysis) {
  QStringList unbound;
  for (const std::string& input : analysis.unbound_inputs) unbound << QString::fromStdString(input);
  const QStringList batch_of_one = batchOnlyBindings(analysis, model_shapes_);
  const QString text =
      tr("The model leaves input dims open: %1.\n\nEvery dim needs a size before the model can be compiled.")
          .arg(unbound.join(QStringLiteral(", ")));
  auto* box = new QMessageBox(QMessageBox::Warning, tr("Dynamic dims not bound"), text, QMessageBox::Cancel, this);
  box->setObjectName(QStringLiteral("errorDialog"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  if (!batch_of_one.isEmpty()) {
    QPushButton* batch = box->addButton(tr("Use 1 for the batch dim and profile"), QMessageBox::AcceptRole);
    batch->setObjectName(QStringLiteral("useBatchOfOne"));
    connect(batch, &QPushButton::clicked, this, [this, batch_of_one] {
      profile_after_load_ = true;
      model_page_->openModel(model_path_, batch_of_one);
    });
  }
  QPushButton* set = box->addButton(tr("Set the dims on the Model page"), QMessageBox::ActionRole);
  set->setObjectName(QStringLiteral("setDims"));
  connect(set, &QPushButton::clicked, this, [this] { showPage(model_page_); });
  box->open();
  emit errorShown(text);
}

void MainWindow::showError(const QString& title, const QString& raw_text) {
  // Core messages name CLI flags; the dialog names the controls that do the same here.
  const QString text = GuiWording(raw_text);
  // Window-modal and non-blocking (open, not exec): the event loop, and a run in progress, go on.
  auto* box = new QMessageBox(QMessageBox::Critical, title, text, QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("errorDialog"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  emit errorShown(text);
}

void MainWindow::rememberRecent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value(kRecentKey).toStringList();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  recent.removeAll(absolute);
  recent.prepend(absolute);
  while (recent.size() > kMaxRecentFiles) recent.removeLast();
  settings.setValue(kRecentKey, recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value(kRecentKey).toStringList();
  for (const QString& path : recent) {
    recent_menu_->addAction(QFileInfo(path).fileName() + QStringLiteral("  —  ") + path, this,
                            [this, path] { openModel(path); });
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!ModelPage::OnnxFileIn(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = ModelPage::OnnxFileIn(event->mimeData());
  if (path.isEmpty() || run_page_->isRunning()) return;
  event->acceptProposedAction();
  openModel(path);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  // The run's worker stops after its current kernel (RunPage's runner joins it); the run is then
  // stored as cancelled, never left looking like a finished one.
  run_page_->cancel();
  saveLayout();
  QMainWindow::closeEvent(event);
}

void MainWindow::checkStore() {
  connect(&store_watcher_, &QFutureWatcher<QString>::finished, this, [this] {
    const QString problem = store_watcher_.result();
    if (problem.isEmpty()) return;
    store_label_->setText(tr("store: %1 (unusable)").arg(QString::fromStdString(db_.string())));
    showError(tr("The run store cannot be used"),
              tr("%1\n\nRuns cannot be stored until this is fixed. To use another store, start chipfit-gui with "
                 "--db FILE.")
                  .arg(problem));
  });
  store_watcher_.setFuture(QtConcurrent::run(CheckStoreOnPool, db_));
}

void MainWindow::startDiscovery(DiscoverFunction discover) {
  // Discovery loads OpenCL ICDs and the CUDA driver, which can take seconds; the window must paint and
  // respond meanwhile, so it runs on the global pool and comes back through the watcher.
  connect(&discovery_watcher_, &QFutureWatcher<DiscoveredDevices>::finished, this, &MainWindow::onDiscoveryFinished);
  discovery_watcher_.setFuture(QtConcurrent::run(Discover, std::move(discover)));
}

void MainWindow::onDiscoveryFinished() {
  Q_ASSERT(QThread::currentThread() == thread());
  const DiscoveredDevices discovered = discovery_watcher_.result();
  const int count = discovered.devices ? static_cast<int>(discovered.devices->size()) : 0;
  devices_page_->setDiscovery(discovered.devices, discovered.notes);
  targets_page_->setDevices(discovered.devices);
  std::vector<Target> targets;
  QString machine;
  if (discovered.devices) {
    for (const DeviceInfo& info : *discovered.devices) {
      if (info.kind == DeviceKind::kCpu && machine.isEmpty()) {
        machine = tr("machine: %1, %n core(s)", nullptr, info.compute_units).arg(QString::fromStdString(info.name));
      }
      for (const PrecisionSupport& p : info.precisions) {
        if (p.support.ok) targets.push_back({info.kind, info.index, p.precision});
      }
      if (!info.runtime_version.empty() || !info.driver_version.empty()) {
        device_versions_ << QStringLiteral("%1: %2 — %3%4")
                                .arg(QString::fromStdString(info.Id()), QString::fromStdString(info.name),
                                     QString::fromStdString(info.runtime_version),
                                     info.driver_version.empty()
                                         ? QString()
                                         : tr(", driver %1").arg(QString::fromStdString(info.driver_version)));
      }
    }
  }
  model_page_->setTargets(std::move(targets));
  machine_label_->setText(machine);
  device_count_label_->setText(count == 1 ? tr("1 device") : tr("%1 devices").arg(count));
  updateActions();
  emit devicesDiscovered(count);
}

}  // namespace chipfit
