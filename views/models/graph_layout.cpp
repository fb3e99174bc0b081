// GraphLayout: node list → edges → a Graphviz graph → dot → boxes and Bézier edges in screen direction.
#include "views/models/graph_layout.h"

#include <gvc.h>

#include <QHash>
#include <QRegularExpression>
#include <mutex>
#include <string>

#include "profilers/session/model_analysis.h"

namespace chipfit {
namespace {

constexpr double kPointsPerInch = 72.0;

// Graphviz keeps global state (the error hooks, dot's static working sets, the plugin registry), so
// every layout, from whichever thread, runs under this one lock.
std::mutex& GraphvizMutex() {
  static std::mutex mutex;
  return mutex;
}

// Messages Graphviz reports while the lock is held; read back when a call fails.
std::string& GraphvizMessages() {
  static std::string messages;
  return messages;
}

int CollectGraphvizMessage(char* message) {
  std::string& messages = GraphvizMessages();
  std::string text = message ? message : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return 0;
  if (!messages.empty()) messages += "; ";
  messages += text;
  return 0;
}

// One context for the process: creating one loads the plugin configuration, which costs more than
// laying out a small graph. Created and used under GraphvizMutex() only.
GVC_t* SharedContext() {
  static GVC_t* context = gvContext();
  return context;
}

// Graphviz's C API takes char* for names it only reads.
char* Chars(const char* text) { return const_cast<char*>(text); }

std::string Inches(double points) { return std::to_string(points / kPointsPerInch); }

// Owns an Agraph_t and the layout attached to it.
class GraphvizGraph {
 public:
  GraphvizGraph(GVC_t* context, Agraph_t* graph) : context_(context), graph_(graph) {}
  ~GraphvizGraph() {
    if (laid_out_) gvFreeLayout(context_, graph_);
    if (graph_) agclose(graph_);
  }
  GraphvizGraph(const GraphvizGraph&) = delete;
  GraphvizGraph& operator=(const GraphvizGraph&) = delete;

  Agraph_t* get() const { return graph_; }
  void set_laid_out() { laid_out_ = true; }

 private:
  GVC_t* context_;
  Agraph_t* graph_;
  bool laid_out_ = false;
};

// Restores Graphviz's error hooks however the layout ends.
class MessageCapture {
 public:
  MessageCapture() : previous_function_(agseterrf(&CollectGraphvizMessage)), previous_level_(agseterr(AGWARN)) {
    GraphvizMessages().clear();
  }
  ~MessageCapture() {
    agseterrf(previous_function_);
    agseterr(previous_level_);
  }
  MessageCapture(const MessageCapture&) = delete;
  MessageCapture& operator=(const MessageCapture&) = delete;

  std::string Text() const { return GraphvizMessages().empty() ? "no message from Graphviz" : GraphvizMessages(); }

 private:
  agusererrf previous_function_;
  agerrlevel_t previous_level_;
};

Status CheckNodes(const std::vector<GraphNodeSpec>& nodes) {
  if (nodes.empty()) return InvalidArgument("graph layout: the node list is empty, nothing to lay out");
  QHash<QString, int> names;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNodeSpec& node = nodes[i];
    if (node.name.isEmpty()) {
      return InvalidArgument("graph layout: node " + std::to_string(i) + " (" + node.op.toStdString() +
                             ") has no name; the selection needs one per node");
    }
    const auto it = names.constFind(node.name);
    if (it != names.cend()) {
      return InvalidArgument("graph layout: nodes " + std::to_string(*it) + " and " + std::to_string(i) +
                             " are both named '" + node.name.toStdString() + "'");
    }
    names.insert(node.name, static_cast<int>(i));
  }
  return Status::Ok();
}

// Edges from producers to consumers; values between the same two nodes share one edge.
Result<QVector<LaidOutEdge>> ConnectNodes(const std::vector<GraphNodeSpec>& nodes) {
  QHash<QString, int> producer;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const QString& value : nodes[i].outputs) {
      const auto it = producer.constFind(value);
      if (it != producer.cend()) {
        return InvalidArgument("graph layout: value '" + value.toStdString() + "' is produced by both '" +
                               nodes[static_cast<size_t>(*it)].name.toStdString() + "' and '" +
                               nodes[i].name.toStdString() + "'");
      }
      producer.insert(value, static_cast<int>(i));
    }
  }
  QVector<LaidOutEdge> edges;
  QHash<quint64, int> edge_of_pair;
  for (size_t consumer = 0; consumer < nodes.size(); ++consumer) {
    for (const QString& value : nodes[consumer].inputs) {
      const auto found = producer.constFind(value);
      if (found == producer.cend()) continue;  // a graph input or an initializer
      const quint64 key = (static_cast<quint64>(*found) << 32) | static_cast<quint64>(consumer);
      auto it = edge_of_pair.find(key);
      if (it == edge_of_pair.end()) {
        it = edge_of_pair.insert(key, static_cast<int>(edges.size()));
        edges.push_back(
            {.from = *found, .to = static_cast<int>(consumer), .values = {}, .points = {}, .arrow_tip = std::nullopt});
      }
      QStringList& values = edges[*it].values;
      if (!values.contains(value)) values.push_back(value);
    }
  }
  return edges;
}

void SetAttributes(Agraph_t* graph, const GraphLayoutOptions& options) {
  // Node width and height stay the box's on-screen size either way: dot rotates the ranks, not the boxes.
  agattr(graph, AGRAPH, Chars("rankdir"), Chars(options.direction == GraphDirection::kLeftToRight ? "LR" : "TB"));
  agattr(graph, AGRAPH, Chars("ranksep"), Chars(Inches(options.rank_gap).c_str()));
  agattr(graph, AGRAPH, Chars("nodesep"), Chars(Inches(options.node_gap).c_str()));
  agattr(graph, AGNODE, Chars("shape"), Chars("box"));
  agattr(graph, AGNODE, Chars("fixedsize"), Chars("true"));
  agattr(graph, AGNODE, Chars("label"), Chars(""));
  agattr(graph, AGNODE, Chars("width"), Chars(Inches(options.node_width).c_str()));
  agattr(graph, AGNODE, Chars("height"), Chars(Inches(options.node_height).c_str()));
}

// Reads the coordinates dot computed back, flipping y so that the first rank is at the top (or left).
GraphLayout ReadLayout(Agraph_t* graph, const std::vector<GraphNodeSpec>& specs, const std::vector<Agnode_t*>& nodes,
                       QVector<LaidOutEdge> edges, const std::vector<Agedge_t*>& gv_edges) {
  const boxf bb = GD_bb(graph);
  const auto screen = [&](pointf p) { return QPointF(p.x - bb.LL.x, bb.UR.y - p.y); };
  GraphLayout layout;
  layout.bounds = QRectF(0, 0, bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y);
  layout.nodes.reserve(static_cast<qsizetype>(nodes.size()));
  for (size_t i = 0; i < nodes.size(); ++i) {
    Agnode_t* node = nodes[i];
    layout.nodes.push_back({.name = specs[i].name,
                            .op = specs[i].op,
                            .centre = screen(ND_coord(node)),
                            .width = ND_width(node) * kPointsPerInch,
                            .height = ND_height(node) * kPointsPerInch,
                            .rank = ND_rank(node)});
  }
  for (qsizetype i = 0; i < edges.size(); ++i) {
    const splines* spline = ED_spl(gv_edges[static_cast<size_t>(i)]);
    LaidOutEdge& edge = edges[i];
    if (spline == nullptr) continue;  // dot routes every edge; an unrouted one is simply not drawn
    for (int b = 0; b < spline->size; ++b) {
      const bezier& curve = spline->list[b];
      for (int p = 0; p < curve.size; ++p) edge.points.push_back(screen(curve.list[p]));
      if (curve.eflag) edge.arrow_tip = screen(curve.ep);
    }
  }
  layout.edges = std::move(edges);
  return layout;
}

}  // namespace

Result<GraphLayout> LayOutGraph(const std::vector<GraphNodeSpec>& specs, const GraphLayoutOptions& options) {
  RETURN_IF_ERROR(CheckNodes(specs));
  ASSIGN_OR_RETURN(QVector<LaidOutEdge> edges, ConnectNodes(specs));
  if (!(options.node_width > 0) || !(options.node_height > 0)) {
    return InvalidArgument("graph layout: node size " + std::to_string(options.node_width) + "x" +
                           std::to_string(options.node_height) + " points is not positive");
  }

  std::lock_guard lock(GraphvizMutex());
  MessageCapture messages;
  GVC_t* context = SharedContext();
  if (context == nullptr) return Internal("graph layout: Graphviz could not create a context: " + messages.Text());
  GraphvizGraph graph(context, agopen(Chars("model"), Agdirected, nullptr));
  if (graph.get() == nullptr) return Internal("graph layout: Graphviz could not open a graph: " + messages.Text());
  SetAttributes(graph.get(), options);

  // Graphviz names are internal ids; ONNX names may hold anything and stay on our side.
  std::vector<Agnode_t*> nodes(specs.size(), nullptr);
  for (size_t i = 0; i < specs.size(); ++i) {
    nodes[i] = agnode(graph.get(), Chars(("n" + std::to_string(i)).c_str()), 1);
    if (nodes[i] == nullptr) {
      return Internal("graph layout: Graphviz refused node '" + specs[i].name.toStdString() + "': " + messages.Text());
    }
  }
  std::vector<Agedge_t*> gv_edges(static_cast<size_t>(edges.size()), nullptr);
  for (qsizetype i = 0; i < edges.size(); ++i) {
    const LaidOutEdge& edge = edges[i];
    gv_edges[static_cast<size_t>(i)] =
        agedge(graph.get(), nodes[static_cast<size_t>(edge.from)], nodes[static_cast<size_t>(edge.to)], nullptr, 1);
    if (gv_edges[static_cast<size_t>(i)] == nullptr) {
      return Internal("graph layout: Graphviz refused the edge '" +
                      specs[static_cast<size_t>(edge.from)].name.toStdString() + "' → '" +
                      specs[static_cast<size_t>(edge.to)].name.toStdString() + "': " + messages.Text());
    }
  }
  if (gvLayout(context, graph.get(), "dot") != 0) {
    return Internal("graph layout: Graphviz dot failed on " + std::to_string(specs.size()) +
                    " nodes: " + messages.Text());
  }
  graph.set_laid_out();
  return ReadLayout(graph.get(), specs, nodes, std::move(edges), gv_edges);
}

QString ValueNameOfRowText(const std::string& text) {
  // NodeRows() writes "name: DIMS DTYPE" (either part may be missing); dims and dtypes never hold ": ",
  // so the last ": " separates them from a name that might.
  static const QRegularExpression description(QStringLiteral("^\\S+( [a-z0-9]+)?$"));
  const size_t colon = text.rfind(": ");
  if (colon == std::string::npos) return QString::fromStdString(text);
  if (!description.match(QString::fromStdString(text.substr(colon + 2))).hasMatch()) {
    return QString::fromStdString(text);
  }
  return QString::fromStdString(text.substr(0, colon));
}

std::vector<GraphNodeSpec> GraphNodesOf(const ModelAnalysis& analysis) {
  std::vector<GraphNodeSpec> nodes;
  nodes.reserve(analysis.nodes.size());
  for (const NodeRow& row : analysis.nodes) {
    GraphNodeSpec node{
        .name = QString::fromStdString(row.name), .op = QString::fromStdString(row.op), .inputs = {}, .outputs = {}};
    for (const std::string& input : row.inputs) node.inputs.push_back(ValueNameOfRowText(input));
    for (const std::string& output : row.outputs) node.outputs.push_back(ValueNameOfRowText(output));
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace chipfit
