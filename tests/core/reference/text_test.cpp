// Reference text ops: TfIdfVectorizer against hand-counted n-grams (skips, modes, weights, batches, integer
// and string pools, errors) and StringNormalizer (stopwords, case changes, the empty result, shapes).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/reference/reference_kernels.h"
#include "core/runtime/kernel.h"
#include "tests/core/reference/ref_test_util.h"

namespace chipfit::testing {
namespace {

// A TfIdfVectorizer over the integer pool `pool` split by `counts`, output coordinates 0..k-1 unless
// `attrs` overrides them.
Node Vectorizer(const std::string& mode, int64_t min_length, int64_t max_length, int64_t max_skip,
                std::vector<int64_t> counts, std::vector<int64_t> pool, std::vector<int64_t> indexes,
                Attrs extra = {}) {
  Attrs attrs = {{"mode", StringAttr(mode)},
                 {"min_gram_length", IntAttr(min_length)},
                 {"max_gram_length", IntAttr(max_length)},
                 {"max_skip_count", IntAttr(max_skip)},
                 {"ngram_counts", IntsAttr(std::move(counts))},
                 {"ngram_indexes", IntsAttr(std::move(indexes))},
                 {"pool_int64s", IntsAttr(std::move(pool))}};
  for (auto& [name, value] : extra) attrs[name] = value;
  return MakeNode("TfIdfVectorizer", 1, 1, std::move(attrs));
}

void ExpectShape(const Tensor& t, const Shape& shape) { EXPECT_EQ(t.shape(), shape) << DescribeTensor(t); }

// The spec's sequence. Bigrams of the pool, by the skip that finds them: (94, 17) skip 0,
// (17, 12) skip 1, (94, 12) and (17, 28) skip 2, (94, 28) skip 3.
const Tensor kSequence = I64({5}, {94, 17, 36, 12, 28});
const std::vector<int64_t> kBigrams = {94, 17, 17, 12, 94, 12, 17, 28, 94, 28};

TEST(TfIdfVectorizerTest, SkipZeroFindsOnlyAdjacentPairs) {
  const Tensor y = RunOne(Vectorizer("TF", 2, 2, 0, {0, 0}, kBigrams, {0, 1, 2, 3, 4}), {kSequence});
  ExpectShape(y, {5});
  ExpectNear(y, {1, 0, 0, 0, 0});
}

TEST(TfIdfVectorizerTest, MaxSkipCountAdmitsEverySkipUpToIt) {
  const Tensor y = RunOne(Vectorizer("TF", 2, 2, 2, {0, 0}, kBigrams, {0, 1, 2, 3, 4}), {kSequence});
  ExpectNear(y, {1, 1, 1, 1, 0});
}

// [1, 1, 1, 1]: the 1-gram occurs 4 times whatever the skip; the 2-gram 3 times with skip 0 and
// twice with skip 1.
TEST(TfIdfVectorizerTest, UnigramsCountOnceButBigramsOncePerSkip) {
  const Tensor x = I64({4}, {1, 1, 1, 1});
  ExpectNear(RunOne(Vectorizer("TF", 1, 2, 1, {0, 1}, {1, 1, 1}, {0, 1}), {x}), {4, 5});
  // min_gram_length 2 leaves the 1-grams at zero.
  ExpectNear(RunOne(Vectorizer("TF", 2, 2, 1, {0, 1}, {1, 1, 1}, {0, 1}), {x}), {0, 5});
}

// Pool 1-grams 1, 2, 3, 4 occur 2, 2, 1, 0 times and land at coordinates 3, 2, 1, 0; the weights
// belong to the pool's n-grams, so they travel with them.
const Tensor kCounts = I64({5}, {1, 2, 1, 2, 3});
const Attrs kWeights = {{"weights", FloatsAttr({0.5f, 2, 10, 7})}};

TEST(TfIdfVectorizerTest, ModeTfIgnoresWeights) {
  ExpectNear(RunOne(Vectorizer("TF", 1, 1, 0, {0}, {1, 2, 3, 4}, {3, 2, 1, 0}, kWeights), {kCounts}), {0, 1, 2, 2});
}

TEST(TfIdfVectorizerTest, ModeIdfGivesTheWeightOfEachPresentNgram) {
  ExpectNear(RunOne(Vectorizer("IDF", 1, 1, 0, {0}, {1, 2, 3, 4}, {3, 2, 1, 0}, kWeights), {kCounts}),
             {0, 10, 2, 0.5f});
  // Without weights, IDF marks presence.
  ExpectNear(RunOne(Vectorizer("IDF", 1, 1, 0, {0}, {1, 2, 3, 4}, {3, 2, 1, 0}), {kCounts}), {0, 1, 1, 1});
}

TEST(TfIdfVectorizerTest, ModeTfIdfScalesCountsByWeights) {
  ExpectNear(RunOne(Vectorizer("TFIDF", 1, 1, 0, {0}, {1, 2, 3, 4}, {3, 2, 1, 0}, kWeights), {kCounts}), {0, 10, 4, 1});
}

TEST(TfIdfVectorizerTest, BatchCountsEachRowAloneAndLeavesUnusedCoordinatesZero) {
  // (5, 6) → coordinate 1, (6, 5) → 3; the pair (7, 6) straddles the rows and must not count.
  const Node node = Vectorizer("TF", 2, 2, 0, {0, 0}, {5, 6, 6, 5}, {1, 3});
  const Tensor y = RunOne(node, {I32({2, 3}, {5, 6, 7, 6, 5, 6})});
  ExpectShape(y, {2, 4});
  ExpectNear(y, {0, 1, 0, 0, 0, 1, 0, 1});
}

TEST(TfIdfVectorizerTest, EmptyRowsGiveZeros) {
  const Tensor y = RunOne(Vectorizer("TF", 1, 1, 0, {0}, {1, 2}, {0, 1}), {I64({2, 0}, {})});
  ExpectShape(y, {2, 2});
  ExpectNear(y, {0, 0, 0, 0});
}

TEST(TfIdfVectorizerTest, ShapeFunctionKeepsAnUnknownBatch) {
  const Node node = Vectorizer("TF", 1, 1, 0, {0}, {1, 2}, {4, 0});
  ValueInfo x;
  x.dtype = DType::kI32;
  x.shape = {-1, 7};
  InferContext ctx(node, 9, {&x});
  ASSERT_TRUE(FindReferenceOp("TfIdfVectorizer", "")->infer(ctx).ok());
  EXPECT_EQ(ctx.outputs()[0].dtype, DType::kF32);
  EXPECT_EQ(ctx.outputs()[0].shape, (Shape{-1, 5}));
}

// The word for an integer item, so that a string pool and input mirror an integer one.
std::string Word(int64_t item) { return "w" + std::to_string(item); }

std::vector<std::string> Words(const std::vector<int64_t>& items) {
  std::vector<std::string> words;
  for (int64_t item : items) words.push_back(Word(item));
  return words;
}

// The same node over words: pool_strings in place of pool_int64s.
Node WithStringPool(Node node) {
  node.attributes["pool_strings"] = StringsAttr(Words(node.attributes.at("pool_int64s").ints));
  node.attributes.erase("pool_int64s");
  return node;
}

TEST(TfIdfVectorizerTest, StringPoolCountsAsTheIntegerPoolDoes) {
  struct Case {
    Node node;
    Shape shape;
    std::vector<int64_t> items;
  };
  const std::vector<Case> cases = {
      {Vectorizer("TF", 2, 2, 2, {0, 0}, kBigrams, {0, 1, 2, 3, 4}), {5}, {94, 17, 36, 12, 28}},
      {Vectorizer("TF", 1, 2, 1, {0, 1}, {1, 1, 1}, {0, 1}), {4}, {1, 1, 1, 1}},
      {Vectorizer("TFIDF", 1, 1, 0, {0}, {1, 2, 3, 4}, {3, 2, 1, 0}, kWeights), {5}, {1, 2, 1, 2, 3}},
      {Vectorizer("IDF", 1, 1, 0, {0}, {1, 2, 3, 4}, {3, 2, 1, 0}, kWeights), {5}, {1, 2, 1, 2, 3}},
      {Vectorizer("TF", 1, 2, 3, {0, 2}, {5, 6, 5, 6, 6, 5}, {0, 1, 2, 3}), {2, 3}, {5, 6, 7, 6, 5, 6}},
  };
  for (const Case& c : cases) {
    const Tensor by_ints = RunOne(c.node, {I64(c.shape, c.items)});
    const Tensor by_words = RunOne(WithStringPool(c.node), {Strings(c.shape, Words(c.items))});
    ASSERT_EQ(by_words.shape(), by_ints.shape()) << c.node.GetString("mode", "");
    ExpectNear(by_words, Values<float>(by_ints));
  }
  // Words are compared whole and case-sensitively.
  const Node node = WithStringPool(Vectorizer("TF", 1, 1, 0, {0}, {1, 2}, {0, 1}));
  ExpectNear(RunOne(node, {Strings({4}, {"w1", "W1", "w1 ", "w2"})}), {1, 1});
}

TEST(TfIdfVectorizerTest, InputTypeMustMatchThePool) {
  const Node ints = Vectorizer("TF", 1, 1, 0, {0}, {1, 2}, {0, 1});
  ExpectError(ints, {Strings({2}, {"w1", "w2"})}, StatusCode::kInvalidArgument, "int32 or int64 to match pool_int64s");
  ExpectError(WithStringPool(ints), {I64({2}, {1, 2})}, StatusCode::kInvalidArgument,
              "X must be string to match pool_strings, got i64");
  Node both = WithStringPool(ints);
  both.attributes["pool_int64s"] = IntsAttr({1, 2});
  ExpectError(both, {I64({2}, {1, 2})}, StatusCode::kInvalidArgument, "set pool_int64s or pool_strings, not both");
  Node neither = ints;
  neither.attributes.erase("pool_int64s");
  ExpectError(neither, {I64({2}, {1, 2})}, StatusCode::kInvalidArgument, "needs the n-gram pool");
  ExpectError(WithStringPool(Vectorizer("TF", 1, 1, 0, {0}, {1, 2, 1}, {0, 1, 2})), {Strings({1}, {"w1"})},
              StatusCode::kInvalidArgument, "pool_strings holds the 1-gram [\"w1\"] twice");
}

TEST(TfIdfVectorizerTest, BadInputsAndAttributesNameTheNode) {
  const std::vector<int64_t> pool = {1, 2, 3, 4};
  const Tensor x = I64({2}, {1, 2});
  ExpectError(Vectorizer("TF", 1, 1, 0, {0}, pool, {0, 1, 2, 3}), {I64({1, 1, 2}, {1, 2})},
              StatusCode::kInvalidArgument, "must be [C] or [N, C]");
  ExpectError(Vectorizer("TF", 1, 1, 0, {0}, pool, {0, 1, 2, 3}), {MakeTensor<float>({2}, {1, 2})},
              StatusCode::kInvalidArgument, "int32 or int64");
  ExpectError(Vectorizer("BM25", 1, 1, 0, {0}, pool, {0, 1, 2, 3}), {x}, StatusCode::kInvalidArgument, "mode 'BM25'");
  ExpectError(Vectorizer("TF", 2, 1, 0, {0}, pool, {0, 1, 2, 3}), {x}, StatusCode::kInvalidArgument,
              "min_gram_length <= max_gram_length");
  ExpectError(Vectorizer("TF", 1, 1, -1, {0}, pool, {0, 1, 2, 3}), {x}, StatusCode::kInvalidArgument,
              "max_skip_count -1");
  // 3 items after the 1-gram cannot be 2-grams.
  ExpectError(Vectorizer("TF", 1, 2, 0, {0, 1}, pool, {0, 1}), {x}, StatusCode::kInvalidArgument,
              "do not make whole 2-grams");
  ExpectError(Vectorizer("TF", 1, 2, 0, {0, 5}, pool, {0, 1}), {x}, StatusCode::kInvalidArgument, "within pool_int64s");
  ExpectError(Vectorizer("TF", 1, 1, 0, {0}, pool, {0, 1, 2}), {x}, StatusCode::kInvalidArgument,
              "ngram_indexes has 3 entries but the pool holds 4");
  ExpectError(Vectorizer("TF", 1, 1, 0, {0}, pool, {0, -1, 2, 3}), {x}, StatusCode::kInvalidArgument, "non-negative");
  ExpectError(Vectorizer("TF", 1, 1, 0, {0}, {1, 2, 1}, {0, 1, 2}), {x}, StatusCode::kInvalidArgument,
              "1-gram [1] twice");
  ExpectError(Vectorizer("TFIDF", 1, 1, 0, {0}, pool, {0, 1, 2, 3}, {{"weights", FloatsAttr({1, 2})}}), {x},
              StatusCode::kInvalidArgument, "weights has 2 entries");
  Node missing = Vectorizer("TF", 1, 1, 0, {0}, pool, {0, 1, 2, 3});
  missing.attributes.erase("max_skip_count");
  ExpectError(missing, {x}, StatusCode::kInvalidArgument, "attribute max_skip_count is required");
}

// ---------------------------------------------------------------------------------------------
// StringNormalizer

Node Normalizer(const std::string& change, int64_t case_sensitive, std::vector<std::string> stopwords) {
  Attrs attrs = {{"case_change_action", StringAttr(change)}, {"is_case_sensitive", IntAttr(case_sensitive)}};
  if (!stopwords.empty()) attrs["stopwords"] = StringsAttr(std::move(stopwords));
  return MakeNode("StringNormalizer", 1, 1, std::move(attrs));
}

const Tensor kDays = Strings({4}, {"monday", "Tuesday", "WEDNESDAY", "Monday"});

TEST(StringNormalizerTest, RemovesStopwordsThenChangesCase) {
  // Case-sensitive: "Monday" is no stopword "monday".
  const Tensor lower = RunOne(Normalizer("LOWER", 1, {"monday"}), {kDays});
  EXPECT_EQ(lower.shape(), (Shape{3}));
  EXPECT_EQ(Texts(lower), (std::vector<std::string>{"tuesday", "wednesday", "monday"}));
  EXPECT_EQ(Texts(RunOne(Normalizer("UPPER", 1, {"monday"}), {kDays})),
            (std::vector<std::string>{"TUESDAY", "WEDNESDAY", "MONDAY"}));
  EXPECT_EQ(Texts(RunOne(Normalizer("NONE", 1, {"monday"}), {kDays})),
            (std::vector<std::string>{"Tuesday", "WEDNESDAY", "Monday"}));
  // Without attributes: no stopwords, no case change.
  EXPECT_EQ(Texts(RunOne(MakeNode("StringNormalizer", 1, 1), {kDays})), Values<std::string>(kDays));
}

TEST(StringNormalizerTest, CaseInsensitiveStopwordsMatchInAnyCase) {
  EXPECT_EQ(Texts(RunOne(Normalizer("NONE", 0, {"MONDAY", "wednesday"}), {kDays})),
            (std::vector<std::string>{"Tuesday"}));
  // [1, C] stays two-dimensional.
  const Tensor y = RunOne(Normalizer("UPPER", 0, {"monday"}), {Strings({1, 4}, {"Monday", "tuesday", "MONDAY", "x"})});
  EXPECT_EQ(y.shape(), (Shape{1, 2}));
  EXPECT_EQ(Texts(y), (std::vector<std::string>{"TUESDAY", "X"}));
}

// ONNX Runtime and the ONNX suite (test_strnormalizer_export_monday_empty_output): one empty string.
TEST(StringNormalizerTest, RemovingEveryWordLeavesOneEmptyString) {
  const Tensor y = RunOne(Normalizer("UPPER", 0, {"monday"}), {Strings({2}, {"monday", "MONDAY"})});
  EXPECT_EQ(y.shape(), (Shape{1}));
  EXPECT_EQ(Texts(y), (std::vector<std::string>{""}));
  const Tensor y2 = RunOne(Normalizer("UPPER", 0, {"monday"}), {Strings({1, 1}, {"Monday"})});
  EXPECT_EQ(y2.shape(), (Shape{1, 1}));
  EXPECT_EQ(Texts(y2), (std::vector<std::string>{""}));
}

TEST(StringNormalizerTest, OnlyAsciiLettersChangeCase) {
  // "Ä" and "é" are two UTF-8 bytes each, outside ASCII: left as they are.
  EXPECT_EQ(Texts(RunOne(Normalizer("LOWER", 0, {"ÄRGER"}), {Strings({2}, {"ÄRGER", "CAFÉ"})})),
            (std::vector<std::string>{"cafÉ"}));
  EXPECT_EQ(Texts(RunOne(Normalizer("UPPER", 0, {}), {Strings({1}, {"café 42"})})),
            (std::vector<std::string>{"CAFé 42"}));
}

TEST(StringNormalizerTest, ShapeFunctionNeedsTheWordsOnlyWhenStopwordsMayRemoveSome) {
  ValueInfo x;
  x.dtype = DType::kString;
  x.shape = {1, 6};
  const Node plain = Normalizer("LOWER", 0, {});
  InferContext known(plain, 10, {&x});
  ASSERT_TRUE(FindReferenceOp("StringNormalizer", "")->infer(known).ok());
  EXPECT_EQ(known.outputs()[0].dtype, DType::kString);
  EXPECT_EQ(known.outputs()[0].shape, (Shape{1, 6}));

  const Node filtering = Normalizer("LOWER", 0, {"monday"});
  InferContext unknown(filtering, 10, {&x});
  EXPECT_EQ(FindReferenceOp("StringNormalizer", "")->infer(unknown).code(), StatusCode::kUnsupported);
  EXPECT_TRUE(unknown.value_missing());

  const Tensor days = Strings({1, 6}, {"Monday", "a", "b", "MONDAY", "c", "d"});
  x.value = &days;
  InferContext with_value(filtering, 10, {&x});
  ASSERT_TRUE(FindReferenceOp("StringNormalizer", "")->infer(with_value).ok());
  EXPECT_EQ(with_value.outputs()[0].shape, (Shape{1, 4}));
}

TEST(StringNormalizerTest, BadInputsAndAttributesNameTheNode) {
  ExpectError(Normalizer("TITLE", 0, {}), {kDays}, StatusCode::kInvalidArgument, "case_change_action 'TITLE'");
  ExpectError(Normalizer("LOWER", 0, {}), {I64({2}, {1, 2})}, StatusCode::kInvalidArgument, "X must be string");
  ExpectError(Normalizer("LOWER", 0, {}), {Strings({2, 2}, {"a", "b", "c", "d"})}, StatusCode::kInvalidArgument,
              "X must be [C] or [1, C]");
}

}  // namespace
}  // namespace chipfit::testing
