// StringNormalizer and TfIdfVectorizer on the CPU (kernel_groups.h), giving the outputs of their
// reference kernels (core/reference/text.cpp).
//
// TfIdfVectorizer builds its pool once, at Init, into a trie of n-grams kept in one hash map
// (parent node, item) -> child node; the node that ends a pool n-gram holds the n-gram's position in
// the pool. A row is counted by one walk down the trie per (start, skip): every pool n-gram of an
// allowed length the walk passes counts once, 1-grams only on the walk without skips (the reference
// counts a 1-gram once whatever the skip). Rows run in parallel, each writing its own output row.
// The weighting is the reference's: per pool n-gram in pool order, TF the count, IDF the weight when
// found, TFIDF count × weight, added at its output coordinate. When the coordinates are distinct
// and no weight is infinite or NaN, the n-grams not found add +0 to 0 and only the found ones are
// written. Integer rows are read as int64, string rows as views of the input's strings.
//
// StringNormalizer drops the stopwords (a hash set built at Init) and changes the case of what is
// left, mapping ASCII letters only, as the reference does: it ignores `locale` (ONNX Runtime maps
// through the C++ locale it names), so the kernel does too. Its output length depends on the words
// found, so it sizes its output itself (IKernel::AllocatesOutputs); no word left gives one empty
// string, [1] or [1, 1], as in the reference.
//
// Attributes and inputs the reference rejects are refused at Init with the reference's reason, so
// that its error is the one the user sees.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ref_util.h"
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<IKernel>>;

// Items visited (row length × walks) from which rows are split between threads.
constexpr int64_t kParallelFrom = int64_t{1} << 14;

const ValueInfo* InputInfo(const KernelInit& init, size_t i) {
  return i < init.inputs.size() ? init.inputs[i] : nullptr;
}

std::string DTypeString(DType dtype) { return std::string(DTypeName(dtype)); }

// A refusal of what the reference rejects, with its reason.
Status RefusedAsReference(const std::string& reason) { return Unsupported(reason + " (the reference reports it)"); }

// ---------------------------------------------------------------------------------------------
// TfIdfVectorizer

enum class TfIdfMode { kTf, kIdf, kTfIdf };

// A 64-bit mix (the SplitMix64 finaliser), so that nearby ids and parents spread over the buckets.
uint64_t Mix(uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

// Token: int64_t (pool_int64s) or std::string_view (pool_strings, views of the kernel's copy).
template <typename Token>
struct TrieKey {
  int64_t parent;
  Token token;
  bool operator==(const TrieKey& o) const { return parent == o.parent && token == o.token; }
};

template <typename Token>
struct TrieKeyHash {
  size_t operator()(const TrieKey<Token>& k) const {
    uint64_t h = 0;
    if constexpr (std::is_same_v<Token, int64_t>) {
      h = static_cast<uint64_t>(k.token);
    } else {
      h = std::hash<std::string_view>{}(k.token);
    }
    return static_cast<size_t>(Mix(h + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(k.parent + 1)));
  }
};

// "[1, 2]" or "["a", "b"]", as the reference's messages show an n-gram.
std::string JoinGram(const std::vector<int64_t>& gram) { return JoinInts(gram); }
std::string JoinGram(const std::vector<std::string_view>& gram) {
  std::string s = "[";
  for (size_t i = 0; i < gram.size(); ++i) {
    s += i ? ", \"" : "\"";
    s += gram[i];
    s += "\"";
  }
  return s + "]";
}

template <typename Token>
class TfIdfKernel final : public IKernel {
  static constexpr bool kStrings = std::is_same_v<Token, std::string_view>;

 public:
  // The reference's checks (text.cpp ReadTfIdf, ReadPool), in its order; the trie built on the way.
  static KernelResult Create(const KernelInit& init) {
    const Node& node = init.node;
    for (const char* attr :
         {"mode", "min_gram_length", "max_gram_length", "max_skip_count", "ngram_counts", "ngram_indexes"}) {
      if (!node.Has(attr)) return RefusedAsReference(std::string("attribute ") + attr + " is required");
    }
    std::unique_ptr<TfIdfKernel> k(new TfIdfKernel());
    const std::string mode = node.GetString("mode", "");
    if (mode == "TF") {
      k->mode_ = TfIdfMode::kTf;
    } else if (mode == "IDF") {
      k->mode_ = TfIdfMode::kIdf;
    } else if (mode == "TFIDF") {
      k->mode_ = TfIdfMode::kTfIdf;
    } else {
      return RefusedAsReference("mode '" + mode + "' must be TF, IDF or TFIDF");
    }
    k->min_length_ = node.GetInt("min_gram_length", 1);
    k->max_length_ = node.GetInt("max_gram_length", 1);
    k->max_skip_ = node.GetInt("max_skip_count", 0);
    if (k->min_length_ < 1 || k->max_length_ < k->min_length_) {
      return RefusedAsReference("n-gram lengths " + std::to_string(k->min_length_) + ".." +
                                std::to_string(k->max_length_) +
                                " must satisfy 1 <= min_gram_length <= max_gram_length");
    }
    if (k->max_skip_ < 0) {
      return RefusedAsReference("max_skip_count " + std::to_string(k->max_skip_) + " must be non-negative");
    }
    RETURN_IF_ERROR(k->BuildPool(node));
    if (k->indexes_.empty()) return RefusedAsReference("ngram_indexes is empty: no output size");
    for (int64_t index : k->indexes_) {
      if (index < 0) {
        return RefusedAsReference("ngram_indexes " + JoinInts(k->indexes_) +
                                  " must be non-negative output coordinates");
      }
    }
    k->width_ = *std::max_element(k->indexes_.begin(), k->indexes_.end()) + 1;
    k->weights_ = node.GetFloats("weights", std::vector<float>(k->indexes_.size(), 1.0f));
    if (k->weights_.size() != k->indexes_.size()) {
      return RefusedAsReference("weights has " + std::to_string(k->weights_.size()) +
                                " entries but ngram_indexes has " + std::to_string(k->indexes_.size()));
    }
    // Only the found n-grams need writing when each has its own coordinate and the others add
    // exactly +0 (0 × weight is NaN for an infinite weight, and NaN for a NaN one).
    std::vector<int64_t> sorted = k->indexes_;
    std::sort(sorted.begin(), sorted.end());
    const bool distinct = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
    const bool finite = std::all_of(k->weights_.begin(), k->weights_.end(), [](float w) { return std::isfinite(w); });
    k->sparse_ = distinct && (k->mode_ != TfIdfMode::kTfIdf || finite);
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (x.rank() != 1 && x.rank() != 2) return ctx.Error("X must be [C] or [N, C], got " + ShapeToString(x.shape()));
    const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
    const int64_t len = x.rank() == 2 ? x.dim(1) : x.dim(0);
    Tensor& y = *ctx.output(0);
    if (y.dtype() != DType::kF32 || y.numel() != rows * width_) {
      return Internal(ctx.node().Describe() + ": output " + DescribeTensor(y) + " does not hold " +
                      std::to_string(rows) + " rows of " + std::to_string(width_));
    }
    float* out = y.data<float>();
    if constexpr (kStrings) {
      if (x.dtype() != DType::kString) return ctx.Error("X must be string to match pool_strings");
      const std::string* p = x.data<std::string>();
      Rows(rows, len, out, [p](int64_t at) { return std::string_view(p[at]); });
    } else if (x.dtype() == DType::kI32) {
      const int32_t* p = x.data<int32_t>();
      Rows(rows, len, out, [p](int64_t at) { return static_cast<int64_t>(p[at]); });
    } else if (x.dtype() == DType::kI64) {
      const int64_t* p = x.data<int64_t>();
      Rows(rows, len, out, [p](int64_t at) { return p[at]; });
    } else {
      return ctx.Error("X must be int32 or int64 to match pool_int64s, got " + DTypeString(x.dtype()));
    }
    return Status();
  }

 private:
  TfIdfKernel() = default;

  // The pool split into levels by ngram_counts (the start of each length's n-grams), each n-gram
  // added to the trie; ngram_indexes read and matched against the n-gram count.
  Status BuildPool(const Node& node) {
    const char* pool_name = kStrings ? "pool_strings" : "pool_int64s";
    std::vector<Token> pool;
    if constexpr (kStrings) {
      if (const auto it = node.attributes.find("pool_strings"); it != node.attributes.end()) {
        strings_ = it->second.strings;
      }
      pool.assign(strings_.begin(), strings_.end());
    } else {
      pool = node.GetInts("pool_int64s");
    }
    const std::vector<int64_t> counts = node.GetInts("ngram_counts");
    const auto items = static_cast<int64_t>(pool.size());
    if (counts.empty() || counts[0] != 0) {
      return RefusedAsReference("ngram_counts " + JoinInts(counts) +
                                " must start at 0, where the pool's 1-grams start");
    }
    levels_ = static_cast<int64_t>(counts.size());
    grams_.push_back(-1);  // the root
    int64_t id = 0;
    for (size_t level = 0; level < counts.size(); ++level) {
      const int64_t n = static_cast<int64_t>(level) + 1;
      const int64_t begin = counts[level];
      const int64_t end = level + 1 < counts.size() ? counts[level + 1] : items;
      if (end < begin || end > items) {
        return RefusedAsReference("ngram_counts " + JoinInts(counts) + " must be non-decreasing and within " +
                                  pool_name + " (" + std::to_string(items) + " items)");
      }
      if ((end - begin) % n != 0) {
        return RefusedAsReference("the " + std::to_string(end - begin) + " pool items of " + std::to_string(n) +
                                  "-grams do not make whole " + std::to_string(n) + "-grams");
      }
      for (int64_t at = begin; at < end; at += n) {
        int64_t node_id = 0;
        for (int64_t q = at; q < at + n; ++q) {
          const auto [it, added] =
              children_.try_emplace(TrieKey<Token>{node_id, pool[static_cast<size_t>(q)]}, grams_.size());
          if (added) grams_.push_back(-1);
          node_id = it->second;
        }
        // A node of depth n ends exactly one n-gram: a repeated one finds its position taken.
        int64_t& slot = grams_[static_cast<size_t>(node_id)];
        if (slot >= 0) {
          const std::vector<Token> gram(pool.begin() + at, pool.begin() + at + n);
          return RefusedAsReference(std::string(pool_name) + " holds the " + std::to_string(n) + "-gram " +
                                    JoinGram(gram) + " twice");
        }
        slot = id++;
      }
    }
    indexes_ = node.GetInts("ngram_indexes");
    if (static_cast<int64_t>(indexes_.size()) != id) {
      return RefusedAsReference("ngram_indexes has " + std::to_string(indexes_.size()) +
                                " entries but the pool holds " + std::to_string(id) + " n-grams");
    }
    return Status();
  }

  // The trie node under `parent` for `token`, or -1.
  int64_t Child(int64_t parent, const Token& token) const {
    const auto it = children_.find(TrieKey<Token>{parent, token});
    return it == children_.end() ? -1 : it->second;
  }

  // Adds one row's n-gram counts to `counts` (indexed by pool position), listing in `found` each
  // position it raises from 0. `first[s]`: the trie node of the 1-gram at s (scratch, len entries).
  template <typename Get>
  void CountRow(int64_t len, const Get& get, std::vector<int64_t>& first, std::vector<int64_t>& counts,
                std::vector<int64_t>& found) const {
    const int64_t depth_max = std::min(max_length_, levels_);
    if (depth_max < min_length_) return;
    auto add = [&](int64_t node) {
      const int64_t gram = grams_[static_cast<size_t>(node)];
      if (gram >= 0 && counts[static_cast<size_t>(gram)]++ == 0) found.push_back(gram);
    };
    for (int64_t s = 0; s < len; ++s) {
      const int64_t node = Child(0, get(s));
      first[static_cast<size_t>(s)] = node;
      if (node >= 0 && min_length_ == 1) add(node);
    }
    if (depth_max < 2) return;
    // Skips past the row's length find nothing (the reference's bound).
    const int64_t strides = std::min(max_skip_, len) + 1;
    for (int64_t stride = 1; stride <= strides; ++stride) {
      for (int64_t start = 0; start + stride < len; ++start) {
        int64_t node = first[static_cast<size_t>(start)];
        for (int64_t depth = 2, at = start + stride; node >= 0 && depth <= depth_max && at < len;
             ++depth, at += stride) {
          node = Child(node, get(at));
          if (node >= 0 && depth >= min_length_) add(node);
        }
      }
    }
  }

  float Weighted(int64_t count, size_t gram) const {
    const auto value = static_cast<float>(count);
    switch (mode_) {
      case TfIdfMode::kTf: return value;
      case TfIdfMode::kIdf: return count > 0 ? weights_[gram] : 0.0f;
      case TfIdfMode::kTfIdf: return value * weights_[gram];
    }
    return value;
  }

  // Every row counted and weighted into its output row.
  template <typename Get>
  void Rows(int64_t rows, int64_t len, float* out, const Get& get) const {
    const int64_t walks = 1 + (std::min(max_length_, levels_) >= 2 ? std::min(max_skip_, len) + 1 : 0);
    const int64_t work = rows * (len * walks + width_);
    const size_t grams = indexes_.size();
#pragma omp parallel if (rows > 1 && work >= kParallelFrom && omp_get_max_threads() > 1)
    {
      std::vector<int64_t> first(static_cast<size_t>(len));
      std::vector<int64_t> counts(grams, 0);
      std::vector<int64_t> found;
#pragma omp for schedule(dynamic, 8)
      for (int64_t r = 0; r < rows; ++r) {
        float* row = out + r * width_;
        std::fill(row, row + width_, 0.0f);
        CountRow(
            len, [&](int64_t c) { return get(r * len + c); }, first, counts, found);
        if (sparse_) {
          // 0 + value: a -0 weight gives +0, as the reference's sum does.
          for (int64_t g : found) {
            const auto i = static_cast<size_t>(g);
            row[indexes_[i]] = 0.0f + Weighted(counts[i], i);
          }
        } else {
          for (size_t i = 0; i < grams; ++i) row[indexes_[i]] += Weighted(counts[i], i);
        }
        for (int64_t g : found) counts[static_cast<size_t>(g)] = 0;
        found.clear();
      }
    }
  }

  TfIdfMode mode_ = TfIdfMode::kTf;
  int64_t min_length_ = 1, max_length_ = 1, max_skip_ = 0;
  int64_t levels_ = 0;                // ngram_counts entries: the longest pool n-grams
  std::vector<std::string> strings_;  // pool_strings, which string tokens view
  std::unordered_map<TrieKey<Token>, int64_t, TrieKeyHash<Token>> children_;
  std::vector<int64_t> grams_;    // per trie node: the pool position of the n-gram ending there, or -1
  std::vector<int64_t> indexes_;  // per pool n-gram: its output coordinate
  std::vector<float> weights_;    // per pool n-gram
  int64_t width_ = 0;             // max(ngram_indexes) + 1
  bool sparse_ = false;           // write only the found n-grams (see the top comment)
};

// The pool X's dtype matches (pool_strings for string X, pool_int64s for int32/int64 X), X of rank
// 1 or 2: the reference's shape function's checks, in its order.
KernelResult CreateTfIdf(const KernelInit& init) {
  const ValueInfo* x = InputInfo(init, 0);
  if (x == nullptr) return Unsupported("input 'X' is missing");
  const bool ints = init.node.Has("pool_int64s"), strings = init.node.Has("pool_strings");
  if (ints && strings) return RefusedAsReference("set pool_int64s or pool_strings, not both");
  if (!ints && !strings) return RefusedAsReference("needs the n-gram pool pool_int64s or pool_strings");
  if (strings && x->dtype != DType::kString) {
    return RefusedAsReference("X must be string to match pool_strings, got " + DTypeString(x->dtype));
  }
  if (!strings && x->dtype != DType::kI32 && x->dtype != DType::kI64) {
    return RefusedAsReference("X must be int32 or int64 to match pool_int64s, got " + DTypeString(x->dtype));
  }
  if (x->shape.size() != 1 && x->shape.size() != 2) {
    return RefusedAsReference("X must be [C] or [N, C], got " + ShapeToString(x->shape));
  }
  return strings ? TfIdfKernel<std::string_view>::Create(init) : TfIdfKernel<int64_t>::Create(init);
}

// ---------------------------------------------------------------------------------------------
// StringNormalizer

enum class CaseChange { kNone, kLower, kUpper };

// ASCII letters to upper or lower case in place; every other byte (UTF-8 included) as it is.
void AsciiCase(std::string& s, bool upper) {
  for (char& c : s) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
}

class StringNormalizerKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    if (x == nullptr) return Unsupported("input 'X' is missing");
    if (x->dtype != DType::kString) return RefusedAsReference("X must be string, got " + DTypeString(x->dtype));
    const Shape& s = x->shape;
    if (s.size() != 1 && !(s.size() == 2 && (s[0] == 1 || s[0] < 0))) {
      return RefusedAsReference("X must be [C] or [1, C], got " + ShapeToString(s));
    }
    std::unique_ptr<StringNormalizerKernel> k(new StringNormalizerKernel());
    const std::string change = init.node.GetString("case_change_action", "NONE");
    if (change == "LOWER") {
      k->change_ = CaseChange::kLower;
    } else if (change == "UPPER") {
      k->change_ = CaseChange::kUpper;
    } else if (change != "NONE") {
      return RefusedAsReference("case_change_action '" + change + "' must be LOWER, UPPER or NONE");
    }
    k->case_sensitive_ = init.node.GetInt("is_case_sensitive", 0) != 0;
    if (const auto it = init.node.attributes.find("stopwords"); it != init.node.attributes.end()) {
      for (std::string word : it->second.strings) {
        if (!k->case_sensitive_) AsciiCase(word, false);
        k->stopwords_.insert(std::move(word));
      }
    }
    return std::unique_ptr<IKernel>(std::move(k));
  }
  bool AllocatesOutputs() const override { return true; }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (x.dtype() != DType::kString) return ctx.Error("X must be string, got " + DTypeString(x.dtype()));
    if (x.rank() != 1 && !(x.rank() == 2 && x.dim(0) == 1)) {
      return ctx.Error("X must be [C] or [1, C], got " + ShapeToString(x.shape()));
    }
    const std::string* words = x.data<std::string>();
    std::vector<std::string> kept;
    kept.reserve(static_cast<size_t>(x.numel()));
    std::string lowered;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const std::string& word = words[i];
      if (!stopwords_.empty()) {
        if (case_sensitive_) {
          if (stopwords_.contains(word)) continue;
        } else {
          lowered = word;
          AsciiCase(lowered, false);
          if (stopwords_.contains(lowered)) continue;
        }
      }
      std::string& out = kept.emplace_back(word);
      if (change_ != CaseChange::kNone) AsciiCase(out, change_ == CaseChange::kUpper);
    }
    if (kept.empty()) kept.emplace_back();  // no word left: one empty string
    const auto count = static_cast<int64_t>(kept.size());
    const Shape shape = x.rank() == 1 ? Shape{count} : Shape{1, count};
    Tensor* y = ctx.output(0);
    if (y == nullptr) return Status();
    if (!y->defined()) {
      *y = Tensor(DType::kString, shape);
    } else if (y->dtype() != DType::kString || y->shape() != shape) {
      return Internal(ctx.node().Describe() + ": output was sized " + DescribeTensor(*y) + " but the kernel made " +
                      std::to_string(count) + " strings of shape " + ShapeToString(shape));
    }
    std::move(kept.begin(), kept.end(), y->data<std::string>());
    return Status();
  }

 private:
  StringNormalizerKernel() = default;
  CaseChange change_ = CaseChange::kNone;
  bool case_sensitive_ = false;
  std::unordered_set<std::string> stopwords_;  // in lower case unless case sensitive
};

}  // namespace

void AddTextKernels(KernelTable& t) {
  constexpr auto kCpu = DeviceKind::kCpu;
  constexpr auto kFp32 = Precision::kFp32;
  t.Add("StringNormalizer", "", kCpu, kFp32, {"cpu:string-normalizer", StringNormalizerKernel::Create});
  t.Add("TfIdfVectorizer", "", kCpu, kFp32, {"cpu:tfidf", CreateTfIdf});
}

}  // namespace chipfit::cpu
