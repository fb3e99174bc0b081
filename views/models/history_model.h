// HistoryModel: one row per stored run (RunStore::ListRuns), and HistoryFilterModel, its filter by model
// path, status, source and start date.
#pragma once

#include <QAbstractTableModel>
#include <QDate>
#include <QDateTime>
#include <QSortFilterProxyModel>
#include <QString>
#include <cstdint>
#include <vector>

#include "core/store/run_store.h"

namespace chipfit {

class HistoryModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kIdColumn,
    kStartedColumn,
    kModelColumn,
    kStatusColumn,
    kWhatIfColumn,
    kTargetsColumn,
    kSourceColumn,
    kShapesColumn,
    kThreadsColumn,
    kHostColumn,
    kVersionColumn,
    kColumnCount
  };
  enum Role {
    // Numbers as numbers (run id as qlonglong, start as a UTC QDateTime, targets ok and threads as
    // int, model as its full path), so sorting and filters never parse the display strings back.
    RawValueRole = Qt::UserRole + 1,
    // The run id (qlonglong) on every column: what a selection hands to LoadRun.
    RunIdRole,
    // The targets column's total (int); RawValueRole there is the count that finished ok.
    TargetsTotalRole,
    // True (bool) on every column of a run that kept nodes in fp32 by request (a What-if).
    WhatIfRole,
  };

  explicit HistoryModel(QObject* parent = nullptr);

  // Replaces every row (a model reset): the store is read again as a whole, never edited in place.
  void setRuns(std::vector<RunSummary> runs);
  const std::vector<RunSummary>& runs() const { return runs_; }
  // The run of a row, nullptr outside the model.
  const RunSummary* runAt(int row) const;
  // The row of a run id, -1 when the model has no such run.
  int rowOf(int64_t run_id) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // The start of a run as stored (UTC, "2026-11-25T14:42:05Z"); invalid when it does not parse.
  static QDateTime StartedAt(const RunSummary& run);
  // The stored shapes as a person reads them: "x=1x3x48x192,mask=1x48" → "x 1×3×48×192, mask 1×48".
  static QString ShapesText(const std::string& shapes);

 private:
  std::vector<RunSummary> runs_;
};

// Filters the history by what a user remembers of a run: part of the model's path (case-insensitive),
// its status, the front end that made it, and the local calendar days it started between. An empty
// text, status or source and a null date leave that criterion out. Sorts by HistoryModel::RawValueRole.
class HistoryFilterModel : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit HistoryFilterModel(QObject* parent = nullptr);

  void setModelText(const QString& text);
  void setStatus(const QString& status);
  void setSource(const QString& source);
  // Inclusive, in local time (the days the table shows); a null date is open-ended.
  void setDateRange(const QDate& from, const QDate& to);

  const QString& modelText() const { return model_text_; }
  const QString& status() const { return status_; }
  const QString& source() const { return source_; }
  const QDate& from() const { return from_; }
  const QDate& to() const { return to_; }

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

 private:
  QString model_text_, status_, source_;
  QDate from_, to_;
};

}  // namespace chipfit
