// FrozenTableView: the overlay that keeps column 0 in place, kept in step with the table under it.
#include "views/pages/frozen_table_view.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QScrollBar>

namespace chipfit {

FrozenTableView::FrozenTableView(QWidget* parent) : QTableView(parent), frozen_(new QTableView(this)) {
  frozen_->setObjectName(QStringLiteral("frozenColumn"));
  // Keys go to the table under it: the overlay is only a window onto column 0.
  frozen_->setFocusPolicy(Qt::NoFocus);
  frozen_->setFocusProxy(this);
  frozen_->setFrameShape(QFrame::NoFrame);
  frozen_->verticalHeader()->hide();
  frozen_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  frozen_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  frozen_->horizontalHeader()->setSectionsClickable(true);
  frozen_->horizontalHeader()->setSortIndicatorShown(true);
  // Per-pixel scrolling in both, so the two vertical scroll bars can hold the same value.
  setHorizontalScrollMode(ScrollPerPixel);
  setVerticalScrollMode(ScrollPerPixel);
  frozen_->setVerticalScrollMode(ScrollPerPixel);
  viewport()->stackUnder(frozen_);

  connect(frozen_->verticalScrollBar(), &QScrollBar::valueChanged, verticalScrollBar(), &QScrollBar::setValue);
  connect(verticalScrollBar(), &QScrollBar::valueChanged, frozen_->verticalScrollBar(), &QScrollBar::setValue);
  connect(horizontalHeader(), &QHeaderView::sectionResized, this, [this](int section, int, int size) {
    if (section != 0) return;
    frozen_->setColumnWidth(0, size);
    updateFrozenGeometry();
  });
  // Widening the name from the overlay's header widens the table's column 0 under it.
  connect(frozen_->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int section, int, int size) {
    if (section == 0) setColumnWidth(0, size);
  });
  connect(verticalHeader(), &QHeaderView::sectionResized, this,
          [this](int row, int, int size) { frozen_->setRowHeight(row, size); });
  connect(horizontalHeader(), &QHeaderView::sortIndicatorChanged, frozen_->horizontalHeader(),
          &QHeaderView::setSortIndicator);
  connect(frozen_->horizontalHeader(), &QHeaderView::sectionClicked, this, &FrozenTableView::sortByFrozenHeader);
  syncFrozenLook();
}

void FrozenTableView::setModel(QAbstractItemModel* model) {
  for (const QMetaObject::Connection& c : model_connections_) disconnect(c);
  model_connections_.clear();
  QTableView::setModel(model);
  frozen_->setModel(model);
  // The overlay's own selection model, made by setModel, gives way to the table's.
  QItemSelectionModel* own = frozen_->selectionModel();
  frozen_->setSelectionModel(selectionModel());
  if (own != nullptr && own != selectionModel()) own->deleteLater();
  if (model != nullptr) {
    // A reset or new columns show every column in the overlay again: hide them once more.
    model_connections_ = {
        connect(model, &QAbstractItemModel::modelReset, this, &FrozenTableView::hideScrollingColumns),
        connect(model, &QAbstractItemModel::columnsInserted, this, &FrozenTableView::hideScrollingColumns),
        connect(model, &QAbstractItemModel::layoutChanged, this, &FrozenTableView::hideScrollingColumns)};
  }
  hideScrollingColumns();
}

void FrozenTableView::setSelectionModel(QItemSelectionModel* selection) {
  QTableView::setSelectionModel(selection);
  // QTableView::setModel sets its new selection model before the overlay has the new model.
  if (selection != nullptr && frozen_ != nullptr && frozen_->model() == selection->model())
    frozen_->setSelectionModel(selection);
}

void FrozenTableView::syncFrozenLook() {
  frozen_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  frozen_->verticalHeader()->setDefaultSectionSize(verticalHeader()->defaultSectionSize());
  frozen_->setTextElideMode(textElideMode());
  frozen_->setWordWrap(wordWrap());
  frozen_->setAlternatingRowColors(alternatingRowColors());
  frozen_->setSelectionBehavior(selectionBehavior());
  frozen_->setSelectionMode(selectionMode());
  frozen_->setShowGrid(showGrid());
  frozen_->horizontalHeader()->setHighlightSections(horizontalHeader()->highlightSections());
  frozen_->horizontalHeader()->setDefaultAlignment(horizontalHeader()->defaultAlignment());
  updateFrozenGeometry();
}

void FrozenTableView::hideScrollingColumns() {
  const int columns = model() != nullptr ? model()->columnCount() : 0;
  for (int c = 1; c < columns; ++c) {
    if (!frozen_->isColumnHidden(c)) frozen_->setColumnHidden(c, true);
  }
  if (columns > 0) {
    frozen_->setColumnHidden(0, false);
    frozen_->setColumnWidth(0, columnWidth(0));
  }
  updateFrozenGeometry();
}

void FrozenTableView::updateFrozenGeometry() {
  const bool shown = model() != nullptr && model()->columnCount() > 0 && !isColumnHidden(0);
  frozen_->setVisible(shown);
  if (!shown) return;
  const int header = horizontalHeader()->isHidden() ? 0 : horizontalHeader()->height();
  // The same header height, or the overlay's rows would sit off the table's by the difference.
  frozen_->horizontalHeader()->setFixedHeight(header);
  frozen_->setGeometry(viewport()->x(), viewport()->y() - header, columnWidth(0), viewport()->height() + header);
}

void FrozenTableView::sortByFrozenHeader(int section) {
  if (section != 0 || !isSortingEnabled()) return;
  // What a click on the table's own header would do: flip a sort by this column, else start in the
  // column's initial order.
  Qt::SortOrder order = Qt::AscendingOrder;
  if (horizontalHeader()->sortIndicatorSection() == 0) {
    order = horizontalHeader()->sortIndicatorOrder() == Qt::AscendingOrder ? Qt::DescendingOrder : Qt::AscendingOrder;
  } else if (const QVariant initial = model()->headerData(0, Qt::Horizontal, Qt::InitialSortOrderRole);
             initial.isValid()) {
    order = static_cast<Qt::SortOrder>(initial.toInt());
  }
  sortByColumn(0, order);
}

void FrozenTableView::scrollTo(const QModelIndex& index, ScrollHint hint) {
  const int across = horizontalScrollBar()->value();
  QTableView::scrollTo(index, hint);
  if (!index.isValid()) return;
  if (index.column() == 0) {
    // Column 0 is always in sight: scroll only to the row.
    horizontalScrollBar()->setValue(across);
    return;
  }
  // A cell must not end up under the overlay.
  const int left = visualRect(index).left();
  if (left < frozen_->width())
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() + left - frozen_->width());
}

QModelIndex FrozenTableView::moveCursor(CursorAction action, Qt::KeyboardModifiers modifiers) {
  const QModelIndex current = QTableView::moveCursor(action, modifiers);
  // Moving left onto a cell hidden under the overlay scrolls it out from under it.
  if (action == MoveLeft && current.column() > 0 && visualRect(current).left() < frozen_->width()) {
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() + visualRect(current).left() - frozen_->width());
  }
  return current;
}

void FrozenTableView::resizeEvent(QResizeEvent* event) {
  QTableView::resizeEvent(event);
  updateFrozenGeometry();
}

void FrozenTableView::updateGeometries() {
  QTableView::updateGeometries();
  updateFrozenGeometry();
}

}  // namespace chipfit
