// DevicesPage: layout and the switch from "discovering" to the discovered devices.
#include "views/pages/devices_page.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QThread>
#include <QVBoxLayout>
#include <utility>

namespace chipfit {

DevicesPage::DevicesPage(QWidget* parent)
    : QWidget(parent),
      model_(new DevicesModel({}, this)),
      table_(new QTableView(this)),
      status_label_(new QLabel(tr("Discovering devices…"), this)),
      notes_label_(new QLabel(this)) {
  // Object names let tests and style sheets find the parts without accessors for every widget.
  table_->setObjectName(QStringLiteral("devicesTable"));
  status_label_->setObjectName(QStringLiteral("discoveryStatus"));
  notes_label_->setObjectName(QStringLiteral("discoveryNotes"));

  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  // Runtime strings run long ("OpenCL 3.0 PoCL HSTR: pthread-x86_64-..."); capping columns keeps
  // Precisions, the column users came for, on screen. The full text is in the tooltip.
  table_->horizontalHeader()->setMaximumSectionSize(300);

  notes_label_->setTextFormat(Qt::PlainText);  // notes come from drivers and may contain '<' or '&'
  notes_label_->setWordWrap(true);
  notes_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);  // users paste these into bug reports
  notes_label_->hide();

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(status_label_);
  layout->addWidget(table_, 1);
  layout->addWidget(notes_label_);
}

void DevicesPage::setDiscovery(DevicesModel::Snapshot devices, const QStringList& notes) {
  Q_ASSERT(QThread::currentThread() == thread());
  const auto count = devices ? devices->size() : 0;
  model_->setDevices(std::move(devices));
  discovering_ = false;
  status_label_->setText(count == 1 ? tr("1 device found") : tr("%1 devices found").arg(count));
  QStringList lines = notes;
  const std::filesystem::path cache = ceiling_cache_.empty() ? DefaultCeilingCachePath() : ceiling_cache_;
  auto ceilings = LoadCeilingCache(cache);
  std::vector<CeilingReport> reports;
  if (ceilings.ok()) {
    for (auto& [key, report] : *ceilings) reports.push_back(std::move(report));
  } else {
    // A corrupt cache is the user's to look at (profiles refuse it too), not a reason to hide devices.
    lines << tr("Roofline ceilings: %1").arg(QString::fromStdString(ceilings.status().message()));
  }
  model_->setCeilings(std::move(reports));
  notes_label_->setText(lines.join(QLatin1Char('\n')));
  notes_label_->setVisible(!lines.isEmpty());
  // The last column keeps stretching to the table's edge; sizing it to contents would undo that.
  for (int column = 0; column + 1 < model_->columnCount(); ++column) table_->resizeColumnToContents(column);
}

QString DevicesPage::statusText() const { return status_label_->text(); }

QString DevicesPage::notesText() const { return notes_label_->text(); }

}  // namespace chipfit
