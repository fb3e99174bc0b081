// Reference TfIdfVectorizer against hand-counted n-grams: skips, modes, weights, batches, errors.
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

TEST(TfIdfVectorizerTest, StringsAreUnsupportedWithTheReason) {
  const std::string reason = "string n-grams need string tensors, which chipfit does not have yet";
  Node node = Vectorizer("TF", 1, 1, 0, {0}, {1, 2}, {0, 1});
  ValueInfo x;
  x.dtype = DType::kString;
  x.shape = {3};
  InferContext input_ctx(node, 9, {&x});
  Status status = FindReferenceOp("TfIdfVectorizer", "")->infer(input_ctx);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find(node.name), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(reason), std::string::npos) << status.message();

  node.attributes.erase("pool_int64s");
  node.attributes["pool_strings"] = StringsAttr({"a", "b"});
  ExpectError(node, {I64({2}, {1, 2})}, StatusCode::kUnsupported, reason);
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

}  // namespace
}  // namespace chipfit::testing
