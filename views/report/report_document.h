// The report's content as a small format-neutral document (headings, paragraphs, tables, charts), built
// once from the RunResult and written out by the HTML and PDF writers, so both say the same thing.
#pragma once

#include <string>
#include <vector>

#include "profilers/run_result.h"

namespace chipfit::report {

enum class Tone { kNormal, kGood, kWarn, kBad, kMuted };

struct Cell {
  std::string text;
  bool numeric = false;  // right-aligned
  bool mono = false;     // names, hashes, commands
  Tone tone = Tone::kNormal;
  int colspan = 1;
  bool nowrap = false;  // a target or device name: never broken over two lines
};

struct Table {
  std::vector<std::string> header;  // empty: a key/value table whose first cell is the key
  std::vector<std::vector<Cell>> rows;
  bool compact = false;  // per-layer tables: smaller type
  // Non-empty: the HTML page folds the table under this summary, closed (<details>), so long layer
  // tables do not bury what follows; the PDF, which cannot fold, prints it in full.
  std::string folded_summary;
  // A column of name lists (a layer's ONNX nodes) that should take the spare width on paper, so rows stay
  // one or two lines high; -1: none.
  int wide_column = -1;
};

struct Block {
  enum class Kind {
    kHeading,    // level 1–3, text, id
    kParagraph,  // label (bold, optional) + text, tone; lead = larger
    kList,       // items
    kTable,
    kCharts,    // every chart of the run, in views/charts' order
    kBoxBegin,  // a framed box around what follows until kBoxEnd; tone colours it
    kBoxEnd,
    kFooter,  // paragraphs in items, small type, after a rule
  };
  Kind kind = Kind::kParagraph;
  int level = 0;
  std::string id;
  std::string label;
  std::string text;
  Tone tone = Tone::kNormal;
  bool lead = false;
  std::vector<std::string> items;
  Table table;
};

struct Document {
  std::string title;
  std::vector<Block> blocks;
};

// What was not measured (a failed target's latency, absent drift, energy, accuracy or ceilings) reads
// "–" or "not measured"; the recommendation, still JSON, is read without throwing on odd members.
// Each table states its time unit once in its header (µs when every time in it is under 1 ms, else
// ms), and the whole report one energy unit (µJ, mJ or J, from the largest energy figure).
Document BuildDocument(const RunResult& run);

}  // namespace chipfit::report
