// oneDNN LSTM, GRU and RNN against the reference: directions, layouts, optional inputs and outputs,
// constant and run-time weights; fp32 within 1e-4 of max|ref|, bf16 by SQNR; the refusals' reasons.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor/metrics.h"
#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"

namespace chipfit::testing {
namespace {

using Attrs = std::map<std::string, Attribute>;

struct RnnSpec {
  std::string op = "LSTM";
  int64_t seq = 7, batch = 3, input = 5, hidden = 6;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, init_h = false, init_c = false, peephole = false;
  std::vector<bool> outputs{true, true, true};  // Y, Y_h, Y_c (LSTM)
  bool constant_weights = true;
  Attrs extra{};
};

Attribute StringsAttrOf(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Kind::kStrings;
  a.strings = std::move(v);
  return a;
}

int64_t Gates(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

std::string Describe(const RnnSpec& s) {
  std::string d = s.op + " " + s.direction + " layout " + std::to_string(s.layout);
  if (s.init_h) d += " initial_h";
  if (s.init_c) d += " initial_c";
  if (s.peephole) d += " P";
  for (const auto& [name, attr] : s.extra) d += " " + name;
  for (size_t i = 0; i < s.outputs.size(); ++i) d += s.outputs[i] ? "" : " no-out" + std::to_string(i);
  return d + (s.constant_weights ? "" : " run-time weights");
}

KernelCase MakeRnn(const RnnSpec& s, uint64_t seed) {
  const int64_t dirs = s.direction == "bidirectional" ? 2 : 1, g = Gates(s.op);
  Attrs attrs = s.extra;
  attrs["hidden_size"] = IntAttr(s.hidden);
  attrs["direction"] = StringAttr(s.direction);
  attrs["layout"] = IntAttr(s.layout);
  const size_t num_inputs = s.op == "LSTM" ? 8 : 6, num_outputs = s.op == "LSTM" ? 3 : 2;
  KernelCase c{.node = MakeNode(s.op, num_inputs, num_outputs, attrs), .opset = 14};
  c.inputs.resize(num_inputs);
  c.constant.assign(num_inputs, false);
  const Shape state = s.layout == 1 ? Shape{s.batch, dirs, s.hidden} : Shape{dirs, s.batch, s.hidden};
  c.inputs[0] = RandomF32(s.layout == 1 ? Shape{s.batch, s.seq, s.input} : Shape{s.seq, s.batch, s.input}, seed);
  c.inputs[1] = RandomF32({dirs, g * s.hidden, s.input}, seed + 1, -0.7f, 0.7f);
  c.inputs[2] = RandomF32({dirs, g * s.hidden, s.hidden}, seed + 2, -0.7f, 0.7f);
  if (s.bias) c.inputs[3] = RandomF32({dirs, 2 * g * s.hidden}, seed + 3, -0.5f, 0.5f);
  if (s.init_h) c.inputs[5] = RandomF32(state, seed + 5);
  if (s.init_c) c.inputs[6] = RandomF32(state, seed + 6);
  if (s.peephole) c.inputs[7] = RandomF32({dirs, 3 * s.hidden}, seed + 7, -0.5f, 0.5f);
  for (size_t i = 0; i < num_inputs; ++i) {
    if (!c.inputs[i].defined()) c.node.inputs[i] = "";
  }
  for (size_t i : {1, 2, 3, 7}) {
    if (i < num_inputs) c.constant[i] = s.constant_weights;
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    if (!s.outputs[i]) c.node.outputs[i] = "";
  }
  return c;
}

KernelFactory F32Factory(const std::string& op) {
  return op == "LSTM" ? cpu::CreateLstmF32 : op == "GRU" ? cpu::CreateGruF32 : cpu::CreateRnnF32;
}
KernelFactory Bf16Factory(const std::string& op) {
  return op == "LSTM" ? cpu::CreateLstmBf16 : op == "GRU" ? cpu::CreateGruBf16 : cpu::CreateRnnBf16;
}

const std::vector<RnnSpec> kSpecs = {
    {},
    {.init_h = true, .init_c = true, .peephole = true},
    {.direction = "reverse", .init_c = true, .outputs = {false, true, false}},
    {.direction = "bidirectional", .init_h = true, .outputs = {true, false, true}},
    {.batch = 2, .direction = "bidirectional", .layout = 1, .init_h = true, .init_c = true, .peephole = true},
    {.layout = 1, .bias = false, .constant_weights = false},
    {.seq = 1, .batch = 1, .input = 3, .hidden = 4, .outputs = {true, false, false}},
    {.op = "GRU"},
    {.op = "GRU", .direction = "bidirectional", .init_h = true, .extra = {{"linear_before_reset", IntAttr(1)}}},
    {.op = "GRU", .direction = "reverse", .layout = 1, .outputs = {false, true}, .extra = {}},
    {.op = "GRU",
     .batch = 2,
     .direction = "bidirectional",
     .layout = 1,
     .init_h = true,
     .extra = {{"linear_before_reset", IntAttr(1)}}},
    {.op = "RNN", .init_h = true, .constant_weights = false},
    {.op = "RNN", .direction = "bidirectional", .extra = {{"activations", StringsAttrOf({"Relu", "Relu"})}}},
    {.op = "RNN", .direction = "reverse", .layout = 1, .extra = {{"activations", StringsAttrOf({"Sigmoid"})}}},
};

TEST(RnnCpuTest, Fp32MatchesReference) {
  uint64_t seed = 500;
  for (const RnnSpec& spec : kSpecs) {
    SCOPED_TRACE(Describe(spec));
    const KernelCase c = MakeRnn(spec, seed += 10);
    auto out = RunCpuKernel(F32Factory(spec.op), c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const auto ref = RunReference(c);
    ASSERT_EQ(ref.size(), out->size());
    for (size_t i = 0; i < ref.size(); ++i) {
      if (!ref[i].defined()) continue;
      EXPECT_EQ((*out)[i].shape(), ref[i].shape()) << "output " << i;
      EXPECT_LE(MaxRelError((*out)[i], ref[i]), 1e-4) << "output " << i;
    }
  }
}

TEST(RnnCpuTest, FullLengthConstantSequenceLensRunOnOneDnn) {
  RnnSpec spec;
  KernelCase c = MakeRnn(spec, 42);
  c.node.inputs[4] = "in4";
  c.inputs[4] = MakeTensor<int32_t>({spec.batch}, std::vector<int32_t>(static_cast<size_t>(spec.batch), 7));
  c.constant[4] = true;
  auto out = RunCpuKernel(cpu::CreateLstmF32, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_LE(MaxRelError((*out)[1], RunReference(c)[1]), 1e-4);
}

// bf16 rounds X, the states and the weights (8 significant bits, ~54 dB each); the recurrence
// carries the rounding of every step into the next, which costs a few dB over 7 steps. 30 dB
// catches a swapped gate or a lost bias (≤ 10 dB) with room for the rounding.
constexpr double kBf16MinSqnrDb = 30.0;

TEST(RnnCpuTest, Bf16IsCloseToReferenceBySqnr) {
  uint64_t seed = 700;
  for (const RnnSpec& spec : kSpecs) {
    SCOPED_TRACE(Describe(spec));
    KernelCase c = MakeRnn(spec, seed += 10);
    c.precision = Precision::kBf16;
    auto out = RunCpuKernel(Bf16Factory(spec.op), c);
    if (!out.ok() && out.status().code() == StatusCode::kUnsupported &&
        out.status().message().find("AVX-512") != std::string::npos) {
      GTEST_SKIP() << out.status().ToString();
    }
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const auto ref = RunReference(c);
    for (size_t i = 0; i < ref.size(); ++i) {
      if (ref[i].defined()) {
        EXPECT_GE(SqnrDb((*out)[i], ref[i]), kBf16MinSqnrDb) << "output " << i;
      }
    }
  }
}

// What oneDNN's cells cannot compute is refused at Init with a reason the user sees.
void ExpectRefused(KernelCase c, KernelFactory factory, const std::string& reason) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported) << out.status().ToString();
  EXPECT_NE(out.status().message().find(reason), std::string::npos) << out.status().ToString();
}

TEST(RnnCpuTest, RefusesWhatOneDnnCannotCompute) {
  ExpectRefused(MakeRnn({.extra = {{"clip", FloatAttr(1.0f)}}}, 1), cpu::CreateLstmF32, "clip");
  ExpectRefused(MakeRnn({.extra = {{"input_forget", IntAttr(1)}}}, 1), cpu::CreateLstmF32, "input_forget");
  ExpectRefused(MakeRnn({.extra = {{"activations", StringsAttrOf({"HardSigmoid", "Tanh", "Tanh"})}}}, 1),
                cpu::CreateLstmF32, "activation HardSigmoid");
  ExpectRefused(MakeRnn({.op = "RNN", .extra = {{"activations", StringsAttrOf({"LeakyRelu"})}}}, 1), cpu::CreateRnnF32,
                "activation LeakyRelu");

  KernelCase short_lens = MakeRnn({}, 1);
  short_lens.node.inputs[4] = "in4";
  short_lens.inputs[4] = MakeTensor<int32_t>({3}, {7, 2, 7});
  short_lens.constant[4] = true;
  ExpectRefused(short_lens, cpu::CreateLstmF32, "shorter than seq_length");
  short_lens.constant[4] = false;
  ExpectRefused(short_lens, cpu::CreateLstmF32, "sequence_lens known only at run time");
}

}  // namespace
}  // namespace chipfit::testing
