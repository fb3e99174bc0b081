// FrozenTableView: a QTableView whose first column stays in place while the rest scrolls sideways.
#pragma once

#include <QList>
#include <QTableView>

namespace chipfit {

// The classic Qt frozen-column table: a second QTableView laid over the first shows only column 0, with
// the same model and selection model and a vertical scroll kept in step, so a row's name stays beside
// its numbers however far right the user scrolls (hotspot's and heaptrack's tables keep their symbol
// column the same way). Sorting by the frozen column from its own header sorts the table.
class FrozenTableView : public QTableView {
  Q_OBJECT

 public:
  explicit FrozenTableView(QWidget* parent = nullptr);

  void setModel(QAbstractItemModel* model) override;
  void setSelectionModel(QItemSelectionModel* selection) override;
  // Column 0, drawn over the main view's own column 0.
  QTableView* frozenView() const { return frozen_; }
  // Settings the overlay must share to line up: row height, elide mode, alternating colours.
  void syncFrozenLook();

  void scrollTo(const QModelIndex& index, ScrollHint hint = EnsureVisible) override;

 protected:
  void resizeEvent(QResizeEvent* event) override;
  QModelIndex moveCursor(CursorAction action, Qt::KeyboardModifiers modifiers) override;
  void updateGeometries() override;

 private:
  void updateFrozenGeometry();
  void hideScrollingColumns();
  void sortByFrozenHeader(int section);

  QTableView* frozen_;
  QList<QMetaObject::Connection> model_connections_;
};

}  // namespace chipfit
