// LimitsForm: the limits-and-objective form, a view of one LimitsModel; Targets and Recommend each show
// one, bound to the same model, so an edit in either is the other's too.
#pragma once

#include <QGroupBox>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;

namespace chipfit {

class LimitsModel;

class LimitsForm : public QGroupBox {
  Q_OBJECT

 public:
  LimitsForm(LimitsModel* model, QWidget* parent = nullptr);

  LimitsModel* model() const { return model_; }

 private:
  void build();
  void fromModel();
  void toModel();
  void updateEnabled();

  LimitsModel* model_;
  QCheckBox* max_latency_on_ = nullptr;
  QDoubleSpinBox* max_latency_ = nullptr;
  QComboBox* latency_stat_ = nullptr;
  QCheckBox* min_top1_on_ = nullptr;
  QDoubleSpinBox* min_top1_ = nullptr;
  QCheckBox* min_sqnr_on_ = nullptr;
  QDoubleSpinBox* min_sqnr_ = nullptr;
  QCheckBox* max_memory_on_ = nullptr;
  QDoubleSpinBox* max_memory_ = nullptr;
  QCheckBox* max_energy_on_ = nullptr;
  QDoubleSpinBox* max_energy_ = nullptr;
  QComboBox* objective_ = nullptr;
  QCheckBox* accuracy_guard_ = nullptr;
  bool applying_ = false;  // filling the controls from the model: not an edit
};

}  // namespace chipfit
