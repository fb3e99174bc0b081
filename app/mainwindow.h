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

class DevicesPage;
class ModelPage;
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

  // The About box's text: version and revision baked in at build time.
  static QString aboutText();

 signals:
  void devicesDiscovered(int device_count);
  // A dialog the user must read went up (its text): tests and scripts watch for it.
  void errorShown(const QString& text);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

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

  std::filesystem::path db_;
  QListWidget* navigation_;
  QStackedWidget* pages_;
  ModelPage* model_page_;
  TargetsPage* targets_page_;
  RunPage* run_page_;
  DevicesPage* devices_page_;
  QLabel* machine_label_;
  QLabel* device_count_label_;
  QLabel* store_label_;
  QMenu* recent_menu_ = nullptr;
  QAction* open_action_ = nullptr;
  QAction* run_action_ = nullptr;
  QAction* cancel_action_ = nullptr;
  QString model_path_;  // the model the pages show (after a successful analysis)
  QStringList model_shapes_;
  QFutureWatcher<DiscoveredDevices> discovery_watcher_;
  QFutureWatcher<QString> store_watcher_;
};

}  // namespace chipfit
