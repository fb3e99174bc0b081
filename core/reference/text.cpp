// Reference TfIdfVectorizer (integer n-grams; string inputs need string tensors, which chipfit lacks).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

enum class TfIdfMode { kTf, kIdf, kTfIdf };

// The validated attributes of one TfIdfVectorizer node.
struct TfIdfPlan {
  TfIdfMode mode = TfIdfMode::kTf;
  int64_t min_length = 1, max_length = 1, max_skip = 0;
  // levels[n - 1]: the pool's n-grams of length n, each mapped to its position among all pool n-grams.
  std::vector<std::map<std::vector<int64_t>, size_t>> levels;
  std::vector<int64_t> indexes;  // ngram_indexes: per pool n-gram, its output coordinate
  std::vector<float> weights;    // per pool n-gram
  int64_t width = 0;             // max(ngram_indexes) + 1
};

Status StringsUnsupported(const Node& node) {
  return Unsupported(node.Describe() + ": string n-grams need string tensors, which chipfit does not have yet");
}

Result<TfIdfMode> ReadMode(const Node& node) {
  const std::string mode = node.GetString("mode", "");
  if (mode == "TF") return TfIdfMode::kTf;
  if (mode == "IDF") return TfIdfMode::kIdf;
  if (mode == "TFIDF") return TfIdfMode::kTfIdf;
  return InvalidArgument(node.Describe() + ": mode '" + mode + "' must be TF, IDF or TFIDF");
}

// Splits pool_int64s into levels by ngram_counts (the start of each length's n-grams, as in CSR).
Status ReadPool(const Node& node, TfIdfPlan& plan) {
  const std::vector<int64_t> pool = node.GetInts("pool_int64s");
  const std::vector<int64_t> counts = node.GetInts("ngram_counts");
  const auto items = static_cast<int64_t>(pool.size());
  if (counts.empty() || counts[0] != 0) {
    return InvalidArgument(node.Describe() + ": ngram_counts " + JoinInts(counts) +
                           " must start at 0, where the pool's 1-grams start");
  }
  size_t id = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    const int64_t n = static_cast<int64_t>(level) + 1;
    const int64_t begin = counts[level];
    const int64_t end = level + 1 < counts.size() ? counts[level + 1] : items;
    if (end < begin || end > items) {
      return InvalidArgument(node.Describe() + ": ngram_counts " + JoinInts(counts) +
                             " must be non-decreasing and within pool_int64s (" + std::to_string(items) + " items)");
    }
    if ((end - begin) % n != 0) {
      return InvalidArgument(node.Describe() + ": the " + std::to_string(end - begin) + " pool items of " +
                             std::to_string(n) + "-grams do not make whole " + std::to_string(n) + "-grams");
    }
    auto& grams = plan.levels.emplace_back();
    for (int64_t at = begin; at < end; at += n) {
      std::vector<int64_t> gram(pool.begin() + at, pool.begin() + at + n);
      // A repeated n-gram would leave its count to whichever copy a lookup finds.
      if (!grams.emplace(gram, id++).second) {
        return InvalidArgument(node.Describe() + ": pool_int64s holds the " + std::to_string(n) + "-gram " +
                               JoinInts(gram) + " twice");
      }
    }
  }
  plan.indexes = node.GetInts("ngram_indexes");
  if (plan.indexes.size() != id) {
    return InvalidArgument(node.Describe() + ": ngram_indexes has " + std::to_string(plan.indexes.size()) +
                           " entries but the pool holds " + std::to_string(id) + " n-grams");
  }
  return Status::Ok();
}

Result<TfIdfPlan> ReadTfIdf(const Node& node) {
  for (const char* attr :
       {"mode", "min_gram_length", "max_gram_length", "max_skip_count", "ngram_counts", "ngram_indexes"}) {
    if (!node.Has(attr)) return InvalidArgument(node.Describe() + ": attribute " + attr + " is required");
  }
  const bool ints = node.Has("pool_int64s"), strings = node.Has("pool_strings");
  if (ints && strings) return InvalidArgument(node.Describe() + ": set pool_int64s or pool_strings, not both");
  if (strings) return StringsUnsupported(node);
  if (!ints) return InvalidArgument(node.Describe() + ": needs the n-gram pool pool_int64s");

  TfIdfPlan plan;
  ASSIGN_OR_RETURN(plan.mode, ReadMode(node));
  plan.min_length = node.GetInt("min_gram_length", 1);
  plan.max_length = node.GetInt("max_gram_length", 1);
  plan.max_skip = node.GetInt("max_skip_count", 0);
  if (plan.min_length < 1 || plan.max_length < plan.min_length) {
    return InvalidArgument(node.Describe() + ": n-gram lengths " + std::to_string(plan.min_length) + ".." +
                           std::to_string(plan.max_length) + " must satisfy 1 <= min_gram_length <= max_gram_length");
  }
  if (plan.max_skip < 0) {
    return InvalidArgument(node.Describe() + ": max_skip_count " + std::to_string(plan.max_skip) +
                           " must be non-negative");
  }
  RETURN_IF_ERROR(ReadPool(node, plan));
  if (plan.indexes.empty()) return InvalidArgument(node.Describe() + ": ngram_indexes is empty: no output size");
  for (int64_t index : plan.indexes) {
    if (index < 0) {
      return InvalidArgument(node.Describe() + ": ngram_indexes " + JoinInts(plan.indexes) +
                             " must be non-negative output coordinates");
    }
  }
  plan.width = *std::max_element(plan.indexes.begin(), plan.indexes.end()) + 1;
  plan.weights = node.GetFloats("weights", std::vector<float>(plan.indexes.size(), 1.0f));
  if (plan.weights.size() != plan.indexes.size()) {
    return InvalidArgument(node.Describe() + ": weights has " + std::to_string(plan.weights.size()) +
                           " entries but ngram_indexes has " + std::to_string(plan.indexes.size()));
  }
  return plan;
}

Status InferTfIdfVectorizer(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'X'");
  if (x->dtype == DType::kString) return StringsUnsupported(ctx.node());
  if (x->dtype != DType::kI32 && x->dtype != DType::kI64) {
    return ctx.Error("X must be int32 or int64, got " + std::string(DTypeName(x->dtype)));
  }
  if (x->shape.size() != 1 && x->shape.size() != 2) {
    return ctx.Error("X must be [C] or [N, C], got " + ShapeToString(x->shape));
  }
  ASSIGN_OR_RETURN(TfIdfPlan plan, ReadTfIdf(ctx.node()));
  Shape y = {plan.width};
  if (x->shape.size() == 2) y.insert(y.begin(), x->shape[0]);
  ctx.SetOutput(0, DType::kF32, y);
  return Status::Ok();
}

// Occurrences of each pool n-gram in one row. An n-gram with skip s takes every (s + 1)-th item;
// each (start, skip) placement counts once, except that a 1-gram is the same whatever the skip.
std::vector<int64_t> CountNgrams(const TfIdfPlan& plan, const std::vector<int64_t>& row) {
  std::vector<int64_t> counts(plan.indexes.size(), 0);
  const auto len = static_cast<int64_t>(row.size());
  const auto levels = static_cast<int64_t>(plan.levels.size());
  std::vector<int64_t> gram;
  for (int64_t n = plan.min_length; n <= std::min(plan.max_length, levels); ++n) {
    const auto& grams = plan.levels[static_cast<size_t>(n - 1)];
    if (grams.empty()) continue;
    // Strides past the row's length find nothing; bounding them also keeps (n - 1) * stride small.
    const int64_t max_skip = n == 1 ? 0 : std::min(plan.max_skip, len);
    for (int64_t stride = 1; stride <= max_skip + 1; ++stride) {
      for (int64_t start = 0; start + (n - 1) * stride < len; ++start) {
        gram.clear();
        for (int64_t k = 0; k < n; ++k) gram.push_back(row[static_cast<size_t>(start + k * stride)]);
        if (auto hit = grams.find(gram); hit != grams.end()) ++counts[hit->second];
      }
    }
  }
  return counts;
}

// Weights follow the pool order, as the spec says ("the i-th element in weights is the weight of
// the i-th n-gram in pool"); ONNX Runtime indexes them by output coordinate instead, which agrees
// whenever ngram_indexes is the identity.
Status RunTfIdfVectorizer(KernelContext& ctx) {
  ASSIGN_OR_RETURN(TfIdfPlan plan, ReadTfIdf(ctx.node()));
  const Tensor& x = *ctx.input(0);
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t len = x.rank() == 2 ? x.dim(1) : x.dim(0);
  float* y = ctx.output(0)->data<float>();
  std::fill(y, y + rows * plan.width, 0.0f);
  std::vector<int64_t> row(static_cast<size_t>(len));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < len; ++c) {
      const int64_t at = r * len + c;
      row[static_cast<size_t>(c)] = x.dtype() == DType::kI32 ? x.data<int32_t>()[at] : x.data<int64_t>()[at];
    }
    const std::vector<int64_t> counts = CountNgrams(plan, row);
    float* out = y + r * plan.width;
    for (size_t i = 0; i < counts.size(); ++i) {
      const auto count = static_cast<float>(counts[i]);
      float value = count;
      if (plan.mode == TfIdfMode::kIdf) value = counts[i] > 0 ? plan.weights[i] : 0.0f;
      if (plan.mode == TfIdfMode::kTfIdf) value = count * plan.weights[i];
      out[plan.indexes[i]] += value;
    }
  }
  return Status::Ok();
}

}  // namespace

std::vector<OpEntry> TextOps() {
  return {
      {"TfIdfVectorizer", InferTfIdfVectorizer, RunTfIdfVectorizer},
  };
}

}  // namespace chipfit
