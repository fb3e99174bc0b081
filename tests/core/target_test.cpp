// Target strings: the spelling users type in --target and read in reports.
#include "core/runtime/target.h"

#include <gtest/gtest.h>

namespace chipfit {
namespace {

TEST(TargetTest, ParsesAndPrintsCanonicalForms) {
  for (const char* text :
       {"cpu:fp32", "cpu:int8", "cpu:bf16", "opencl:0:fp16", "opencl:2:fp32", "cuda:1:tf32", "ref:fp32"}) {
    auto target = ParseTarget(text);
    ASSERT_TRUE(target.ok()) << text << ": " << target.status().ToString();
    EXPECT_EQ(target->ToString(), text);
  }
}

TEST(TargetTest, IndexDefaultsToZeroAndRefToFp32) {
  auto opencl = ParseTarget("opencl:fp16");
  ASSERT_TRUE(opencl.ok());
  EXPECT_EQ(opencl->ToString(), "opencl:0:fp16");
  EXPECT_EQ(opencl->DeviceId(), "opencl:0");
  auto ref = ParseTarget("ref");
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->ToString(), "ref:fp32");
}

TEST(TargetTest, ErrorsNameTheBadPart) {
  struct Case {
    const char* text;
    const char* expected;
  };
  for (const Case& c : {Case{"tpu:fp32", "unknown device 'tpu'"}, Case{"cpu:fp64", "unknown precision 'fp64'"},
                        Case{"cpu", "missing precision"}, Case{"opencl:x:fp16", "device index 'x'"},
                        Case{"cpu:fp32:extra", "too many"}}) {
    auto target = ParseTarget(c.text);
    ASSERT_FALSE(target.ok()) << c.text;
    EXPECT_EQ(target.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(target.status().message().find(c.expected), std::string::npos) << target.status().message();
  }
}

}  // namespace
}  // namespace chipfit
