// Reference kernel tests: RNN, GRU and LSTM against values worked out by hand from the ONNX equations
// (one or two hidden units, so each expected value is a short formula).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/reference/reference_kernels.h"
#include "tests/core/reference/ref_test_util.h"

namespace chipfit::testing {
namespace {

double Sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// A node with `num_inputs` inputs where the names in `omitted` are left out ("" in the ONNX node).
Node RecurrentNode(const std::string& op, size_t num_inputs, size_t num_outputs, Attrs attrs,
                   std::vector<size_t> omitted = {}) {
  Node node = MakeNode(op, num_inputs, num_outputs, std::move(attrs));
  for (size_t i : omitted) node.inputs[i] = "";
  return node;
}

// ----------------------------------------------------------------------------------------------------------------
// RNN: H_t = f(W x_t + R H_{t-1} + Wb + Rb), f = Tanh by default.

const Tensor kX12 = F32({2, 1, 1}, {1, 2});  // seq 2, batch 1, input 1

TEST(RnnTest, ForwardCarriesTheHiddenStateAcrossSteps) {
  const Node node = RecurrentNode("RNN", 3, 2, {{"hidden_size", IntAttr(1)}});
  const auto out = RunAll(node, {kX12, F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {1.0f})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 1, 1}));
  EXPECT_EQ(out[1].shape(), (Shape{1, 1, 1}));
  const double h1 = std::tanh(0.5), h2 = std::tanh(1.0 + h1);
  ExpectNear(out[0], {float(h1), float(h2)});
  ExpectNear(out[1], {float(h2)});
}

TEST(RnnTest, ReverseStartsAtTheLastStepAndEndsAtTheFirst) {
  const Node node = RecurrentNode("RNN", 3, 2, {{"hidden_size", IntAttr(1)}, {"direction", StringAttr("reverse")}});
  const auto out = RunAll(node, {kX12, F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {1.0f})});
  const double h_t1 = std::tanh(1.0), h_t0 = std::tanh(0.5 + h_t1);
  ExpectNear(out[0], {float(h_t0), float(h_t1)});
  ExpectNear(out[1], {float(h_t0)});
}

TEST(RnnTest, BidirectionalStacksBothDirectionsWithTheirOwnWeights) {
  const Node node =
      RecurrentNode("RNN", 3, 2, {{"hidden_size", IntAttr(1)}, {"direction", StringAttr("bidirectional")}});
  const auto out = RunAll(node, {kX12, F32({2, 1, 1}, {0.5f, -1.0f}), F32({2, 1, 1}, {1.0f, 0.5f})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 2, 1, 1}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 1, 1}));
  const double f1 = std::tanh(0.5), f2 = std::tanh(1.0 + f1);
  const double b1 = std::tanh(-2.0), b0 = std::tanh(-1.0 + 0.5 * b1);
  ExpectNear(out[0], {float(f1), float(b0), float(f2), float(b1)});  // [seq][dir]
  ExpectNear(out[1], {float(f2), float(b0)});
}

TEST(RnnTest, BiasesAndInitialStateEnterTheFirstStep) {
  const Node node = RecurrentNode("RNN", 6, 2, {{"hidden_size", IntAttr(1)}}, {4});
  const auto out = RunAll(node, {F32({1, 1, 1}, {1}), F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {1.0f}),
                                 F32({1, 2}, {0.1f, 0.2f}), Tensor(), F32({1, 1, 1}, {0.5f})});
  ExpectNear(out[1], {float(std::tanh(0.5 + 0.5 + 0.3))});
}

TEST(RnnTest, ShortSequencesLeaveZerosAndKeepTheirOwnLastState) {
  // Batch 2, seq 3; the second sequence has length 1.
  const Node node = RecurrentNode("RNN", 5, 2, {{"hidden_size", IntAttr(1)}}, {3});
  const Tensor x = F32({3, 2, 1}, {1, 10, 2, 20, 3, 30});
  const auto out = RunAll(node, {x, F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {1.0f}), Tensor(), I32({2}, {3, 1})});
  const double a1 = std::tanh(0.5), a2 = std::tanh(1 + a1), a3 = std::tanh(1.5 + a2);
  const double b1 = std::tanh(5.0);
  ExpectNear(out[0], {float(a1), float(b1), float(a2), 0, float(a3), 0});
  ExpectNear(out[1], {float(a3), float(b1)});
}

TEST(RnnTest, ReverseShortSequenceStartsAtItsOwnLastValidStep) {
  const Node node =
      RecurrentNode("RNN", 5, 2, {{"hidden_size", IntAttr(1)}, {"direction", StringAttr("reverse")}}, {3});
  const Tensor x = F32({3, 1, 1}, {1, 2, 3});
  const auto out = RunAll(node, {x, F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {1.0f}), Tensor(), I32({1}, {2})});
  const double h_t1 = std::tanh(1.0), h_t0 = std::tanh(0.5 + h_t1);  // x[2] = 3 is padding
  ExpectNear(out[0], {float(h_t0), float(h_t1), 0});
  ExpectNear(out[1], {float(h_t0)});
}

TEST(RnnTest, ZeroLengthSequenceKeepsItsInitialState) {
  const Node node = RecurrentNode("RNN", 6, 2, {{"hidden_size", IntAttr(1)}}, {3});
  const auto out = RunAll(node, {F32({1, 1, 1}, {1}), F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {1.0f}), Tensor(),
                                 I32({1}, {0}), F32({1, 1, 1}, {0.25f})});
  ExpectNear(out[0], {0});
  ExpectNear(out[1], {0.25f});
}

TEST(RnnTest, ActivationAlphasAreConsumedByTheFunctionsThatTakeThem) {
  // Direction 0: LeakyRelu takes alpha 0.1; direction 1: Affine takes alpha 2 and beta 3.
  const Node node = RecurrentNode("RNN", 3, 2,
                                  {{"hidden_size", IntAttr(1)},
                                   {"direction", StringAttr("bidirectional")},
                                   {"activations", StringsAttr({"LeakyRelu", "Affine"})},
                                   {"activation_alpha", FloatsAttr({0.1f, 2.0f})},
                                   {"activation_beta", FloatsAttr({3.0f})}});
  const auto out = RunAll(node, {F32({1, 1, 1}, {-1}), F32({2, 1, 1}, {1, 1}), F32({2, 1, 1}, {0, 0})});
  ExpectNear(out[1], {-0.1f, 2 * -1 + 3});
}

TEST(RnnTest, ClipBoundsTheActivationInput) {
  const Node node = RecurrentNode(
      "RNN", 3, 2, {{"hidden_size", IntAttr(1)}, {"activations", StringsAttr({"Relu"})}, {"clip", FloatAttr(1.5f)}});
  const auto out = RunAll(node, {F32({1, 2, 1}, {4, -4}), F32({1, 1, 1}, {1}), F32({1, 1, 1}, {0})});
  ExpectNear(out[1], {1.5f, 0});
}

TEST(RnnTest, LayoutOneLeadsWithBatch) {
  // Batch 2, seq 2: X [batch, seq, input], Y [batch, seq, dir, hidden], initial_h [batch, dir, hidden].
  const Node node = RecurrentNode("RNN", 6, 2, {{"hidden_size", IntAttr(1)}, {"layout", IntAttr(1)}}, {3, 4});
  const Tensor x = F32({2, 2, 1}, {1, 2, 3, 4});
  const auto out =
      RunAll(node, {x, F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {1.0f}), Tensor(), Tensor(), F32({2, 1, 1}, {0, 1})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 2, 1, 1}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 1, 1}));
  const double a1 = std::tanh(0.5), a2 = std::tanh(1 + a1);
  const double b1 = std::tanh(1.5 + 1), b2 = std::tanh(2 + b1);
  ExpectNear(out[0], {float(a1), float(a2), float(b1), float(b2)});
  ExpectNear(out[1], {float(a2), float(b2)});
}

TEST(RnnTest, OmittedOutputsAreNotProduced) {
  Node node = RecurrentNode("RNN", 3, 2, {{"hidden_size", IntAttr(1)}});
  node.outputs[0] = "";
  const auto out = RunAll(node, {kX12, F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {1.0f})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].defined());
  ExpectNear(out[1], {float(std::tanh(1.0 + std::tanh(0.5)))});
}

TEST(RnnTest, HiddenSizeDefaultsToTheRecurrenceWidth) {
  const Node node = RecurrentNode("RNN", 3, 2, {});
  const auto out = RunAll(node, {kX12, F32({1, 2, 1}, {1, 0}), F32({1, 2, 2}, {0, 0, 0, 0})});
  EXPECT_EQ(out[1].shape(), (Shape{1, 1, 2}));
  ExpectNear(out[1], {float(std::tanh(2.0)), 0});
}

TEST(RnnTest, WrongWeightShapeNamesTheNodeAndInput) {
  const Node node = RecurrentNode("RNN", 3, 2, {{"hidden_size", IntAttr(2)}});
  ExpectError(node, {kX12, F32({1, 1, 1}, {0.5f}), F32({1, 2, 2}, {1, 0, 0, 1})}, StatusCode::kInvalidArgument,
              "input 'W' has shape 1x1x1, expected 1x2x1");
}

TEST(RnnTest, BadAttributesAndLengthsAreErrors) {
  const std::vector<Tensor> in = {kX12, F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {1.0f})};
  ExpectError(RecurrentNode("RNN", 3, 2, {{"direction", StringAttr("sideways")}}), in, StatusCode::kInvalidArgument,
              "direction 'sideways'");
  ExpectError(RecurrentNode("RNN", 3, 2, {{"activations", StringsAttr({"Gelu"})}}), in, StatusCode::kUnsupported,
              "activation function 'Gelu'");
  ExpectError(RecurrentNode("RNN", 3, 2, {{"activations", StringsAttr({"Tanh", "Tanh"})}}), in,
              StatusCode::kInvalidArgument, "expected 1 (1 per direction)");
  ExpectError(RecurrentNode("RNN", 5, 2, {}, {3}),
              {kX12, F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {1.0f}), Tensor(), I32({1}, {3})},
              StatusCode::kInvalidArgument, "sequence_lens[0] = 3");
  ExpectError(RecurrentNode("RNN", 3, 2, {}), {kX12, MakeTensor<double>({1, 1, 1}, {0.5}), F32({1, 1, 1}, {1.0f})},
              StatusCode::kInvalidArgument, "input 'W' has dtype f64");
}

// ----------------------------------------------------------------------------------------------------------------
// GRU, gates z, r, h:
//   z = σ(Wz x + Rz H + Wbz + Rbz), r = σ(Wr x + Rr H + Wbr + Rbr)
//   h~ = tanh(Wh x + Rh (r ⊙ H) + Rbh + Wbh)       (linear_before_reset = 0)
//   h~ = tanh(Wh x + r ⊙ (Rh H + Rbh) + Wbh)       (linear_before_reset = 1)
//   H' = (1 - z) ⊙ h~ + z ⊙ H

struct GruCase {
  Tensor w = F32({1, 3, 1}, {0.5f, -0.5f, 1.0f});
  Tensor r = F32({1, 3, 1}, {0.25f, 0.75f, -1.0f});
  Tensor b = F32({1, 6}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  Tensor h0 = F32({1, 1, 1}, {0.5f});

  double Step(double x, double h, bool lbr) const {
    const double z = Sig(0.5 * x + 0.25 * h + 0.1 + 0.4);
    const double r = Sig(-0.5 * x + 0.75 * h + 0.2 + 0.5);
    const double cand =
        lbr ? std::tanh(1.0 * x + r * (-1.0 * h + 0.6) + 0.3) : std::tanh(x - 1.0 * (r * h) + 0.6 + 0.3);
    return (1 - z) * cand + z * h;
  }
};

TEST(GruTest, ResetGateAppliesBeforeTheRecurrenceByDefault) {
  const GruCase c;
  const Node node = RecurrentNode("GRU", 6, 2, {{"hidden_size", IntAttr(1)}}, {4});
  const auto out = RunAll(node, {kX12, c.w, c.r, c.b, Tensor(), c.h0});
  const double h1 = c.Step(1, 0.5, false), h2 = c.Step(2, h1, false);
  ExpectNear(out[0], {float(h1), float(h2)});
  ExpectNear(out[1], {float(h2)});
}

TEST(GruTest, LinearBeforeResetScalesTheRecurrenceAndItsBias) {
  const GruCase c;
  const Node node = RecurrentNode("GRU", 6, 2, {{"hidden_size", IntAttr(1)}, {"linear_before_reset", IntAttr(1)}}, {4});
  const auto out = RunAll(node, {kX12, c.w, c.r, c.b, Tensor(), c.h0});
  const double h1 = c.Step(1, 0.5, true), h2 = c.Step(2, h1, true);
  ASSERT_GT(std::fabs(h2 - c.Step(2, c.Step(1, 0.5, false), false)), 1e-3);  // the two forms differ here
  ExpectNear(out[1], {float(h2)});
}

TEST(GruTest, TwoUnitsMixThroughTheRecurrence) {
  // H = 2 with Rh = [[0, 1], [1, 0]]: each unit's candidate reads the other unit's reset state,
  // h~_0 = tanh(r_1 H_1). W and the z, r rows of R are zero, so z = r = σ(0) = 1/2.
  const Node node = RecurrentNode("GRU", 6, 2, {{"hidden_size", IntAttr(2)}}, {3, 4});
  const Tensor w = F32({1, 6, 1}, {0, 0, 0, 0, 0, 0});
  const Tensor r = F32({1, 6, 2}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0});
  const auto out = RunAll(node, {F32({1, 1, 1}, {1}), w, r, Tensor(), Tensor(), F32({1, 1, 2}, {0.4f, -0.8f})});
  const double h0 = 0.5 * std::tanh(0.5 * -0.8) + 0.5 * 0.4;
  const double h1 = 0.5 * std::tanh(0.5 * 0.4) + 0.5 * -0.8;
  ExpectNear(out[1], {float(h0), float(h1)});
}

TEST(GruTest, BidirectionalWithLayoutOneAndSequenceLengths) {
  // Batch 2 (lengths 2 and 1), seq 2; both directions use GruCase's weights without biases.
  const Node node = RecurrentNode(
      "GRU", 5, 2, {{"hidden_size", IntAttr(1)}, {"direction", StringAttr("bidirectional")}, {"layout", IntAttr(1)}},
      {3});
  const Tensor w = F32({2, 3, 1}, {0.5f, -0.5f, 1.0f, 0.5f, -0.5f, 1.0f});
  const Tensor r = F32({2, 3, 1}, {0.25f, 0.75f, -1.0f, 0.25f, 0.75f, -1.0f});
  const Tensor x = F32({2, 2, 1}, {1, 2, 3, 4});  // [batch][seq]
  const auto out = RunAll(node, {x, w, r, Tensor(), I32({2}, {2, 1})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 2, 2, 1}));
  const auto step = [](double xv, double h) {
    const double z = Sig(0.5 * xv + 0.25 * h), r = Sig(-0.5 * xv + 0.75 * h);
    return (1 - z) * std::tanh(xv - r * h) + z * h;
  };
  const double f0 = step(1, 0), f1 = step(2, f0);  // batch 0 forward
  const double r1 = step(2, 0), r0 = step(1, r1);  // batch 0 backward
  const double g0 = step(3, 0);                    // batch 1, one step either way
  ExpectNear(out[0], {float(f0), float(r0), float(f1), float(r1), float(g0), float(g0), 0, 0});
  ExpectNear(out[1], {float(f1), float(r0), float(g0), float(g0)});  // [batch][dir]
}

TEST(GruTest, WrongRecurrenceShapeNamesTheNode) {
  const GruCase c;
  ExpectError(RecurrentNode("GRU", 3, 2, {{"hidden_size", IntAttr(1)}}), {kX12, c.w, F32({1, 2, 1}, {1, 1})},
              StatusCode::kInvalidArgument, "input 'R' has shape 1x2x1, expected 1x3x1");
}

// ----------------------------------------------------------------------------------------------------------------
// LSTM, gates i, o, f, c; P = [Pi, Po, Pf]:
//   i = σ(Wi x + Ri H + Pi ⊙ C + b_i), f = σ(Wf x + Rf H + Pf ⊙ C + b_f), c~ = tanh(Wc x + Rc H + b_c)
//   C' = f ⊙ C + i ⊙ c~, o = σ(Wo x + Ro H + Po ⊙ C' + b_o), H' = o ⊙ tanh(C')

struct LstmCase {
  // W rows i, o, f, c; R likewise.
  double wi = 0.5, wo = -0.25, wf = 0.75, wc = 1.0;
  double ri = 0.1, ro = 0.2, rf = -0.3, rc = 0.4;
  double pi = 0, po = 0, pf = 0;
  double clip = 0;  // 0: none
  bool input_forget = false;

  Tensor W() const { return F32({1, 4, 1}, {float(wi), float(wo), float(wf), float(wc)}); }
  Tensor R() const { return F32({1, 4, 1}, {float(ri), float(ro), float(rf), float(rc)}); }
  Tensor P() const { return F32({1, 3}, {float(pi), float(po), float(pf)}); }

  double Clip(double v) const { return clip > 0 ? std::clamp(v, -clip, clip) : v; }
  // One step from (h, c); returns the new (h, c).
  std::pair<double, double> Step(double x, double h, double c) const {
    const double i = Sig(Clip(wi * x + ri * h + pi * c));
    const double f = input_forget ? 1 - i : Sig(Clip(wf * x + rf * h + pf * c));
    const double cand = std::tanh(Clip(wc * x + rc * h));
    const double c2 = f * c + i * cand;
    const double o = Sig(Clip(wo * x + ro * h + po * c2));
    return {o * std::tanh(c2), c2};
  }
};

TEST(LstmTest, ForwardGivesSequenceHiddenAndCellState) {
  const LstmCase lc;
  const Node node = RecurrentNode("LSTM", 3, 3, {{"hidden_size", IntAttr(1)}});
  const auto out = RunAll(node, {kX12, lc.W(), lc.R()});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].shape(), (Shape{1, 1, 1}));
  const auto [h1, c1] = lc.Step(1, 0, 0);
  const auto [h2, c2] = lc.Step(2, h1, c1);
  ExpectNear(out[0], {float(h1), float(h2)});
  ExpectNear(out[1], {float(h2)});
  ExpectNear(out[2], {float(c2)});
}

TEST(LstmTest, PeepholesSeeTheOldCellForInputAndForgetAndTheNewOneForOutput) {
  LstmCase lc;
  lc.pi = 0.5;
  lc.po = -1.0;
  lc.pf = 2.0;
  const Node node = RecurrentNode("LSTM", 8, 3, {{"hidden_size", IntAttr(1)}}, {3, 4});
  const auto out =
      RunAll(node, {kX12, lc.W(), lc.R(), Tensor(), Tensor(), F32({1, 1, 1}, {0.3f}), F32({1, 1, 1}, {-0.6f}), lc.P()});
  const auto [h1, c1] = lc.Step(1, 0.3, -0.6);
  const auto [h2, c2] = lc.Step(2, h1, c1);
  ExpectNear(out[0], {float(h1), float(h2)});
  ExpectNear(out[2], {float(c2)});
}

TEST(LstmTest, InputForgetCouplesTheForgetGateToOneMinusInput) {
  LstmCase lc;
  lc.input_forget = true;
  const Node node = RecurrentNode("LSTM", 7, 3, {{"hidden_size", IntAttr(1)}, {"input_forget", IntAttr(1)}}, {3, 4, 5});
  const auto out = RunAll(node, {kX12, lc.W(), lc.R(), Tensor(), Tensor(), Tensor(), F32({1, 1, 1}, {1.0f})});
  const auto [h1, c1] = lc.Step(1, 0, 1);
  const auto [h2, c2] = lc.Step(2, h1, c1);
  ExpectNear(out[1], {float(h2)});
  ExpectNear(out[2], {float(c2)});
}

TEST(LstmTest, ClipBoundsEveryGateInput) {
  LstmCase lc;
  lc.clip = 0.5;
  const Node node = RecurrentNode("LSTM", 3, 3, {{"hidden_size", IntAttr(1)}, {"clip", FloatAttr(0.5f)}});
  const auto out = RunAll(node, {kX12, lc.W(), lc.R()});
  const auto [h1, c1] = lc.Step(1, 0, 0);
  const auto [h2, c2] = lc.Step(2, h1, c1);
  ExpectNear(out[1], {float(h2)});
  ExpectNear(out[2], {float(c2)});
}

TEST(LstmTest, BiasesAddWeightAndRecurrenceParts) {
  // Wb_c + Rb_c = 1 on the cell gate only; the others stay 0.
  const LstmCase lc;
  const Node node = RecurrentNode("LSTM", 4, 3, {{"hidden_size", IntAttr(1)}});
  const auto out = RunAll(node, {F32({1, 1, 1}, {1}), lc.W(), lc.R(), F32({1, 8}, {0, 0, 0, 0.25f, 0, 0, 0, 0.75f})});
  const double i = Sig(0.5), cand = std::tanh(1.0 + 1.0), o = Sig(-0.25);  // C starts at 0: f drops out
  ExpectNear(out[2], {float(i * cand)});
  ExpectNear(out[1], {float(o * std::tanh(i * cand))});
}

TEST(LstmTest, ReverseWithSequenceLengthsAndOnlyTheCellOutput) {
  // Batch 2: lengths 1 and 2; only Y_c is asked for.
  const LstmCase lc;
  Node node = RecurrentNode("LSTM", 5, 3, {{"hidden_size", IntAttr(1)}, {"direction", StringAttr("reverse")}}, {3});
  node.outputs[0] = "";
  node.outputs[1] = "";
  const auto out = RunAll(node, {F32({2, 2, 1}, {1, 3, 2, 4}), lc.W(), lc.R(), Tensor(), I32({2}, {1, 2})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FALSE(out[0].defined());
  const double ca = lc.Step(1, 0, 0).second;
  const auto [hb1, cb1] = lc.Step(4, 0, 0);
  const double cb0 = lc.Step(3, hb1, cb1).second;
  ExpectNear(out[2], {float(ca), float(cb0)});
}

TEST(LstmTest, BidirectionalLayoutOneStatesLeadWithBatch) {
  const LstmCase lc;
  const Node node = RecurrentNode(
      "LSTM", 3, 3, {{"hidden_size", IntAttr(1)}, {"direction", StringAttr("bidirectional")}, {"layout", IntAttr(1)}});
  const Tensor w = F32({2, 4, 1}, {0.5f, -0.25f, 0.75f, 1.0f, 0.5f, -0.25f, 0.75f, 1.0f});
  const Tensor r = F32({2, 4, 1}, {0.1f, 0.2f, -0.3f, 0.4f, 0.1f, 0.2f, -0.3f, 0.4f});
  const auto out = RunAll(node, {F32({1, 2, 1}, {1, 2}), w, r});  // batch 1, seq 2
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 2, 1}));
  EXPECT_EQ(out[2].shape(), (Shape{1, 2, 1}));
  const auto [f1, fc1] = lc.Step(1, 0, 0);
  const auto [f2, fc2] = lc.Step(2, f1, fc1);
  const auto [b1, bc1] = lc.Step(2, 0, 0);
  const auto [b0, bc0] = lc.Step(1, b1, bc1);
  ExpectNear(out[0], {float(f1), float(b0), float(f2), float(b1)});
  ExpectNear(out[1], {float(f2), float(b0)});
  ExpectNear(out[2], {float(fc2), float(bc0)});
}

TEST(LstmTest, OpsetSevenHasNoLayoutAttribute) {
  // The same node at opset 7 keeps [seq, batch, ...] whatever 'layout' says.
  const LstmCase lc;
  const Node node = RecurrentNode("LSTM", 3, 2, {{"hidden_size", IntAttr(1)}, {"layout", IntAttr(1)}});
  const auto out = RunAll(node, {F32({2, 1, 1}, {1, 2}), lc.W(), lc.R()}, 7);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 1, 1}));
}

TEST(LstmTest, DoublePrecisionRuns) {
  const LstmCase lc;
  const Node node = RecurrentNode("LSTM", 3, 2, {{"hidden_size", IntAttr(1)}});
  const auto out =
      RunAll(node, {MakeTensor<double>({1, 1, 1}, {1}), MakeTensor<double>({1, 4, 1}, {0.5, -0.25, 0.75, 1}),
                    MakeTensor<double>({1, 4, 1}, {0.1, 0.2, -0.3, 0.4})});
  ASSERT_EQ(out[1].dtype(), DType::kF64);
  EXPECT_NEAR(out[1].data<double>()[0], lc.Step(1, 0, 0).first, 1e-12);
}

TEST(LstmTest, WrongShapesNameTheNodeAndValue) {
  const LstmCase lc;
  ExpectError(RecurrentNode("LSTM", 3, 3, {{"hidden_size", IntAttr(1)}}), {kX12, F32({1, 3, 1}, {1, 2, 3}), lc.R()},
              StatusCode::kInvalidArgument, "input 'W' has shape 1x3x1, expected 1x4x1");
  ExpectError(RecurrentNode("LSTM", 8, 3, {{"hidden_size", IntAttr(1)}}, {3, 4, 5, 6}),
              {kX12, lc.W(), lc.R(), Tensor(), Tensor(), Tensor(), Tensor(), F32({1, 2}, {1, 2})},
              StatusCode::kInvalidArgument, "input 'P' has shape 1x2");
  ExpectError(RecurrentNode("LSTM", 3, 3, {{"hidden_size", IntAttr(1)}}), {F32({2, 1}, {1, 2}), lc.W(), lc.R()},
              StatusCode::kInvalidArgument, "input 'X' has shape 2x1");
}

}  // namespace
}  // namespace chipfit::testing
