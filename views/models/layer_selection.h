// LayerSelection: the one selection every view of a run shares. A layer is keyed by its ONNX node name,
// never by a row index or a target's kernel, so the same layer stays selected across the Layers table,
// every chart, the graph, the Compare table and every target's columns, however each target fused it.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

namespace chipfit {

class LayerSelection : public QObject {
  Q_OBJECT

 public:
  explicit LayerSelection(QObject* parent = nullptr) : QObject(parent) {}

  // The selected ONNX node names, the current (last clicked) one first.
  const QStringList& nodes() const { return nodes_; }
  QString current() const { return nodes_.isEmpty() ? QString() : nodes_.front(); }
  bool contains(const QString& node) const { return nodes_.contains(node); }

  // Replaces the selection; `origin` is the view that made it, so it can ignore its own echo. Emits
  // changed() only when the set differs.
  void select(const QStringList& nodes, QObject* origin = nullptr) {
    if (nodes == nodes_) return;
    nodes_ = nodes;
    emit changed(nodes_, origin);
  }
  void clear(QObject* origin = nullptr) { select({}, origin); }

 signals:
  void changed(const QStringList& nodes, QObject* origin);

 private:
  QStringList nodes_;
};

}  // namespace chipfit
