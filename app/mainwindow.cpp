// MainWindow: layout, menus, and the QtConcurrent discovery hand-off to the Devices page.
#include "app/mainwindow.h"

#include <QAction>
#include <QApplication>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QStackedWidget>
#include <QStatusBar>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <utility>
#include <vector>

#include "chipfit/version.h"
#include "views/pages/devices_page.h"

namespace chipfit {
namespace {

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

}  // namespace

MainWindow::MainWindow(DiscoverFunction discover, QWidget* parent)
    : QMainWindow(parent),
      navigation_(new QListWidget(this)),
      pages_(new QStackedWidget(this)),
      devices_page_(new DevicesPage(this)),
      device_count_label_(new QLabel(tr("Discovering devices…"), this)) {
  setWindowTitle(QStringLiteral("chipfit"));
  resize(1100, 680);

  navigation_->setObjectName(QStringLiteral("navigation"));
  navigation_->setMaximumWidth(180);
  navigation_->setSelectionMode(QAbstractItemView::SingleSelection);
  pages_->setObjectName(QStringLiteral("pages"));
  // Only pages that work are listed: Model, Targets, Run, Layers, Compare, Recommend and History join
  // the list when they do something, rather than sitting there as placeholders.
  addPage(tr("Devices"), devices_page_);
  connect(navigation_, &QListWidget::currentRowChanged, pages_, &QStackedWidget::setCurrentIndex);
  navigation_->setCurrentRow(0);

  auto* central = new QWidget(this);
  auto* layout = new QHBoxLayout(central);
  layout->addWidget(navigation_);
  layout->addWidget(pages_, 1);
  setCentralWidget(central);

  device_count_label_->setObjectName(QStringLiteral("deviceCount"));
  statusBar()->addWidget(device_count_label_);

  createMenus();
  startDiscovery(std::move(discover));
}

bool MainWindow::isDiscovering() const { return devices_page_->isDiscovering(); }

QString MainWindow::aboutText() {
  return tr("<h3>chipfit %1</h3>"
            "<p>Model profiling and hardware selection workbench.</p>"
            "<p>Revision %2, Qt %3</p>")
      .arg(QStringLiteral(CHIPFIT_VERSION), QStringLiteral(CHIPFIT_GIT_REVISION), QString::fromLatin1(qVersion()));
}

void MainWindow::addPage(const QString& title, QWidget* page) {
  pages_->addWidget(page);
  navigation_->addItem(title);
}

void MainWindow::createMenus() {
  QMenu* file_menu = menuBar()->addMenu(tr("&File"));
  QAction* quit = file_menu->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows);
  quit->setObjectName(QStringLiteral("quitAction"));
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);

  QMenu* help_menu = menuBar()->addMenu(tr("&Help"));
  QAction* about = help_menu->addAction(tr("&About chipfit"), this,
                                        [this] { QMessageBox::about(this, tr("About chipfit"), aboutText()); });
  about->setObjectName(QStringLiteral("aboutAction"));
  about->setMenuRole(QAction::AboutRole);
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
  device_count_label_->setText(count == 1 ? tr("1 device") : tr("%1 devices").arg(count));
  emit devicesDiscovered(count);
}

}  // namespace chipfit
