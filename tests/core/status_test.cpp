// Status, Result and the RETURN_IF_ERROR / ASSIGN_OR_RETURN macros.
#include "core/status.h"

#include <gtest/gtest.h>

namespace chipfit {
namespace {

Result<int> Half(int x) {
  if (x % 2) return InvalidArgument("value " + std::to_string(x) + " is odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int half, Half(x));
  ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

Status CheckPositive(int x) {
  if (x <= 0) return InvalidArgument("value must be positive");
  return Status::Ok();
}

Status CheckBoth(int a, int b) {
  RETURN_IF_ERROR(CheckPositive(a));
  RETURN_IF_ERROR(CheckPositive(b));
  return Status::Ok();
}

TEST(StatusTest, OkAndErrorsFormat) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "ok");
  Status s = NotFound("model file 'x.onnx' does not exist");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "not found: model file 'x.onnx' does not exist");
}

TEST(StatusTest, AssignOrReturnPropagatesTheFirstError) {
  EXPECT_EQ(*Quarter(12), 3);
  Result<int> odd = Quarter(6);  // 6 → 3, and 3 is odd
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message(), "value 3 is odd");
}

TEST(StatusTest, ReturnIfErrorStopsAtTheFirstFailure) {
  EXPECT_TRUE(CheckBoth(1, 2).ok());
  EXPECT_EQ(CheckBoth(1, -2).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace chipfit
