// GuiWording: the table of CLI phrases and the GUI controls that replace them, most specific first.
#include "views/models/gui_wording.h"

#include <QRegularExpression>
#include <utility>
#include <vector>

namespace chipfit {
namespace {

struct Rewording {
  QRegularExpression pattern;
  QString replacement;
};

const std::vector<Rewording>& Table() {
  static const std::vector<Rewording> table = [] {
    const std::vector<std::pair<const char*, const char*>> rules = {
        // Whole pieces of advice first, so their parts are not reworded one by one.
        {R"(give --data with real inputs)", "choose a data folder with real inputs on the Targets page"},
        {R"(--data with real inputs)", "a data folder with real inputs (Targets page)"},
        {R"(set --min-top1/--min-sqnr-db)", "tick Min top-1 or Min output SQNR on the limits form"},
        {R"(--min-top1/--min-sqnr-db)", "a Min top-1 or Min output SQNR limit"},
        {R"(--min-sqnr-db bounds the SQNR only, --min-top1 replaces this bar)",
         "the Min output SQNR limit bounds the SQNR only; a Min top-1 limit replaces this bar"},
        {R"(or --no-accuracy-guard)", "or untick Accuracy guard"},
        {R"(--no-accuracy-guard)", "unticking Accuracy guard"},
        {R"(try --calibration percentile, or --auto-fp32-agreement 99 to keep the layers that break it in fp32)",
         "try Percentile calibration (Targets page), or the Run page's re-profile that keeps the layers that break it "
         "in fp32"},
        {R"(try --keep-fp32 NODE,… on the layers where its drift starts)",
         "try a What-if re-run (Layers page) keeping the layers where its drift starts in fp32"},
        {R"(--keep-fp32 NODE,…)", "a What-if re-run (Layers page)"},
        {R"(--keep-fp32)", "What-if (kept in fp32)"},
        {R"(; --rank-unreliable ranks it anyway)", "; profile again when the machine is idle (Run page)"},
        {R"(\(profile with --iterations (\d+)\))", "(set Iterations to \\1 on the Targets page and profile again)"},
        {R"(--iterations (\d+) raised to (\d+))", "Iterations \\1 raised to \\2"},
        {R"(--int8-all-layers)", "int8 layers: all (Targets page)"},
        {R"(--data for real figures)", "a data folder (Targets page) for real figures"},
        {R"(--data DIR)", "a data folder (Targets page)"},
        {R"(--data)", "a data folder (Targets page)"},
        {R"(--calibration percentile)", "Percentile calibration (Targets page)"},
        {R"(--calibration)", "Calibration (Targets page)"},
        {R"(--iterations)", "Iterations (Targets page)"},
        {R"(--warmup)", "Warm-up (Targets page)"},
        {R"(--min-time)", "Min time (Targets page)"},
        {R"(--drift-samples)", "Drift samples (Targets page)"},
        {R"(--min-top1)", "the Min top-1 limit"},
        {R"(--min-sqnr-db)", "the Min output SQNR limit"},
        {R"(--max-latency-ms)", "the Max latency limit"},
        {R"(--max-memory-mb)", "the Max memory limit"},
        {R"(--max-energy-mj)", "the Max energy limit"},
        {R"(--latency-stat)", "the latency statistic"},
        {R"(--shape NAME=DIMS)", "the input's dims on the Model page"},
        {R"(--shape)", "the input's dims (Model page)"},
        {R"(`chipfit devices --measure`)", "Devices › Measure again"},
        {R"(chipfit devices --measure)", "Devices › Measure again"},
        {R"(chipfit report (\d+|RUN_ID) -o FILE)", "File › Export report…"},
        {R"(--targets T1,T2,... or --all-targets)", "a ticked target on the Targets page"},
    };
    std::vector<Rewording> out;
    out.reserve(rules.size());
    for (const auto& [pattern, replacement] : rules) {
      out.push_back({QRegularExpression(QString::fromUtf8(pattern)), QString::fromUtf8(replacement)});
    }
    return out;
  }();
  return table;
}

}  // namespace

QString GuiWording(const QString& text) {
  if (!text.contains(QLatin1String("--")) && !text.contains(QLatin1String("chipfit "))) return text;
  QString out = text;
  for (const Rewording& r : Table()) out.replace(r.pattern, r.replacement);
  return out;
}

QString GuiWording(const std::string& text) { return GuiWording(QString::fromStdString(text)); }

}  // namespace chipfit
