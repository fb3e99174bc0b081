// GraphLayout: a model's nodes laid out top to bottom or left to right by Graphviz dot, widget-free (QtCore only).
#pragma once

#include <QPointF>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <QVector>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace chipfit {

struct ModelAnalysis;

// One node to lay out. An edge runs from the node that produces a value to every node that consumes
// it; a value no node produces (a graph input, an initializer) makes no edge and no node.
struct GraphNodeSpec {
  QString name;  // the ONNX node name, the key of the shared selection
  QString op;
  QStringList inputs;   // value names, without shapes
  QStringList outputs;  // value names, without shapes
};

// Which way the edges run: ranks stacked downwards (inputs at the top), or side by side (inputs on the left).
enum class GraphDirection { kTopToBottom, kLeftToRight };

struct GraphLayoutOptions {
  GraphDirection direction = GraphDirection::kTopToBottom;
  // Every box has the same size: the page draws op and name elided into it, so Graphviz need not
  // measure any text (which would need fonts on a worker thread, and time).
  double node_width = 150;  // points
  double node_height = 38;  // points
  double rank_gap = 22;     // points between ranks (rows top to bottom, columns left to right)
  double node_gap = 18;     // points between boxes of one rank
};

// A node's box in screen direction (y grows downwards), in points.
struct LaidOutNode {
  QString name;
  QString op;
  QPointF centre;
  double width = 0;
  double height = 0;
  int rank = 0;  // dot's rank: 0 at the top (left), every edge goes to a greater rank (unless a cycle breaks it)
  QRectF rect() const { return {centre.x() - width / 2, centre.y() - height / 2, width, height}; }
};

// An edge as Graphviz routed it: a cubic Bézier chain (start point, then control, control, end per
// segment), and where the arrow head's tip lies when the curve stops short of the head node.
struct LaidOutEdge {
  int from = -1;  // index into GraphLayout::nodes
  int to = -1;
  QStringList values;  // the values this edge carries (parallel values between two nodes share one edge)
  QVector<QPointF> points;
  std::optional<QPointF> arrow_tip;
};

struct GraphLayout {
  QVector<LaidOutNode> nodes;  // in the order of the input list
  QVector<LaidOutEdge> edges;
  QRectF bounds;  // of everything laid out, top-left at (0, 0)
};

// Lays `nodes` out with Graphviz dot (rankdir TB or LR, as options.direction says). Safe to call from any thread: calls
// are serialised, since Graphviz keeps global state. An empty list, a node without a name, two nodes of one name or two
// producers of one value are errors that say which; so is a failure inside Graphviz.
Result<GraphLayout> LayOutGraph(const std::vector<GraphNodeSpec>& nodes, const GraphLayoutOptions& options = {});

// The value name out of a NodeRow input/output text: "x: 1x3x48x192 f32" → "x"; a bare name stays.
QString ValueNameOfRowText(const std::string& text);

// The node list of an analysed model, value names parsed out of its NodeRow texts.
std::vector<GraphNodeSpec> GraphNodesOf(const ModelAnalysis& analysis);

}  // namespace chipfit
