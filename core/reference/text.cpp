// Reference text ops: TfIdfVectorizer over integer or string n-grams, and StringNormalizer.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

// ---------------------------------------------------------------------------------------------
// TfIdfVectorizer. One implementation for both pools, templated on the item type: int64_t for
// pool_int64s (X int32 or int64), std::string for pool_strings (X string).

enum class TfIdfMode { kTf, kIdf, kTfIdf };

// The validated attributes of one TfIdfVectorizer node.
template <typename Item>
struct TfIdfPlan {
  TfIdfMode mode = TfIdfMode::kTf;
  int64_t min_length = 1, max_length = 1, max_skip = 0;
  // levels[n - 1]: the pool's n-grams of length n, each mapped to its position among all pool n-grams.
  std::vector<std::map<std::vector<Item>, size_t>> levels;
  std::vector<int64_t> indexes;  // ngram_indexes: per pool n-gram, its output coordinate
  std::vector<float> weights;    // per pool n-gram
  int64_t width = 0;             // max(ngram_indexes) + 1
};

template <typename Item>
constexpr bool kStringItems = std::is_same_v<Item, std::string>;

template <typename Item>
constexpr const char* PoolName() {
  return kStringItems<Item> ? "pool_strings" : "pool_int64s";
}

template <typename Item>
std::vector<Item> PoolItems(const Node& node) {
  if constexpr (kStringItems<Item>) {
    const auto it = node.attributes.find("pool_strings");
    return it == node.attributes.end() ? std::vector<std::string>{} : it->second.strings;
  } else {
    return node.GetInts("pool_int64s");
  }
}

// "[1, 2]" or "["a", "b"]", as messages show an n-gram.
template <typename Item>
std::string JoinGram(const std::vector<Item>& gram) {
  if constexpr (kStringItems<Item>) {
    std::string s = "[";
    for (size_t i = 0; i < gram.size(); ++i) s += (i ? ", \"" : "\"") + gram[i] + "\"";
    return s + "]";
  } else {
    return JoinInts(gram);
  }
}

// Whether the node's pool is pool_strings (else pool_int64s); exactly one must be set.
Result<bool> HasStringPool(const Node& node) {
  const bool ints = node.Has("pool_int64s"), strings = node.Has("pool_strings");
  if (ints && strings) return InvalidArgument(node.Describe() + ": set pool_int64s or pool_strings, not both");
  if (!ints && !strings)
    return InvalidArgument(node.Describe() + ": needs the n-gram pool pool_int64s or pool_strings");
  return strings;
}

Result<TfIdfMode> ReadMode(const Node& node) {
  const std::string mode = node.GetString("mode", "");
  if (mode == "TF") return TfIdfMode::kTf;
  if (mode == "IDF") return TfIdfMode::kIdf;
  if (mode == "TFIDF") return TfIdfMode::kTfIdf;
  return InvalidArgument(node.Describe() + ": mode '" + mode + "' must be TF, IDF or TFIDF");
}

// Splits the pool into levels by ngram_counts (the start of each length's n-grams, as in CSR).
template <typename Item>
Status ReadPool(const Node& node, TfIdfPlan<Item>& plan) {
  const std::vector<Item> pool = PoolItems<Item>(node);
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
                             " must be non-decreasing and within " + PoolName<Item>() + " (" + std::to_string(items) +
                             " items)");
    }
    if ((end - begin) % n != 0) {
      return InvalidArgument(node.Describe() + ": the " + std::to_string(end - begin) + " pool items of " +
                             std::to_string(n) + "-grams do not make whole " + std::to_string(n) + "-grams");
    }
    auto& grams = plan.levels.emplace_back();
    for (int64_t at = begin; at < end; at += n) {
      std::vector<Item> gram(pool.begin() + at, pool.begin() + at + n);
      // A repeated n-gram would leave its count to whichever copy a lookup finds.
      if (!grams.emplace(gram, id++).second) {
        return InvalidArgument(node.Describe() + ": " + PoolName<Item>() + " holds the " + std::to_string(n) +
                               "-gram " + JoinGram(gram) + " twice");
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

template <typename Item>
Result<TfIdfPlan<Item>> ReadTfIdf(const Node& node) {
  for (const char* attr :
       {"mode", "min_gram_length", "max_gram_length", "max_skip_count", "ngram_counts", "ngram_indexes"}) {
    if (!node.Has(attr)) return InvalidArgument(node.Describe() + ": attribute " + attr + " is required");
  }
  TfIdfPlan<Item> plan;
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
  ASSIGN_OR_RETURN(const bool strings, HasStringPool(ctx.node()));
  if (strings && x->dtype != DType::kString) {
    return ctx.Error("X must be string to match pool_strings, got " + std::string(DTypeName(x->dtype)));
  }
  if (!strings && x->dtype != DType::kI32 && x->dtype != DType::kI64) {
    return ctx.Error("X must be int32 or int64 to match pool_int64s, got " + std::string(DTypeName(x->dtype)));
  }
  if (x->shape.size() != 1 && x->shape.size() != 2) {
    return ctx.Error("X must be [C] or [N, C], got " + ShapeToString(x->shape));
  }
  int64_t width = 0;
  if (strings) {
    ASSIGN_OR_RETURN(const TfIdfPlan<std::string> plan, ReadTfIdf<std::string>(ctx.node()));
    width = plan.width;
  } else {
    ASSIGN_OR_RETURN(const TfIdfPlan<int64_t> plan, ReadTfIdf<int64_t>(ctx.node()));
    width = plan.width;
  }
  Shape y = {width};
  if (x->shape.size() == 2) y.insert(y.begin(), x->shape[0]);
  ctx.SetOutput(0, DType::kF32, y);
  return Status::Ok();
}

// Occurrences of each pool n-gram in one row. An n-gram with skip s takes every (s + 1)-th item;
// each (start, skip) placement counts once, except that a 1-gram is the same whatever the skip.
template <typename Item>
std::vector<int64_t> CountNgrams(const TfIdfPlan<Item>& plan, const std::vector<Item>& row) {
  std::vector<int64_t> counts(plan.indexes.size(), 0);
  const auto len = static_cast<int64_t>(row.size());
  const auto levels = static_cast<int64_t>(plan.levels.size());
  std::vector<Item> gram;
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

// Element `at` of X as a pool item.
template <typename Item>
Item ReadItem(const Tensor& x, int64_t at) {
  if constexpr (kStringItems<Item>) {
    return x.data<std::string>()[at];
  } else {
    return x.dtype() == DType::kI32 ? x.data<int32_t>()[at] : x.data<int64_t>()[at];
  }
}

// Weights follow the pool order, as the spec says ("the i-th element in weights is the weight of
// the i-th n-gram in pool"); ONNX Runtime indexes them by output coordinate instead, which agrees
// whenever ngram_indexes is the identity.
template <typename Item>
Status RunTfIdf(KernelContext& ctx) {
  ASSIGN_OR_RETURN(TfIdfPlan<Item> plan, ReadTfIdf<Item>(ctx.node()));
  const Tensor& x = *ctx.input(0);
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t len = x.rank() == 2 ? x.dim(1) : x.dim(0);
  float* y = ctx.output(0)->data<float>();
  std::fill(y, y + rows * plan.width, 0.0f);
  std::vector<Item> row(static_cast<size_t>(len));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < len; ++c) row[static_cast<size_t>(c)] = ReadItem<Item>(x, r * len + c);
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

Status RunTfIdfVectorizer(KernelContext& ctx) {
  return ctx.input(0)->dtype() == DType::kString ? RunTfIdf<std::string>(ctx) : RunTfIdf<int64_t>(ctx);
}

// ---------------------------------------------------------------------------------------------
// StringNormalizer. ONNX Runtime maps case through the C++ locale that `locale` names; chipfit
// ignores `locale` and maps ASCII letters only, for stopword matching and case changes alike. Other
// bytes (every byte of a multi-byte UTF-8 letter) stay as they are: "ÄRGER" lowers to "Ärger".

enum class CaseChange { kNone, kLower, kUpper };

struct NormalizerPlan {
  CaseChange change = CaseChange::kNone;
  bool case_sensitive = false;
  std::set<std::string> stopwords;  // in lower case unless case_sensitive
};

std::string AsciiCase(std::string s, bool upper) {
  for (char& c : s) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

Result<NormalizerPlan> ReadNormalizer(const Node& node) {
  NormalizerPlan plan;
  const std::string change = node.GetString("case_change_action", "NONE");
  if (change == "LOWER") {
    plan.change = CaseChange::kLower;
  } else if (change == "UPPER") {
    plan.change = CaseChange::kUpper;
  } else if (change != "NONE") {
    return InvalidArgument(node.Describe() + ": case_change_action '" + change + "' must be LOWER, UPPER or NONE");
  }
  plan.case_sensitive = node.GetInt("is_case_sensitive", 0) != 0;
  if (const auto it = node.attributes.find("stopwords"); it != node.attributes.end()) {
    for (const std::string& word : it->second.strings) {
      plan.stopwords.insert(plan.case_sensitive ? word : AsciiCase(word, false));
    }
  }
  return plan;
}

// X's words less the stopwords, case changed. When no word remains the result is one empty string,
// as ONNX Runtime and the ONNX test data (test_strnormalizer_export_monday_empty_output) have it.
std::vector<std::string> Normalize(const NormalizerPlan& plan, const Tensor& x) {
  std::vector<std::string> kept;
  const std::string* words = x.data<std::string>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (plan.stopwords.contains(plan.case_sensitive ? words[i] : AsciiCase(words[i], false))) continue;
    kept.push_back(plan.change == CaseChange::kNone ? words[i]
                                                    : AsciiCase(words[i], plan.change == CaseChange::kUpper));
  }
  if (kept.empty()) kept.emplace_back();
  return kept;
}

// [C'] for X [C], [1, C'] for X [1, C].
Shape NormalizedShape(const Shape& x, int64_t kept) { return x.size() == 1 ? Shape{kept} : Shape{1, kept}; }

Status InferStringNormalizer(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'X'");
  if (x->dtype != DType::kString) return ctx.Error("X must be string, got " + std::string(DTypeName(x->dtype)));
  if (x->shape.size() != 1 && !(x->shape.size() == 2 && (x->shape[0] == 1 || x->shape[0] < 0))) {
    return ctx.Error("X must be [C] or [1, C], got " + ShapeToString(x->shape));
  }
  ASSIGN_OR_RETURN(const NormalizerPlan plan, ReadNormalizer(ctx.node()));
  // Without stopwords every word stays, so the shape is known before the words are, unless X may
  // be empty (C unknown or 0), which gives one empty string.
  if (plan.stopwords.empty() && x->shape.back() > 0) {
    ctx.SetOutput(0, DType::kString, NormalizedShape(x->shape, x->shape.back()));
    return Status::Ok();
  }
  const Tensor* words = ctx.RequireValue(0);
  if (words == nullptr) return ctx.ValueNeeded();
  const auto kept = static_cast<int64_t>(Normalize(plan, *words).size());
  ctx.SetOutput(0, DType::kString, NormalizedShape(x->shape, kept));
  return Status::Ok();
}

Status RunStringNormalizer(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const NormalizerPlan plan, ReadNormalizer(ctx.node()));
  std::vector<std::string> kept = Normalize(plan, *ctx.input(0));
  Tensor& y = *ctx.output(0);
  if (y.dtype() != DType::kString || y.numel() != static_cast<int64_t>(kept.size())) {
    return Internal(ctx.node().Describe() + ": output " + DescribeTensor(y) + " does not hold the " +
                    std::to_string(kept.size()) + " normalized strings");
  }
  std::move(kept.begin(), kept.end(), y.data<std::string>());
  return Status::Ok();
}

}  // namespace

std::vector<OpEntry> TextOps() {
  return {
      {"TfIdfVectorizer", InferTfIdfVectorizer, RunTfIdfVectorizer},
      {"StringNormalizer", InferStringNormalizer, RunStringNormalizer},
  };
}

}  // namespace chipfit
