// MainWindow: chipfit-gui's one window: page navigation, menus, and device discovery off the GUI thread.
#pragma once

#include <QFutureWatcher>
#include <QMainWindow>
#include <QStringList>
#include <functional>

#include "devices/registry.h"
#include "views/models/devices_model.h"

class QLabel;
class QListWidget;
class QStackedWidget;

namespace chipfit {

class DevicesPage;

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

  // `discover` runs on a pool thread; tests pass their own to control what is found and when.
  explicit MainWindow(DiscoverFunction discover = &DiscoverDevices, QWidget* parent = nullptr);

  DevicesPage* devicesPage() const { return devices_page_; }
  bool isDiscovering() const;

  // The About box's text: version and revision baked in at build time.
  static QString aboutText();

 signals:
  void devicesDiscovered(int device_count);

 private:
  void addPage(const QString& title, QWidget* page);
  void createMenus();
  void startDiscovery(DiscoverFunction discover);
  void onDiscoveryFinished();

  QListWidget* navigation_;
  QStackedWidget* pages_;
  DevicesPage* devices_page_;
  QLabel* device_count_label_;
  QFutureWatcher<DiscoveredDevices> discovery_watcher_;
};

}  // namespace chipfit
