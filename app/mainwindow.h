// MainWindow: chipfit-gui's one window: page navigation, menus, the model the pages share, the run
// store, and device discovery off the GUI thread.
#pragma once

#include <QFutureWatcher>
#include <QMainWindow>
#include <QStringList>
#include <filesystem>
#include <functional>
#include <memory>

#include "devices/registry.h"
#include "profilers/run_result.h"
#include "views/models/devices_model.h"

class QAction;
class QLabel;
class QListWidget;
class QMenu;
class QStackedWidget;

namespace chipfit {

class ComparePage;
struct ModelAnalysis;
class DevicesPage;
class GraphPage;
class HistoryPage;
class LayerSelection;
class LayersPage;
class LimitsModel;
class ModelActions;
class ModelPage;
class RecommendPage;
class RunPage;
class TargetsPage;

// What the GUI keeps of a discovery. The IDevice objects themselves stay on the worker thread that made
// them (a GPU context belongs to the thread that created it); pages only need the immutable infos.
struct DiscoveredDevices {
  DevicesModel::Snapshot devices;
  QStringList notes;
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  using DiscoverFunction = std::function<DiscoveryReport()>;

  // `discover` runs on a pool thread (and again on the run's worker when a profile starts); tests pass
  // their own to control what is found and when. `db`: the run store (empty: the CLI's default path).
  explicit MainWindow(DiscoverFunction discover = &DiscoverDevices, QWidget* parent = nullptr,
                      std::filesystem::path db = {});

  DevicesPage* devicesPage() const { return devices_page_; }
  ModelPage* modelPage() const { return model_page_; }
  TargetsPage* targetsPage() const { return targets_page_; }
  RunPage* runPage() const { return run_page_; }
  LayersPage* layersPage() const { return layers_page_; }
  GraphPage* graphPage() const { return graph_page_; }
  ComparePage* comparePage() const { return compare_page_; }
  RecommendPage* recommendPage() const { return recommend_page_; }
  HistoryPage* historyPage() const { return history_page_; }
  LayerSelection* selection() const { return selection_; }
  LimitsModel* limits() const { return limits_; }
  // The run the analysis pages show (the last finished or the one opened from History), or null.
  const std::shared_ptr<const RunResult>& currentRun() const { return current_run_; }
  bool isDiscovering() const;
  const std::filesystem::path& storePath() const { return db_; }
  QString modelPath() const { return model_path_; }

  // Opens (analyses) a model with its dynamic dims bound by `shapes` ("NAME=1x3x48x192"); the Model
  // page shows it. Errors come as a dialog naming the file.
  void openModel(const QString& path, const QStringList& shapes = {});
  // Profiles the open model on the Targets page's ticked targets (Ctrl+R); false when it cannot start.
  bool runProfile();
  // Stops a run after its current kernel (Esc); the run is stored `cancelled`.
  void cancelRun();
  void showPage(QWidget* page);
  // Shows `run` on Layers, Graph, Compare (its targets side by side) and Recommend; opens its model
  // (when the file is there and nothing runs) so the graph and the layer details have its nodes.
  void showRun(std::shared_ptr<const RunResult> run);
  // The same, saying where the run came from on the Run page ("opened from History").
  void showRun(std::shared_ptr<const RunResult> run, const QString& origin);
  // Bindings that give every input whose only open dim is the leading (batch) one a batch of 1, added
  // to `shapes`; empty when some other dim is open too (no default fits those).
  static QStringList batchOnlyBindings(const ModelAnalysis& analysis, const QStringList& shapes);
  // Profiles `run`'s model again with its settings (targets, shapes, iterations, threads …); with
  // `target` and `keep_fp32`, only that target with those nodes in fp32 (What-if), compared with the
  // old result when it finishes. False when it cannot start.
  bool rerun(const std::shared_ptr<const RunResult>& run, const QString& target = {},
             const QStringList& keep_fp32 = {});
  // Loads stored run `run_id` off the GUI thread and shows it (on Layers when `show_layers`; `chipfit-gui
  // --run ID`); a run that is not there gives a dialog naming the id and the store.
  void openStoredRun(qint64 run_id, bool show_layers = true);
  // Shows the page whose navigation title is `title` (case-insensitive); false when there is none.
  bool showPageNamed(const QString& title);
  // Writes the Recommend page's report (format from the suffix); false and a dialog on failure.
  bool exportReport(const QString& path);
  // Every action with a shortcut, as Help › Keyboard shortcuts lists them: "Ctrl+O\tOpen model…".
  QStringList shortcutList() const;

  // The About box's text: version and revision baked in at build time, Qt's version, and the
  // `versions` of the libraries and drivers discovery found ("oneDNN 3.0.0 (cpu)").
  static QString aboutText(const QStringList& versions = {});

 signals:
  void devicesDiscovered(int device_count);
  // A dialog the user must read went up (its text): tests and scripts watch for it.
  void errorShown(const QString& text);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;
  void showEvent(QShowEvent* event) override;

 private:
  void addPage(const QString& title, QWidget* page);
  void createMenus();
  void startDiscovery(DiscoverFunction discover);
  void onDiscoveryFinished();
  void onModelLoaded(const QString& path, const QString& sha256, const QStringList& shapes);
  void checkStore();
  void showError(const QString& title, const QString& text);
  void rememberRecent(const QString& path);
  void rebuildRecentMenu();
  void updateActions();
  void onRunFinished(std::shared_ptr<const RunResult> run);
  void onPartialRun(std::shared_ptr<const RunResult> run);
  // Ctrl+R with dims still open: which, and the ways to bind them (a batch of 1 where that is all).
  void askForUnboundDims(const ModelAnalysis& analysis);
  // Hands the current run to `page` if it has not had it yet. Pages get a new run only when shown, so
  // a run's end (or a History open) costs the GUI thread one page's tables and charts, not four.
  void refreshPage(QWidget* page);
  void restoreLayout();
  void saveLayout() const;

  std::filesystem::path db_;
  QListWidget* navigation_;
  QStackedWidget* pages_;
  LimitsModel* limits_;  // the open model's limits: one set, shown by Targets and Recommend
  ModelPage* model_page_;
  TargetsPage* targets_page_;
  RunPage* run_page_;
  DevicesPage* devices_page_;
  LayerSelection* selection_;
  LayersPage* layers_page_;
  GraphPage* graph_page_;
  ComparePage* compare_page_;
  RecommendPage* recommend_page_;
  HistoryPage* history_page_;
  std::shared_ptr<const RunResult> current_run_;
  QList<QWidget*> stale_pages_;  // analysis pages that have not been given current_run_ yet
  // A What-if run in flight: the run and target it answers, compared with it when it finishes.
  std::shared_ptr<const RunResult> what_if_base_;
  QString what_if_target_;
  QStringList what_if_nodes_;
  // While a profile streams its targets in: the run shown before it, for a run that ends with nothing.
  std::shared_ptr<const RunResult> run_before_profile_;
  bool profiling_run_shown_ = false;
  bool profile_after_load_ = false;  // "Use 1 for the batch dim": profile once the re-analysis is done
  QStringList device_versions_;      // "oneDNN 3.0 (cpu)", for Help › About
  bool layout_restored_ = false;
  QLabel* machine_label_;
  QLabel* device_count_label_;
  QLabel* store_label_;
  QMenu* recent_menu_ = nullptr;
  QAction* open_action_ = nullptr;
  QAction* run_action_ = nullptr;
  QAction* cancel_action_ = nullptr;
  QAction* export_action_ = nullptr;
  // Model › Export int8 model / Save outputs, File › Open profile JSON, Run › Batch manifest.
  ModelActions* model_actions_ = nullptr;
  QString model_path_;  // the model the pages show (after a successful analysis)
  QStringList model_shapes_;
  QFutureWatcher<DiscoveredDevices> discovery_watcher_;
  QFutureWatcher<QString> store_watcher_;
  QFutureWatcher<std::shared_ptr<const RunResult>> stored_run_watcher_;
  QString stored_run_error_;
};

}  // namespace chipfit
