// DevicesPage: the table of discovered devices and the notes on backends that found none.
#pragma once

#include <QStringList>
#include <QWidget>

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

  // Shows the discovery result; `notes` are the backends' lines ("CUDA: not built ...").
  void setDiscovery(DevicesModel::Snapshot devices, const QStringList& notes);
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
};

}  // namespace chipfit
