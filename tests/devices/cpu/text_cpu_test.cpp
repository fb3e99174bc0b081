// The CPU text kernels (text_cpu.cpp) against the reference: StringNormalizer's strings equal
// (every case action, case sensitive or not, stopwords removing some or every word, [C] and
// [1, C], empty input, output sized by the kernel or by the executor), TfIdfVectorizer's rows byte
// for byte for TF and within 1e-6 for IDF and TFIDF (int32, int64 and string input, [C] and
// [N, C], n-gram lengths 1..3 with skips 0..2, weights or none, shared output coordinates, a large
// input for the threaded path), and the refusals, with their reasons, of what the reference rejects.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "devices/cpu/ops/kernel_groups.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"

namespace chipfit::testing {
namespace {

// The group's table alone: the kernels under test whatever the rest of the CPU table holds.
const KernelTable& TextTable() {
  static const KernelTable table = [] {
    KernelTable t;
    cpu::AddTextKernels(t);
    return t;
  }();
  return table;
}

KernelFactory Factory(const std::string& op) {
  const auto& impls = TextTable().Find(op, "", DeviceKind::kCpu, Precision::kFp32);
  return impls.empty() ? nullptr : impls.front().create;
}

// Runs the kernel on owned tensors (string tensors cannot live in RunCpuKernel's guarded buffers,
// which copy and hold only fixed-size elements). `presized`: outputs allocated with the reference's
// shapes, as on a step whose shapes are known at compile time; otherwise empty Tensors the kernel
// must size (IKernel::AllocatesOutputs). `unknown_dims`: Init sees every dim as -1.
Result<std::vector<Tensor>> RunOwned(const KernelCase& c, const std::vector<Tensor>& ref, bool presized,
                                     bool unknown_dims = false) {
  const KernelFactory factory = Factory(c.node.op_type);
  if (factory == nullptr) return Internal("no kernel for " + c.node.op_type);
  std::vector<ValueInfo> infos(c.inputs.size());
  std::vector<const ValueInfo*> ptrs;
  std::vector<const Tensor*> in_ptrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Shape shape = unknown_dims ? Shape(c.inputs[i].shape().size(), -1) : c.inputs[i].shape();
    infos[i] = {c.inputs[i].dtype(), shape, nullptr};
    ptrs.push_back(&infos[i]);
    in_ptrs.push_back(&c.inputs[i]);
  }
  ASSIGN_OR_RETURN(auto kernel, factory(KernelInit{c.node, ptrs, c.opset}));
  std::vector<Tensor> outs(c.node.outputs.size());
  if (presized || !kernel->AllocatesOutputs()) {
    for (size_t k = 0; k < outs.size() && k < ref.size(); ++k) outs[k] = Tensor(ref[k].dtype(), ref[k].shape());
  }
  std::vector<Tensor*> out_ptrs;
  for (Tensor& t : outs) out_ptrs.push_back(&t);
  KernelContext ctx(c.node, c.opset, in_ptrs, out_ptrs);
  RETURN_IF_ERROR(kernel->Run(ctx));
  return outs;
}

bool SameFloat(float a, float b, bool exact) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (exact) return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
  return std::fabs(a - b) <= 1e-6f * std::max(1.0f, std::fabs(b));
}

// One output against the reference's: strings equal, floats byte for byte (`exact`) or within 1e-6.
void ExpectSameTensor(const Tensor& out, const Tensor& ref, bool exact) {
  ASSERT_EQ(out.dtype(), ref.dtype());
  ASSERT_EQ(out.shape(), ref.shape());
  if (ref.dtype() == DType::kString) {
    EXPECT_EQ(Texts(out), Texts(ref));
    return;
  }
  ASSERT_EQ(ref.dtype(), DType::kF32);
  int64_t differ = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const float a = out.data<float>()[i], b = ref.data<float>()[i];
    if (!SameFloat(a, b, exact) && differ++ < 5) ADD_FAILURE() << "at flat index " << i << ": " << a << " vs " << b;
  }
  EXPECT_EQ(differ, 0);
}

// The kernel's outputs equal the reference's, sized by the executor and (StringNormalizer) by the
// kernel itself; numeric inputs also through RunCpuKernel's guarded buffers.
void ExpectSameAsReference(const KernelCase& c, bool exact = true) {
  ASSERT_NE(Factory(c.node.op_type), nullptr) << c.node.op_type;
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  for (const bool presized : {true, false}) {
    SCOPED_TRACE(presized ? "outputs sized by the executor" : "outputs sized by the kernel");
    auto out = RunOwned(c, ref, presized);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->size(), 1u);
    ExpectSameTensor((*out)[0], ref[0], exact);
  }
  if (c.inputs[0].dtype() != DType::kString) {
    SCOPED_TRACE("guarded buffers");
    auto out = RunCpuKernel(Factory(c.node.op_type), c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectSameTensor((*out)[0], ref[0], exact);
  }
}

void ExpectRefused(const KernelCase& c, const std::string& reason) {
  const KernelFactory factory = Factory(c.node.op_type);
  ASSERT_NE(factory, nullptr);
  std::vector<ValueInfo> infos(c.inputs.size());
  std::vector<const ValueInfo*> ptrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    infos[i] = {c.inputs[i].dtype(), c.inputs[i].shape(), nullptr};
    ptrs.push_back(&infos[i]);
  }
  auto kernel = factory(KernelInit{c.node, ptrs, c.opset});
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(kernel.status().message().find(reason), std::string::npos) << kernel.status().message();
  // What is refused, the reference rejects.
  EXPECT_FALSE(RunNodeOnReference(c.node, c.opset, c.inputs).ok()) << reason;
}

// ---------------------------------------------------------------------------------------------
// StringNormalizer

KernelCase Normalizer(Tensor x, const std::string& action, int64_t case_sensitive,
                      const std::vector<std::string>& stopwords, const std::string& locale = "") {
  Attrs attrs = {{"case_change_action", StringAttr(action)}, {"is_case_sensitive", IntAttr(case_sensitive)}};
  if (!stopwords.empty()) attrs["stopwords"] = StringsAttr(stopwords);
  if (!locale.empty()) attrs["locale"] = StringAttr(locale);
  return KernelCase{.node = MakeNode("StringNormalizer", 1, 1, std::move(attrs)), .opset = 10, .inputs = {x}};
}

const std::vector<std::string> kWords = {"Monday",       "tuesday", "wednesday", "MONDAY",
                                         "\xc3\x84rger", "x1Y-z",   "",          "monday"};

TEST(TextCpuTest, NormalizerEveryCaseActionAndSensitivity) {
  const auto n = static_cast<int64_t>(kWords.size());
  for (const std::string action : {"NONE", "LOWER", "UPPER"}) {
    for (const int64_t sensitive : {0, 1}) {
      for (const Shape& shape : {Shape{n}, Shape{1, n}}) {
        for (const auto& stopwords : {std::vector<std::string>{}, std::vector<std::string>{"monday", "Tuesday"},
                                      std::vector<std::string>{"MONDAY", "", "\xc3\xa4rger"}}) {
          SCOPED_TRACE(action + " sensitive " + std::to_string(sensitive) + " " + ShapeToString(shape) + " with " +
                       std::to_string(stopwords.size()) + " stopwords");
          ExpectSameAsReference(Normalizer(Strings(shape, kWords), action, sensitive, stopwords));
        }
      }
    }
  }
}

TEST(TextCpuTest, NormalizerKnownValues) {
  const Tensor x = Strings({4}, {"Monday", "tuesday", "MONDAY", "Gr\xc3\xbc\xc3\x9f"});
  const std::vector<Tensor> none;
  auto lower = RunOwned(Normalizer(x, "LOWER", 0, {"monday"}), none, false);
  ASSERT_TRUE(lower.ok()) << lower.status().ToString();
  EXPECT_EQ((*lower)[0].shape(), Shape({2}));
  EXPECT_EQ(Texts((*lower)[0]), std::vector<std::string>({"tuesday", "gr\xc3\xbc\xc3\x9f"}));
  auto upper = RunOwned(Normalizer(x, "UPPER", 1, {"monday", "MONDAY"}), none, false);
  ASSERT_TRUE(upper.ok()) << upper.status().ToString();
  EXPECT_EQ(Texts((*upper)[0]), std::vector<std::string>({"MONDAY", "TUESDAY", "GR\xc3\xbc\xc3\x9f"}));
  auto kept = RunOwned(Normalizer(x, "NONE", 1, {"monday"}), none, false);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(Texts((*kept)[0]), std::vector<std::string>({"Monday", "tuesday", "MONDAY", "Gr\xc3\xbc\xc3\x9f"}));
}

TEST(TextCpuTest, NormalizerStopwordsRemovingEverything) {
  const std::vector<std::string> words = {"Monday", "monday", "MONDAY"};
  for (const Shape& shape : {Shape{3}, Shape{1, 3}}) {
    for (const std::string action : {"NONE", "LOWER", "UPPER"}) {
      const KernelCase c = Normalizer(Strings(shape, words), action, 0, {"monday"});
      ExpectSameAsReference(c);
      auto out = RunOwned(c, {}, false);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ((*out)[0].shape(), shape.size() == 1 ? Shape({1}) : Shape({1, 1}));
      EXPECT_EQ(Texts((*out)[0]), std::vector<std::string>({""}));
    }
  }
}

TEST(TextCpuTest, NormalizerEmptyInput) {
  for (const Shape& shape : {Shape{0}, Shape{1, 0}}) {
    for (const auto& stopwords : {std::vector<std::string>{}, std::vector<std::string>{"a"}}) {
      const KernelCase c = Normalizer(Strings(shape, {}), "LOWER", 0, stopwords);
      ExpectSameAsReference(c);
      auto out = RunOwned(c, {}, false);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(Texts((*out)[0]), std::vector<std::string>({""}));
    }
  }
}

TEST(TextCpuTest, NormalizerIgnoresLocaleAsTheReference) {
  for (const std::string locale : {"en_US", "de_DE.UTF-8", "tr_TR"}) {
    ExpectSameAsReference(
        Normalizer(Strings({3}, {"I\xc3\x84", "gro\xc3\x9f", "Istanbul"}), "UPPER", 0, {"istanbul"}, locale));
  }
}

TEST(TextCpuTest, NormalizerShapesKnownOnlyAtRunTime) {
  const KernelCase c = Normalizer(Strings({1, 4}, {"a", "B", "c", "b"}), "UPPER", 0, {"b"});
  const auto ref = RunReference(c);
  auto out = RunOwned(c, ref, false, /*unknown_dims=*/true);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectSameTensor((*out)[0], ref[0], true);
  // [N, C] with N unknown at Init and 2 when it runs: the reference's shape error.
  const KernelCase two_rows = Normalizer(Strings({2, 2}, {"a", "b", "c", "d"}), "NONE", 0, {});
  auto bad = RunOwned(two_rows, {}, false, /*unknown_dims=*/true);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("X must be [C] or [1, C], got 2x2"), std::string::npos)
      << bad.status().message();
}

TEST(TextCpuTest, NormalizerRefusals) {
  ExpectRefused(Normalizer(F32({2}, {1, 2}), "NONE", 0, {}), "X must be string, got f32");
  ExpectRefused(Normalizer(Strings({2, 2}, {"a", "b", "c", "d"}), "NONE", 0, {}), "X must be [C] or [1, C], got 2x2");
  ExpectRefused(Normalizer(Strings({2}, {"a", "b"}), "TITLE", 0, {}),
                "case_change_action 'TITLE' must be LOWER, UPPER or NONE");
}

// ---------------------------------------------------------------------------------------------
// TfIdfVectorizer

struct Pool {
  std::vector<int64_t> items;   // 1-grams, then 2-grams, then 3-grams
  std::vector<int64_t> counts;  // ngram_counts
  int64_t grams = 0;
};

// Distinct seeded n-grams over tokens 0..alphabet-1: `per_level[n - 1]` of length n.
Pool MakePool(const std::vector<int64_t>& per_level, int64_t alphabet, uint64_t seed) {
  SplitMix64 rng(seed);
  Pool pool;
  for (size_t level = 0; level < per_level.size(); ++level) {
    pool.counts.push_back(static_cast<int64_t>(pool.items.size()));
    std::set<std::vector<int64_t>> seen;
    const auto n = static_cast<int64_t>(level) + 1;
    int64_t possible = 1;
    for (int64_t k = 0; k < n; ++k) possible *= alphabet;
    EXPECT_LE(per_level[level], possible) << "more distinct " << n << "-grams asked for than there are";
    while (static_cast<int64_t>(seen.size()) < std::min(per_level[level], possible)) {
      std::vector<int64_t> gram;
      for (int64_t k = 0; k < n; ++k)
        gram.push_back(static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(alphabet)));
      if (seen.insert(gram).second) pool.items.insert(pool.items.end(), gram.begin(), gram.end());
    }
    pool.grams += static_cast<int64_t>(seen.size());
  }
  return pool;
}

std::string Word(int64_t token) { return "w" + std::to_string(token); }

// Seeded tokens 0..alphabet-1 as `dtype` (int32, int64, or the strings Word(token)).
Tensor Tokens(DType dtype, const Shape& shape, int64_t alphabet, uint64_t seed) {
  SplitMix64 rng(seed);
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto v = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(alphabet));
    if (dtype == DType::kString) {
      t.data<std::string>()[i] = Word(v);
    } else if (dtype == DType::kI32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
    } else {
      t.data<int64_t>()[i] = v;
    }
  }
  return t;
}

struct TfIdfAttrs {
  std::string mode = "TF";
  int64_t min_length = 1, max_length = 1, max_skip = 0;
  std::vector<float> weights{};    // none: not set
  std::vector<int64_t> indexes{};  // none: 0, 1, 2 … per pool n-gram
  bool strings = false;            // pool_strings (Word of each item) rather than pool_int64s
};

KernelCase TfIdf(Tensor x, const Pool& pool, const TfIdfAttrs& a) {
  Attrs attrs = {{"mode", StringAttr(a.mode)},
                 {"min_gram_length", IntAttr(a.min_length)},
                 {"max_gram_length", IntAttr(a.max_length)},
                 {"max_skip_count", IntAttr(a.max_skip)},
                 {"ngram_counts", IntsAttr(pool.counts)}};
  std::vector<int64_t> indexes = a.indexes;
  if (indexes.empty()) {
    for (int64_t i = 0; i < pool.grams; ++i) indexes.push_back(i);
  }
  attrs["ngram_indexes"] = IntsAttr(indexes);
  if (!a.weights.empty()) attrs["weights"] = FloatsAttr(a.weights);
  if (a.strings) {
    std::vector<std::string> words;
    for (int64_t v : pool.items) words.push_back(Word(v));
    attrs["pool_strings"] = StringsAttr(words);
  } else {
    attrs["pool_int64s"] = IntsAttr(pool.items);
  }
  return KernelCase{.node = MakeNode("TfIdfVectorizer", 1, 1, std::move(attrs)), .opset = 9, .inputs = {std::move(x)}};
}

// Seeded weights in [0.1, 3), one per pool n-gram.
std::vector<float> Weights(int64_t grams, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> w;
  for (int64_t i = 0; i < grams; ++i) w.push_back(rng.Uniform(0.1, 3.0));
  return w;
}

// A permutation of 0..grams-1 spread over twice as many output coordinates.
std::vector<int64_t> SpreadIndexes(int64_t grams, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < grams; ++i) idx.push_back(2 * i + 1);
  for (int64_t i = grams - 1; i > 0; --i) {
    std::swap(idx[static_cast<size_t>(i)], idx[rng.Next() % static_cast<uint64_t>(i + 1)]);
  }
  return idx;
}

TEST(TextCpuTest, TfIdfKnownValues) {
  // The ONNX example (test_tf_only_bigrams_skip0, test_tf_batch_uniandbigrams_skip5).
  const Pool pool = {{2, 3, 5, 4, 5, 6, 7, 8, 6, 7}, {0, 4}, 7};
  const Tensor x = I32({12}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  auto bigrams = RunCpuKernel(Factory("TfIdfVectorizer"), TfIdf(x, pool, {.min_length = 2, .max_length = 2}));
  ASSERT_TRUE(bigrams.ok()) << bigrams.status().ToString();
  EXPECT_EQ(Values<float>((*bigrams)[0]), std::vector<float>({0, 0, 0, 0, 1, 1, 1}));
  const Tensor batch = I32({2, 6}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  const KernelCase skip5 = TfIdf(batch, pool, {.min_length = 1, .max_length = 2, .max_skip = 5});
  auto both = RunCpuKernel(Factory("TfIdfVectorizer"), skip5);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ((*both)[0].shape(), Shape({2, 7}));
  EXPECT_EQ(Values<float>((*both)[0]), std::vector<float>({0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1}));
  ExpectSameAsReference(skip5);
}

TEST(TextCpuTest, TfIdfEveryDTypeModeLengthAndSkip) {
  const Pool pool = MakePool({4, 6, 5}, 5, 11);
  const std::vector<float> weights = Weights(pool.grams, 12);
  const std::vector<int64_t> spread = SpreadIndexes(pool.grams, 13);
  int cases = 0;
  for (const DType dtype : {DType::kI32, DType::kI64, DType::kString}) {
    for (const Shape& shape : {Shape{17}, Shape{5, 9}}) {
      const Tensor x = Tokens(dtype, shape, 5, 21 + static_cast<uint64_t>(cases));
      for (const std::string mode : {"TF", "IDF", "TFIDF"}) {
        for (int64_t lo = 1; lo <= 3; ++lo) {
          for (int64_t hi = lo; hi <= 3; ++hi) {
            for (int64_t skip = 0; skip <= 2; ++skip) {
              for (const bool weighted : {false, true}) {
                SCOPED_TRACE(std::string(DTypeName(dtype)) + "[" + ShapeToString(shape) + "] " + mode + " " +
                             std::to_string(lo) + ".." + std::to_string(hi) + " skip " + std::to_string(skip) +
                             (weighted ? " weighted" : ""));
                TfIdfAttrs a{.mode = mode, .min_length = lo, .max_length = hi, .max_skip = skip};
                a.strings = dtype == DType::kString;
                if (weighted) {
                  a.weights = weights;
                  a.indexes = spread;
                }
                ExpectSameAsReference(TfIdf(x, pool, a), mode == "TF");
                ++cases;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 3 * 2 * 3 * 6 * 3 * 2);
}

TEST(TextCpuTest, TfIdfLongerGramsThanThePoolHolds) {
  // max_gram_length past the pool's longest n-grams, min_gram_length past them (nothing counts),
  // skips longer than the row.
  const Pool pool = MakePool({3, 4}, 4, 31);
  const Tensor x = Tokens(DType::kI64, {3, 8}, 4, 32);
  ExpectSameAsReference(TfIdf(x, pool, {.mode = "TF", .min_length = 1, .max_length = 5, .max_skip = 3}));
  ExpectSameAsReference(TfIdf(x, pool, {.mode = "TF", .min_length = 3, .max_length = 4, .max_skip = 1}));
  ExpectSameAsReference(TfIdf(x, pool, {.mode = "TF", .min_length = 2, .max_length = 2, .max_skip = 40}));
}

TEST(TextCpuTest, TfIdfSharedCoordinatesAndSpecialWeights) {
  const Pool pool = MakePool({4, 5, 3}, 4, 41);
  const Tensor x = Tokens(DType::kI64, {4, 12}, 4, 42);
  // Several n-grams on one output coordinate: their values add up in pool order.
  std::vector<int64_t> shared;
  for (int64_t i = 0; i < pool.grams; ++i) shared.push_back(i % 5);
  std::vector<float> weights = Weights(pool.grams, 43);
  for (const std::string mode : {"TF", "IDF", "TFIDF"}) {
    ExpectSameAsReference(
        TfIdf(x, pool,
              {.mode = mode, .min_length = 1, .max_length = 3, .max_skip = 2, .weights = weights, .indexes = shared}),
        mode == "TF");
  }
  // Infinite, NaN and -0 weights: n-grams not found give NaN or +0 as the reference's sums do.
  weights[1] = std::numeric_limits<float>::infinity();
  weights[5] = std::numeric_limits<float>::quiet_NaN();
  weights[7] = -0.0f;
  for (const std::string mode : {"IDF", "TFIDF"}) {
    for (const bool spread : {false, true}) {
      TfIdfAttrs a{.mode = mode, .min_length = 1, .max_length = 3, .max_skip = 1, .weights = weights};
      if (spread) a.indexes = SpreadIndexes(pool.grams, 44);
      const KernelCase c = TfIdf(x, pool, a);
      ExpectSameAsReference(c, true);
    }
  }
}

TEST(TextCpuTest, TfIdfEmptyRowsAndBatches) {
  const Pool pool = MakePool({3, 3}, 4, 51);
  for (const Shape& shape : {Shape{0}, Shape{3, 0}, Shape{0, 5}}) {
    SCOPED_TRACE(ShapeToString(shape));
    ExpectSameAsReference(
        TfIdf(Tokens(DType::kI32, shape, 4, 52), pool,
              {.mode = "TFIDF", .min_length = 1, .max_length = 2, .max_skip = 1, .weights = Weights(pool.grams, 53)}),
        false);
  }
}

TEST(TextCpuTest, TfIdfLargeBatchInParallel) {
  const Pool pool = MakePool({10, 100, 80}, 12, 61);
  const std::vector<float> weights = Weights(pool.grams, 62);
  const std::vector<int64_t> spread = SpreadIndexes(pool.grams, 63);
  const KernelCase ints =
      TfIdf(Tokens(DType::kI64, {384, 96}, 12, 64), pool,
            {.mode = "TFIDF", .min_length = 1, .max_length = 3, .max_skip = 2, .weights = weights, .indexes = spread});
  ExpectSameAsReference(ints, false);
  ExpectSameAsReference(TfIdf(Tokens(DType::kI32, {384, 96}, 12, 65), pool,
                              {.mode = "TF", .min_length = 2, .max_length = 3, .max_skip = 2}));
  ExpectSameAsReference(
      TfIdf(Tokens(DType::kString, {128, 64}, 12, 66), pool,
            {.mode = "IDF", .min_length = 1, .max_length = 3, .max_skip = 1, .weights = weights, .strings = true}),
      false);
}

TEST(TextCpuTest, TfIdfShapesKnownOnlyAtRunTime) {
  const Pool pool = MakePool({3, 3}, 4, 71);
  const KernelCase c = TfIdf(Tokens(DType::kI64, {6, 10}, 4, 72), pool, {.min_length = 1, .max_length = 2});
  const auto ref = RunReference(c);
  auto out = RunOwned(c, ref, true, /*unknown_dims=*/true);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectSameTensor((*out)[0], ref[0], true);
}

TEST(TextCpuTest, TfIdfRefusals) {
  const Pool pool = {{1, 2, 3, 1, 2, 2, 3}, {0, 3}, 5};
  const Tensor x = I64({4}, {1, 2, 3, 1});
  const TfIdfAttrs base{.mode = "TF", .min_length = 1, .max_length = 2};
  auto with = [&](const std::string& attr, Attribute value) {
    KernelCase c = TfIdf(x, pool, base);
    c.node.attributes[attr] = std::move(value);
    return c;
  };
  auto without = [&](const std::string& attr) {
    KernelCase c = TfIdf(x, pool, base);
    c.node.attributes.erase(attr);
    return c;
  };
  ExpectRefused(with("pool_strings", StringsAttr({"a"})), "set pool_int64s or pool_strings, not both");
  ExpectRefused(without("pool_int64s"), "needs the n-gram pool pool_int64s or pool_strings");
  ExpectRefused(TfIdf(Strings({2}, {"1", "2"}), pool, base),
                "X must be int32 or int64 to match pool_int64s, got string");
  ExpectRefused(TfIdf(F32({2}, {1, 2}), pool, base), "X must be int32 or int64 to match pool_int64s, got f32");
  ExpectRefused(TfIdf(I64({2}, {1, 2}), pool, {.strings = true}), "X must be string to match pool_strings, got i64");
  ExpectRefused(TfIdf(I64({1, 2, 2}, {1, 2, 3, 4}), pool, base), "X must be [C] or [N, C], got 1x2x2");
  ExpectRefused(without("max_skip_count"), "attribute max_skip_count is required");
  ExpectRefused(with("mode", StringAttr("BM25")), "mode 'BM25' must be TF, IDF or TFIDF");
  ExpectRefused(with("min_gram_length", IntAttr(0)), "n-gram lengths 0..2 must satisfy");
  ExpectRefused(with("min_gram_length", IntAttr(3)), "n-gram lengths 3..2 must satisfy");
  ExpectRefused(with("max_skip_count", IntAttr(-1)), "max_skip_count -1 must be non-negative");
  ExpectRefused(with("ngram_counts", IntsAttr({1, 3})), "must start at 0");
  ExpectRefused(with("ngram_counts", IntsAttr({0, 9})), "must be non-decreasing and within pool_int64s (7 items)");
  ExpectRefused(with("ngram_counts", IntsAttr({0, 2})), "the 5 pool items of 2-grams do not make whole 2-grams");
  ExpectRefused(with("pool_int64s", IntsAttr({1, 2, 3, 1, 2, 1, 2})), "pool_int64s holds the 2-gram [1, 2] twice");
  ExpectRefused(with("ngram_indexes", IntsAttr({0, 1, 2, 3})), "ngram_indexes has 4 entries but the pool holds 5");
  ExpectRefused(with("ngram_indexes", IntsAttr({0, 1, -2, 3, 4})), "must be non-negative output coordinates");
  ExpectRefused(with("weights", FloatsAttr({1, 2})), "weights has 2 entries but ngram_indexes has 5");
  KernelCase dup_strings = TfIdf(Strings({2}, {"a", "b"}), pool, {.strings = true});
  dup_strings.node.attributes["pool_strings"] = StringsAttr({"a", "b", "a"});
  dup_strings.node.attributes["ngram_counts"] = IntsAttr({0});
  dup_strings.node.attributes["ngram_indexes"] = IntsAttr({0, 1, 2});
  ExpectRefused(dup_strings, "pool_strings holds the 1-gram [\"a\"] twice");
}

}  // namespace
}  // namespace chipfit::testing
