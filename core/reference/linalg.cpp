// Reference Einsum, Det.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/reference/einsum_plan.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

// ---------------------------------------------------------------------------------------------
// Einsum

// Labels are small ints: letters in ASCII order (A-Z = 0..25, a-z = 26..51) so that sorting labels
// sorts letters the way the implicit output wants; the dims an ellipsis stands for follow from 52.
constexpr int kNumLetters = 52;

int LetterLabel(char ch) { return std::isupper(static_cast<unsigned char>(ch)) ? ch - 'A' : 26 + (ch - 'a'); }
char LabelLetter(int label) { return static_cast<char>(label < 26 ? 'A' + label : 'a' + (label - 26)); }

// One term of the equation: its letters, and where "..." sits among them (-1: no ellipsis).
struct EinsumTerm {
  std::vector<int> letters;
  int ellipsis_at = -1;
};

Result<EinsumTerm> ParseTerm(const std::string& term, const std::string& equation, const Node& node) {
  EinsumTerm out;
  for (size_t i = 0; i < term.size();) {
    const char ch = term[i];
    if (std::isalpha(static_cast<unsigned char>(ch))) {
      out.letters.push_back(LetterLabel(ch));
      ++i;
    } else if (term.compare(i, 3, "...") == 0 && out.ellipsis_at < 0) {
      out.ellipsis_at = static_cast<int>(out.letters.size());
      i += 3;
    } else {
      return InvalidArgument(node.Describe() + ": equation '" + equation + "': unexpected '" + term.substr(i) +
                             "' in term '" + term + "' (a term holds letters and at most one '...')");
    }
  }
  return out;
}

// Combines one more dim seen for a label: equal sizes agree, 1 broadcasts (as numpy and PyTorch
// allow), -1 (not known yet) defers to the other.
bool MergeSize(int64_t& size, int64_t dim) {
  if (size == -2 || size == 1 || (size == -1 && dim != 1)) {
    size = dim;
  } else if (dim != size && dim != 1 && dim != -1) {
    return false;
  }
  return true;
}

std::string LabelName(int label) {
  return label < kNumLetters ? std::string(1, LabelLetter(label)) : "'...' dim " + std::to_string(label - kNumLetters);
}

}  // namespace

Result<EinsumPlan> PlanEinsum(const Node& node, const std::vector<Shape>& shapes) {
  std::string equation;
  for (char ch : node.GetString("equation", "")) {
    if (!std::isspace(static_cast<unsigned char>(ch))) equation += ch;
  }
  if (equation.empty()) return InvalidArgument(node.Describe() + ": attribute 'equation' is missing or empty");
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<EinsumTerm> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    ASSIGN_OR_RETURN(EinsumTerm term, ParseTerm(lhs.substr(start, comma - start), equation, node));
    terms.push_back(std::move(term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size()) {
    return InvalidArgument(node.Describe() + ": equation '" + equation + "' has " + std::to_string(terms.size()) +
                           " input terms but the node has " + std::to_string(shapes.size()) + " inputs");
  }

  // Dims each ellipsis covers; they broadcast against each other right-aligned, as in numpy.
  std::vector<int64_t> ellipsis_rank(terms.size(), 0);
  int64_t max_ellipsis = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const auto letters = static_cast<int64_t>(terms[i].letters.size());
    const auto rank = static_cast<int64_t>(shapes[i].size());
    const bool ok = terms[i].ellipsis_at >= 0 ? rank >= letters : rank == letters;
    if (!ok) {
      return InvalidArgument(node.Describe() + ": equation '" + equation + "': input " + std::to_string(i) +
                             " has shape " + ShapeToString(shapes[i]) + ", which does not fit its term's " +
                             std::to_string(letters) + " letters");
    }
    ellipsis_rank[i] = rank - letters;
    max_ellipsis = std::max(max_ellipsis, ellipsis_rank[i]);
  }

  EinsumPlan plan;
  plan.sizes.assign(static_cast<size_t>(kNumLetters + max_ellipsis), -2);  // -2: not seen
  std::vector<int> count(plan.sizes.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<int>& labels = plan.inputs.emplace_back();
    const EinsumTerm& term = terms[i];
    for (size_t k = 0; k <= term.letters.size(); ++k) {
      if (static_cast<int>(k) == term.ellipsis_at) {
        for (int64_t e = max_ellipsis - ellipsis_rank[i]; e < max_ellipsis; ++e) {
          labels.push_back(kNumLetters + static_cast<int>(e));
        }
      }
      if (k < term.letters.size()) labels.push_back(term.letters[k]);
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      const auto label = static_cast<size_t>(labels[d]);
      ++count[label];
      if (!MergeSize(plan.sizes[label], shapes[i][d])) {
        return InvalidArgument(node.Describe() + ": equation '" + equation + "': " + LabelName(labels[d]) + " is " +
                               std::to_string(shapes[i][d]) + " in input " + std::to_string(i) + " but " +
                               std::to_string(plan.sizes[label]) + " elsewhere");
      }
    }
  }

  if (arrow != std::string::npos) {
    ASSIGN_OR_RETURN(EinsumTerm out, ParseTerm(equation.substr(arrow + 2), equation, node));
    for (size_t k = 0; k <= out.letters.size(); ++k) {
      // An output without "..." sums the ellipsis dims away, like any label it leaves out.
      if (static_cast<int>(k) == out.ellipsis_at) {
        for (int64_t e = 0; e < max_ellipsis; ++e) plan.output.push_back(kNumLetters + static_cast<int>(e));
      }
      if (k == out.letters.size()) break;
      const int label = out.letters[k];
      if (count[static_cast<size_t>(label)] == 0) {
        return InvalidArgument(node.Describe() + ": equation '" + equation + "': output label " + LabelName(label) +
                               " is in no input term");
      }
      if (std::find(plan.output.begin(), plan.output.end(), label) != plan.output.end()) {
        return InvalidArgument(node.Describe() + ": equation '" + equation + "': output label " + LabelName(label) +
                               " is repeated");
      }
      plan.output.push_back(label);
    }
  } else {
    // Implicit output: the ellipsis dims, then the letters seen exactly once, in alphabetical order.
    for (int64_t e = 0; e < max_ellipsis; ++e) plan.output.push_back(kNumLetters + static_cast<int>(e));
    for (int label = 0; label < kNumLetters; ++label) {
      if (count[static_cast<size_t>(label)] == 1) plan.output.push_back(label);
    }
  }
  return plan;
}

namespace {

Status InferEinsum(InferContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.Error("needs at least one input");
  std::vector<Shape> shapes;
  const DType dtype = ctx.input(0) != nullptr ? ctx.input(0)->dtype : DType::kUndefined;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const ValueInfo* in = ctx.input(i);
    if (in == nullptr) return ctx.Error("input " + std::to_string(i) + " is missing");
    if (in->dtype != dtype) return ctx.Error("all inputs must have one dtype");
    shapes.push_back(in->shape);
  }
  if (!IsFloatingDType(dtype) && !IsIntegerDType(dtype)) {
    return Unsupported(ctx.node().Describe() + ": dtype " + std::string(DTypeName(dtype)) + " is not supported");
  }
  ASSIGN_OR_RETURN(EinsumPlan plan, PlanEinsum(ctx.node(), shapes));
  Shape out;
  for (int label : plan.output) out.push_back(plan.sizes[static_cast<size_t>(label)]);
  ctx.SetOutput(0, dtype, out);
  return Status::Ok();
}

// A tensor in the middle of a contraction: row-major data, one label per dim.
template <typename Acc>
struct Operand {
  std::vector<int> labels;
  Shape dims;
  std::vector<Acc> data;
};

// out[keep] = sum over every other label of prod(ops[j][labels_j]). Repeated labels within an
// operand walk its diagonal (their strides add); size-1 dims broadcast (stride 0). The loop is over
// the labels of all operands, with the last one as a tight inner loop.
template <typename Acc>
Operand<Acc> Contract(const std::vector<const Operand<Acc>*>& ops, const std::vector<int>& keep,
                      const std::vector<int64_t>& sizes) {
  std::vector<int> loop = keep;
  for (const Operand<Acc>* op : ops) {
    for (int label : op->labels) {
      if (std::find(loop.begin(), loop.end(), label) == loop.end()) loop.push_back(label);
    }
  }
  const size_t n_loop = loop.size();
  std::vector<int64_t> extent(n_loop);
  for (size_t l = 0; l < n_loop; ++l) extent[l] = sizes[static_cast<size_t>(loop[l])];
  // strides[j][l]: how far operand j (the output is j = ops.size()) moves when loop label l steps.
  std::vector<std::vector<int64_t>> strides(ops.size() + 1, std::vector<int64_t>(n_loop, 0));
  for (size_t j = 0; j < ops.size(); ++j) {
    const std::vector<int64_t> s = Strides(ops[j]->dims);
    for (size_t d = 0; d < s.size(); ++d) {
      if (ops[j]->dims[d] == 1) continue;
      const auto l = static_cast<size_t>(std::find(loop.begin(), loop.end(), ops[j]->labels[d]) - loop.begin());
      strides[j][l] += s[d];
    }
  }
  Operand<Acc> out;
  out.labels = keep;
  out.dims.assign(extent.begin(), extent.begin() + static_cast<std::ptrdiff_t>(keep.size()));
  const std::vector<int64_t> out_strides = Strides(out.dims);
  std::copy(out_strides.begin(), out_strides.end(), strides.back().begin());
  out.data.assign(static_cast<size_t>(NumElements(out.dims)), Acc{0});
  if (n_loop == 0) {
    Acc p{1};
    for (const Operand<Acc>* op : ops) p *= op->data[0];
    out.data[0] = p;
    return out;
  }
  if (std::find(extent.begin(), extent.end(), 0) != extent.end()) return out;

  const size_t inner = n_loop - 1;
  const int64_t inner_n = extent[inner];
  std::vector<int64_t> offset(ops.size() + 1, 0);
  std::vector<int64_t> coord(n_loop, 0);
  const int64_t outer_n = NumElements(Shape(extent.begin(), extent.end() - 1));
  for (int64_t step = 0; step < outer_n; ++step) {
    Acc* dst = out.data.data() + offset.back();
    const int64_t dst_stride = strides.back()[inner];
    if (ops.size() == 2) {
      const Acc* a = ops[0]->data.data() + offset[0];
      const Acc* b = ops[1]->data.data() + offset[1];
      const int64_t sa = strides[0][inner];
      const int64_t sb = strides[1][inner];
      for (int64_t k = 0; k < inner_n; ++k) dst[k * dst_stride] += a[k * sa] * b[k * sb];
    } else {
      for (int64_t k = 0; k < inner_n; ++k) {
        Acc p{1};
        for (size_t j = 0; j < ops.size(); ++j)
          p *= ops[j]->data[static_cast<size_t>(offset[j] + k * strides[j][inner])];
        dst[k * dst_stride] += p;
      }
    }
    for (size_t l = inner; l-- > 0;) {
      for (size_t j = 0; j <= ops.size(); ++j) offset[j] += strides[j][l];
      if (++coord[l] < extent[l]) break;
      for (size_t j = 0; j <= ops.size(); ++j) offset[j] -= coord[l] * strides[j][l];
      coord[l] = 0;
    }
  }
  return out;
}

bool HasLabel(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// The labels that the output or any operand other than a and b still needs.
template <typename Acc>
std::vector<int> NeededLabels(const std::vector<Operand<Acc>>& ops, const std::vector<int>& output, size_t a,
                              size_t b) {
  std::vector<int> needed = output;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (k != a && k != b) needed.insert(needed.end(), ops[k].labels.begin(), ops[k].labels.end());
  }
  return needed;
}

// Distinct labels of `lists`, in order of first appearance, that are in `needed` (all when null).
std::vector<int> DistinctLabels(std::initializer_list<const std::vector<int>*> lists, const std::vector<int>* needed) {
  std::vector<int> out;
  for (const std::vector<int>* labels : lists) {
    for (int label : *labels) {
      if ((needed == nullptr || HasLabel(*needed, label)) && !HasLabel(out, label)) out.push_back(label);
    }
  }
  return out;
}

// Contracts two operands at a time, each time the pair whose loop is smallest, keeping only the
// labels still needed: "ij,jk,kl->il" then costs I*J*K + I*K*L, never the I*J*K*L of one loop over
// every label (the greedy order of opt_einsum, without its search).
template <typename Acc>
Operand<Acc> EvaluateEinsum(std::vector<Operand<Acc>> ops, const EinsumPlan& plan) {
  if (ops.size() > 1) {
    // Diagonals and labels only one operand has shrink it before it meets the others.
    for (size_t i = 0; i < ops.size(); ++i) {
      const std::vector<int> needed = NeededLabels(ops, plan.output, i, i);
      const std::vector<int> keep = DistinctLabels({&ops[i].labels}, &needed);
      if (keep != ops[i].labels) ops[i] = Contract<Acc>({&ops[i]}, keep, plan.sizes);
    }
  }
  while (ops.size() > 1) {
    size_t best_a = 0;
    size_t best_b = 1;
    double best_cost = INFINITY;
    for (size_t a = 0; a < ops.size(); ++a) {
      for (size_t b = a + 1; b < ops.size(); ++b) {
        double cost = 1;  // in double: a product of large dims must not overflow
        for (int label : DistinctLabels({&ops[a].labels, &ops[b].labels}, nullptr)) {
          cost *= static_cast<double>(plan.sizes[static_cast<size_t>(label)]);
        }
        if (cost < best_cost) {
          best_cost = cost;
          best_a = a;
          best_b = b;
        }
      }
    }
    const std::vector<int> needed = NeededLabels(ops, plan.output, best_a, best_b);
    const std::vector<int> keep = DistinctLabels({&ops[best_a].labels, &ops[best_b].labels}, &needed);
    ops[best_a] = Contract<Acc>({&ops[best_a], &ops[best_b]}, keep, plan.sizes);
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(best_b));
  }
  if (ops[0].labels != plan.output) ops[0] = Contract<Acc>({&ops[0]}, plan.output, plan.sizes);
  return std::move(ops[0]);
}

Status RunEinsum(KernelContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) shapes.push_back(ctx.input(i)->shape());
  ASSIGN_OR_RETURN(EinsumPlan plan, PlanEinsum(ctx.node(), shapes));
  Tensor& y = *ctx.output(0);
  return VisitKernelDType(ctx.node(), y.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    // Integers multiply and add modulo 2^64 (no signed overflow), then wrap to T like T's own
    // arithmetic would; floating types accumulate in double.
    using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
    if constexpr (std::is_same_v<T, bool>) {
      return Unsupported(ctx.node().Describe() + ": bool inputs are not supported");
    } else {
      std::vector<Operand<Acc>> ops(ctx.num_inputs());
      for (size_t i = 0; i < ops.size(); ++i) {
        const Tensor& x = *ctx.input(i);
        ops[i].labels = plan.inputs[i];
        ops[i].dims = x.shape();
        ops[i].data.resize(static_cast<size_t>(x.numel()));
        const T* src = x.data<T>();
        for (size_t k = 0; k < ops[i].data.size(); ++k) {
          if constexpr (std::is_integral_v<T>) {
            ops[i].data[k] =
                static_cast<uint64_t>(static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(src[k]));
          } else {
            ops[i].data[k] = static_cast<double>(src[k]);
          }
        }
      }
      const Operand<Acc> result = EvaluateEinsum(std::move(ops), plan);
      T* out = y.data<T>();
      for (size_t k = 0; k < result.data.size(); ++k) {
        if constexpr (std::is_integral_v<T>) {
          out[k] = static_cast<T>(result.data[k]);
        } else {
          out[k] = FromDouble<T>(result.data[k]);
        }
      }
      return Status::Ok();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Det

Status InferDet(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'X'");
  if (!IsFloatingDType(x->dtype)) {
    return Unsupported(ctx.node().Describe() + ": dtype " + std::string(DTypeName(x->dtype)) +
                       " is not supported (float16, bfloat16, float, double)");
  }
  const Shape& s = x->shape;
  const size_t r = s.size();
  if (r < 2 || (s[r - 1] >= 0 && s[r - 2] >= 0 && s[r - 1] != s[r - 2])) {
    return ctx.Error("input must be [*, M, M], got " + ShapeToString(s));
  }
  ctx.SetOutput(0, x->dtype, Shape(s.begin(), s.end() - 2));
  return Status::Ok();
}

// Gaussian elimination with partial pivoting on a row-major m x m matrix (overwritten); the
// determinant is the product of the pivots, negated once per row swap.
double LuDeterminant(std::vector<double>& a, int64_t m) {
  auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(r * m + c)]; };
  double det = 1;
  for (int64_t k = 0; k < m; ++k) {
    int64_t pivot = k;
    for (int64_t r = k + 1; r < m; ++r) {
      if (std::fabs(at(r, k)) > std::fabs(at(pivot, k))) pivot = r;
    }
    if (at(pivot, k) == 0) return 0;
    if (pivot != k) {
      for (int64_t c = 0; c < m; ++c) std::swap(at(k, c), at(pivot, c));
      det = -det;
    }
    det *= at(k, k);
    for (int64_t r = k + 1; r < m; ++r) {
      const double f = at(r, k) / at(k, k);
      for (int64_t c = k + 1; c < m; ++c) at(r, c) -= f * at(k, c);
    }
  }
  return det;
}

Status RunDet(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const int64_t m = x.dim(x.rank() - 1);
  const int64_t batch = ctx.output(0)->numel();
  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
    std::vector<double> a(static_cast<size_t>(m * m));
    for (int64_t b = 0; b < batch; ++b) {
      for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<double>(in[static_cast<size_t>(b * m * m) + k]);
      out[b] = FromDouble<T>(LuDeterminant(a, m));
    }
    return Status::Ok();
  });
}

}  // namespace

std::vector<OpEntry> LinalgOps() {
  return {
      {"Einsum", InferEinsum, RunEinsum},
      {"Det", InferDet, RunDet},
  };
}

}  // namespace chipfit
