// ModelInputsModel: the graph inputs (name, dtype, shape), with the dynamic dims editable and validated.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <memory>
#include <vector>

#include "profilers/session/model_analysis.h"

namespace chipfit {

class ModelInputsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kNameColumn, kDTypeColumn, kShapeColumn, kColumnCount };
  enum Role {
    // Shape: the dims in use as a QVariantList of qlonglong, -1 where a dynamic dim has no value yet.
    RawValueRole = Qt::UserRole + 1,
    // bool: the file leaves at least one dim of this input open (or its rank unknown).
    DynamicRole,
  };

  explicit ModelInputsModel(std::shared_ptr<const ModelAnalysis> analysis = {}, QObject* parent = nullptr);

  // A model reset; the dims in use are the analysis' bound ones, so a rejected re-analysis can be
  // undone by handing back the previous analysis.
  void setAnalysis(std::shared_ptr<const ModelAnalysis> analysis);

  // "NAME=1x3x48x192" for every input with dynamic dims whose dims are all set, in input order.
  QStringList bindings() const;
  // Why the last edit was refused; empty after an accepted one.
  QString lastError() const { return last_error_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  // Shape column of a dynamic input only: "1x3x48x192" (x, × or commas). The rank must match, every
  // dim must be a positive integer and dims the file fixes must keep their value; otherwise false,
  // lastError() says why and invalidEdit is emitted.
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

 signals:
  // After an accepted edit that changed something: the bindings to analyse the model with.
  void shapesChanged(const QStringList& bindings);
  void invalidEdit(const QString& message);

 private:
  struct InputRow {
    TensorSpec declared;
    std::vector<int64_t> dims;  // in use; -1 where unset
    bool dynamic = false;
  };

  QString shapeText(const InputRow& row) const;
  bool reject(const QString& message);

  std::shared_ptr<const ModelAnalysis> analysis_;
  std::vector<InputRow> rows_;
  QString last_error_;
};

}  // namespace chipfit
