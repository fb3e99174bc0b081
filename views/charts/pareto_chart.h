// The Pareto chart of a recommendation: every target that ran as a bubble at (p50 latency, output SQNR), sized by
// energy per inference, with the recommendation's frontier as a line and rejected targets hollow and grey.
//
// Like the other run charts (run_charts.h), it needs a QApplication and its thread.
#pragma once

#include <QChart>
#include <QString>
#include <memory>

#include "nlohmann/json.hpp"
#include "profilers/run_result.h"

namespace chipfit::charts {

// Names a test or a page can find the parts of the chart by (QObject::objectName of the series).
inline constexpr const char* kParetoFrontierSeries = "frontier";
// Each target's bubble is one QScatterSeries named kParetoTargetPrefix + target ("target:cpu:int8").
inline constexpr const char* kParetoTargetPrefix = "target:";
// The dynamic property that holds a bubble's tooltip text (shown when the pointer rests on it).
inline constexpr const char* kParetoToolTipProperty = "chipfitToolTip";

// x: p50 latency in ms (the statistic the frontier is computed on), log scale when the targets span more than a
// decade; y: output SQNR against the reference in dB (the frontier's drift axis; higher is less drift); bubble area:
// energy per inference, its source (measured:<sensor> or estimated) in the legend and the tooltip. One colour per
// target (TargetColor); targets `recommendation` rejects are hollow and grey, their reasons in the tooltip.
// Targets that did not run, or have no drift figure, have no bubble; the title counts those without drift.
// `recommendation` is the JSON of Recommend(); null gives the bubbles without frontier or verdicts.
std::unique_ptr<QChart> ParetoChart(const RunResult& run, const nlohmann::json& recommendation);

}  // namespace chipfit::charts
