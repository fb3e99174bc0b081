// DevicesPage: the table of discovered devices and the notes on backends that found none.
#pragma once

#include <QStringList>
#include <QWidget>
#include <filesystem>

#include "views/models/devices_model.h"

class QLabel;
class QTableView;

namespace chipfit {

// The page never discovers anything itself: whoever owns the worker hands it a finished snapshot, so the
// page stays a pure view that tests can fill with hand-made devices.
class DevicesPage : public QWidget {
  Q_OBJECT

 public:
  explicit DevicesPage(QWidget* parent = nullptr);

  // Shows the discovery result; `notes` are the backends' lines ("CUDA: not built ..."). The devices'
  // measured ceilings come from the ceilings cache, read here (a small file).
  void setDiscovery(DevicesModel::Snapshot devices, const QStringList& notes);
  // The ceilings cache to read (default: DefaultCeilingCachePath(); tests give their own).
  void setCeilingCachePath(std::filesystem::path path) { ceiling_cache_ = std::move(path); }
  bool isDiscovering() const { return discovering_; }

  DevicesModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QString statusText() const;
  QString notesText() const;

 private:
  DevicesModel* model_;
  QTableView* table_;
  QLabel* status_label_;
  QLabel* notes_label_;
  bool discovering_ = true;
  std::filesystem::path ceiling_cache_;
};

}  // namespace chipfit
