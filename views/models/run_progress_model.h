// RunProgressModel: one row per target of a running (or finished) profile: phase, progress, and the
// target's figures the moment it finishes.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "core/runtime/target.h"
#include "profilers/run_result.h"

namespace chipfit {

class RunProgressModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kTargetColumn,
    kStatusColumn,
    kProgressColumn,
    kP50Column,
    kP99Column,
    kSpeedupColumn,
    kDriftColumn,
    kEnergyColumn,
    kNotesColumn,
    kColumnCount
  };
  // RawValueRole: numbers as numbers (ms, ratio, dB, J; null while unknown); ProgressRole: 0..100 for
  // the progress column's bar.
  enum Role { RawValueRole = Qt::UserRole + 1, ProgressRole };

  explicit RunProgressModel(QObject* parent = nullptr);

  // A new run: one row per target, all waiting.
  void startRun(const std::vector<Target>& targets);
  void setPhase(int row, const QString& phase, const QString& detail);
  // Per-layer passes: observed run `run` of `runs`, kernel `done` of `total`.
  void setLayerProgress(int row, int run, int runs, int done, int total);
  // The finished target (immutable, shared with whoever else shows it).
  void setResult(int row, std::shared_ptr<const TargetResult> result);
  // Rows that never started are marked cancelled (the run stopped before them).
  void markUnfinished(const QString& status);

  std::shared_ptr<const TargetResult> result(int row) const;
  QString status(int row) const;
  int finishedCount() const;
  // What the Run page's banner says when a finished target is unreliable or had timing rounds dropped
  // because other processes took the CPUs ("The machine was busy: cpu:fp32 and cpu:bf16 had too few clean
  // rounds (3 of 10; other processes used 70 % of the CPUs). They are not ranked."); empty otherwise.
  QString busyMachineText() const;
  // Finished targets that are unreliable (too few clean rounds).
  QStringList unreliableTargets() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    Target target;
    QString status = QStringLiteral("waiting");  // waiting | compile | warm-up | … | ok | failed | …
    QString detail{};
    int progress = 0;  // 0..100
    std::shared_ptr<const TargetResult> result{};
  };
  QVariant display(const Row& row, int column) const;
  QVariant raw(const Row& row, int column) const;
  // The target the speed-ups are relative to: cpu:fp32 when it finished ok, else the first ok target.
  const TargetResult* baseline() const;
  void rowChanged(int row);

  std::vector<Row> rows_;
};

}  // namespace chipfit
