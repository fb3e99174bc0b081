// The CPU device's signal kernels (signal_cpu.cpp) against the reference: DFT of power-of-two and other
// lengths (the radix-2, direct and Bluestein paths), real and complex, onesided, inverse, dft_length
// padding and truncating, every axis in opsets 17 and 20, f32/f64/f16/bf16; STFT with and without a
// window and frame_length; the window generators and MelWeightMatrix value for value; lines run in
// parallel; a kernel run with changing lengths; errors and refusals.
//
// Tolerances: kernel and reference both compute in double and round each value once to the output's
// dtype. In double the FFT's error is ~ε·log2(n) and the reference's direct sum's ~ε·n of the largest
// magnitude (ε = 2⁻⁵³), under 1e-13 for n ≤ 1024, so f64 results are held to 1e-11 of the largest
// reference magnitude. Rounding two doubles that close gives the same value or a neighbour, so a
// rounded result is at most one unit in the last place of the largest magnitude off: 2⁻²³ (f32),
// 2⁻¹⁰ (f16), 2⁻⁷ (bf16), and the tolerances are those with a little room. The generators compute the
// reference's formulas in the same order and must match to the bit.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cpu/cpu_kernels.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

// The table's fp32 implementation of `op`; it must be the named one and come first.
KernelFactory SignalFactory(const std::string& op, const std::string& name) {
  const auto& impls = CpuKernels().Find(op, "", DeviceKind::kCpu, Precision::kFp32);
  EXPECT_FALSE(impls.empty()) << op;
  if (impls.empty()) return nullptr;
  EXPECT_EQ(std::string(impls[0].name), name) << op;
  return impls[0].create;
}

KernelFactory Dft() { return SignalFactory("DFT", "cpu:dft"); }
KernelFactory Stft() { return SignalFactory("STFT", "cpu:stft"); }

double Tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF64: return 1e-11;
    case DType::kF16: return 1.2e-3;  // 2⁻¹⁰ ≈ 9.8e-4
    case DType::kBF16: return 9e-3;   // 2⁻⁷ ≈ 7.8e-3
    default: return 2e-7;             // 2⁻²³ ≈ 1.2e-7
  }
}

// Seeded values uniform in [-1, 1), stored as `dtype`.
Tensor Random(DType dtype, const Shape& shape, uint64_t seed) {
  const Tensor f32 = RandomF32(shape, seed);
  Tensor t(dtype, shape);
  EXPECT_TRUE(VisitDType(dtype, [&](auto tag) {
    if constexpr (std::is_same_v<decltype(tag), std::nullptr_t>) {
      return false;
    } else {
      using T = decltype(tag);
      for (int64_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = FromDouble<T>(f32.data<float>()[i]);
      return true;
    }
  }));
  return t;
}

// cpu kernel and reference agree in dtype, shape and values within Tolerance(dtype).
void ExpectMatches(KernelFactory factory, const KernelCase& c, double tol) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].dtype(), ref[0].dtype());
  ASSERT_EQ((*out)[0].shape(), ref[0].shape());
  EXPECT_LE(MaxRelError((*out)[0], ref[0]), tol);
}

// Same to the bit.
void ExpectIdentical(KernelFactory factory, const KernelCase& c) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  EXPECT_EQ((*out)[0].dtype(), ref[0].dtype());
  ASSERT_EQ((*out)[0].shape(), ref[0].shape());
  ASSERT_EQ((*out)[0].nbytes(), ref[0].nbytes());
  EXPECT_EQ(std::memcmp((*out)[0].raw_data(), ref[0].raw_data(), ref[0].nbytes()), 0);
}

struct DftSpec {
  Shape x;             // [..., 1 | 2]
  int64_t axis = 1;    // opset 17: the attribute; opset 20: the input (kNoAxis: omitted, −2)
  int64_t length = 0;  // dft_length; 0: omitted
  bool inverse = false;
  bool onesided = false;
  DType dtype = DType::kF32;
  int64_t opset = 17;
};
constexpr int64_t kNoAxis = 1000;

std::string Describe(const DftSpec& s) {
  return "DFT " + ShapeToString(s.x) + " axis " + (s.axis == kNoAxis ? "omitted" : std::to_string(s.axis)) +
         " length " + std::to_string(s.length) + (s.inverse ? " inverse" : "") + (s.onesided ? " onesided" : "") + " " +
         std::string(DTypeName(s.dtype)) + " opset " + std::to_string(s.opset);
}

KernelCase DftCase(const DftSpec& s, uint64_t seed) {
  std::map<std::string, Attribute> attrs = {{"inverse", IntAttr(s.inverse)}, {"onesided", IntAttr(s.onesided)}};
  if (s.opset < 20) attrs["axis"] = IntAttr(s.axis);
  const bool axis_input = s.opset >= 20 && s.axis != kNoAxis;
  KernelCase c{.node = MakeNode("DFT", axis_input ? 3 : 2, 1, attrs), .opset = s.opset};
  // dft_length as a scalar or a [1] tensor, int64 or int32, by seed.
  Tensor length;
  if (s.length > 0) length = seed % 2 == 0 ? I64({}, {s.length}) : I32({1}, {static_cast<int32_t>(s.length)});
  c.inputs = {Random(s.dtype, s.x, seed), length};
  if (axis_input) c.inputs.push_back(I64({}, {s.axis}));
  return c;
}

void ExpectDftMatches(const DftSpec& s, uint64_t seed) {
  SCOPED_TRACE(Describe(s));
  ExpectMatches(Dft(), DftCase(s, seed), Tolerance(s.dtype));
}

// ---- DFT -------------------------------------------------------------------------------------------

// Lengths 1 … 100 on all three paths (powers of two: radix-2; 5, 12, 31: direct; 33, 100: Bluestein),
// real and complex, forward, onesided and inverse, f32 and f64, the axis between two others.
TEST(SignalCpuTest, DftEveryLengthMatchesReference) {
  uint64_t seed = 100;
  for (int64_t n : {1, 2, 5, 8, 12, 31, 33, 64, 100}) {
    for (int64_t comps : {1, 2}) {
      for (int mode = 0; mode < 3; ++mode) {  // forward, onesided (real only), inverse
        if (mode == 1 && comps == 2) continue;
        for (DType dtype : {DType::kF32, DType::kF64}) {
          ExpectDftMatches({.x = {2, n, 3, comps}, .inverse = mode == 2, .onesided = mode == 1, .dtype = dtype},
                           seed += 7);
        }
      }
    }
  }
}

// dft_length shorter (the axis truncated) and longer (zero-padded) than the axis, onto every path.
TEST(SignalCpuTest, DftLengthTruncatesAndPads) {
  uint64_t seed = 200;
  for (int64_t axis_len : {1, 10, 64}) {
    for (int64_t length : {1, 4, 7, 16, 25, 48, 100, 128}) {
      for (int mode = 0; mode < 3; ++mode) {
        for (DType dtype : {DType::kF32, DType::kF64}) {
          const int64_t comps = mode == 1 ? 1 : 2;
          ExpectDftMatches({.x = {3, axis_len, comps},
                            .length = length,
                            .inverse = mode == 2,
                            .onesided = mode == 1,
                            .dtype = dtype},
                           seed += 7);
        }
      }
    }
  }
}

// Every axis of a rank-4 input: opset 17's attribute (also negative) and opset 20's input (negative
// ones, and omitted: −2), with and without dft_length.
TEST(SignalCpuTest, DftEveryAxisInOpset17And20) {
  uint64_t seed = 300;
  const Shape base = {3, 4, 5, 6};
  for (int64_t opset : {17, 20}) {
    for (int64_t axis : std::vector<int64_t>{-4, -3, -2, 0, 1, 2, kNoAxis}) {
      if (axis == kNoAxis && opset < 20) continue;
      for (int64_t comps : {1, 2}) {
        for (int64_t length : {0, 3, 8}) {
          for (DType dtype : {DType::kF32, DType::kF64}) {
            Shape x = base;
            x.back() = comps;
            ExpectDftMatches({.x = x,
                              .axis = axis,
                              .length = length,
                              .onesided = comps == 1 && length == 8,
                              .dtype = dtype,
                              .opset = opset},
                             seed += 7);
          }
        }
      }
    }
  }
}

// f16 and bf16 inputs are read as double and the results rounded once, as the reference does.
TEST(SignalCpuTest, DftHalfPrecisionMatchesReference) {
  uint64_t seed = 400;
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    for (int64_t n : {8, 12, 100}) {
      ExpectDftMatches({.x = {2, n, 2}, .dtype = dtype}, seed += 7);
      ExpectDftMatches({.x = {2, n, 1}, .onesided = true, .dtype = dtype}, seed += 7);
      ExpectDftMatches({.x = {2, n, 2}, .inverse = true, .dtype = dtype}, seed += 7);
    }
  }
}

// Hand-computed: DFT of [1, 2, 3, 4] is 10, −2+2i, −2, −2−2i; its inverse gives the signal back.
TEST(SignalCpuTest, DftOfKnownSignal) {
  KernelCase c{.node = MakeNode("DFT", 1), .opset = 17};
  c.inputs = {F32({1, 4, 1}, {1, 2, 3, 4})};
  auto out = RunCpuKernel(Dft(), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0], {10, 0, -2, 2, -2, 0, -2, -2}, 1e-6f);
  KernelCase back{.node = MakeNode("DFT", 1, 1, {{"inverse", IntAttr(1)}}), .opset = 17};
  back.inputs = {(*out)[0]};
  auto signal = RunCpuKernel(Dft(), back);
  ASSERT_TRUE(signal.ok()) << signal.status().ToString();
  ExpectNear((*signal)[0], {1, 0, 2, 0, 3, 0, 4, 0}, 1e-6f);
}

// Long transforms and many lines (on several threads): within tolerance of the reference, and the
// same to the bit with one thread and with several.
TEST(SignalCpuTest, DftLongLinesInParallelDoNotDependOnThreads) {
  const std::vector<DftSpec> specs = {
      {.x = {64, 400, 1}, .onesided = true},
      {.x = {8, 1000, 2}, .inverse = true, .dtype = DType::kF64},
      {.x = {4, 1024, 2}},
      {.x = {6, 257, 5, 2}, .axis = 1},
      {.x = {3, 4, 300, 1}, .axis = 1, .length = 512, .dtype = DType::kF64},
  };
  uint64_t seed = 500;
  for (const DftSpec& s : specs) {
    ExpectDftMatches(s, seed += 7);
    SCOPED_TRACE(Describe(s));
    const KernelCase c = DftCase(s, seed);
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    auto one = RunCpuKernel(Dft(), c);
    omp_set_num_threads(std::max(threads, 3));
    auto many = RunCpuKernel(Dft(), c);
    omp_set_num_threads(threads);
    ASSERT_TRUE(one.ok() && many.ok());
    ASSERT_EQ((*one)[0].nbytes(), (*many)[0].nbytes());
    EXPECT_EQ(std::memcmp((*one)[0].raw_data(), (*many)[0].raw_data(), (*one)[0].nbytes()), 0);
  }
}

// One kernel run again with dft_length changing between runs (its cached plan must follow), the
// output sized each time from the reference's shape function as the executor does.
TEST(SignalCpuTest, DftKernelFollowsLengthChangingBetweenRuns) {
  const Node node = MakeNode("DFT", 2);
  const Tensor x = Random(DType::kF32, {2, 20, 2}, 600);
  const std::vector<ValueInfo> infos = {{x.dtype(), x.shape()}, {DType::kI64, {}}};
  const std::vector<const ValueInfo*> ptrs = {&infos[0], &infos[1]};
  auto kernel = Dft()(KernelInit{node, ptrs, 17});
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  for (int64_t length : {16, 12, 16, 40, 20}) {
    SCOPED_TRACE("dft_length " + std::to_string(length));
    const Tensor dft_length = I64({}, {length});
    const std::vector<Tensor> ref = RunReference(KernelCase{.node = node, .inputs = {x, dft_length}});
    ASSERT_EQ(ref.size(), 1u);
    Tensor out(ref[0].dtype(), ref[0].shape());
    KernelContext ctx(node, 17, {&x, &dft_length}, {&out});
    ASSERT_TRUE((*kernel)->Run(ctx).ok());
    EXPECT_LE(MaxRelError(out, ref[0]), Tolerance(DType::kF32));
  }
}

// ---- STFT ------------------------------------------------------------------------------------------

struct StftSpec {
  Shape signal;  // [batch, length, 1 | 2]
  int64_t step = 1;
  int64_t window = 0;  // points; 0: omitted
  int64_t frame = 0;   // frame_length; 0: omitted
  bool onesided = true;
  DType dtype = DType::kF32;
};

void ExpectStftMatches(const StftSpec& s, uint64_t seed) {
  SCOPED_TRACE("STFT " + ShapeToString(s.signal) + " step " + std::to_string(s.step) + " window " +
               std::to_string(s.window) + " frame_length " + std::to_string(s.frame) +
               (s.onesided ? " onesided " : " ") + std::string(DTypeName(s.dtype)));
  KernelCase c{.node = MakeNode("STFT", 4, 1, {{"onesided", IntAttr(s.onesided)}}), .opset = 17};
  Tensor window = s.window > 0 ? Random(s.dtype, {s.window}, seed + 1) : Tensor();
  Tensor frame = s.frame > 0 ? I64({}, {s.frame}) : Tensor();
  c.inputs = {Random(s.dtype, s.signal, seed), I64({}, {s.step}), window, frame};
  ExpectMatches(Stft(), c, Tolerance(s.dtype));
}

// Window only, frame_length only, both, neither (the whole signal one frame); frame lengths on every
// DFT path; real onesided, real and complex two-sided; f32 and f64.
TEST(SignalCpuTest, StftMatchesReference) {
  uint64_t seed = 700;
  for (int64_t frame : {1, 5, 16, 25, 40, 64}) {
    for (int64_t step : {1, 3, 16}) {
      for (int form = 0; form < 3; ++form) {       // window, frame_length, both
        for (int sided = 0; sided < 3; ++sided) {  // real onesided, real two-sided, complex two-sided
          const DType dtype = (frame + step + form) % 2 == 0 ? DType::kF32 : DType::kF64;
          ExpectStftMatches({.signal = {2, 64, sided == 2 ? 2 : 1},
                             .step = step,
                             .window = form != 1 ? frame : 0,
                             .frame = form != 0 ? frame : 0,
                             .onesided = sided == 0,
                             .dtype = dtype},
                            seed += 7);
        }
      }
    }
  }
  for (int64_t len : {1, 17, 64}) {
    ExpectStftMatches({.signal = {3, len, 1}, .step = 4}, seed += 7);
    ExpectStftMatches({.signal = {3, len, 2}, .step = 2, .onesided = false, .dtype = DType::kF64}, seed += 7);
  }
}

// Audio-sized: 400-point frames (Bluestein) with a hop of 160 over a second of 16 kHz signal, and
// 512-point frames (radix-2), frames on several threads; half-precision signals too.
TEST(SignalCpuTest, StftLongSignalsMatchReference) {
  ExpectStftMatches({.signal = {2, 16000, 1}, .step = 160, .window = 400}, 800);
  ExpectStftMatches({.signal = {1, 8000, 1}, .step = 128, .window = 512, .dtype = DType::kF64}, 801);
  ExpectStftMatches({.signal = {2, 300, 2}, .step = 10, .frame = 30, .onesided = false}, 802);
  ExpectStftMatches({.signal = {2, 64, 1}, .step = 8, .window = 16, .dtype = DType::kF16}, 803);
  ExpectStftMatches({.signal = {2, 64, 1}, .step = 8, .window = 12, .dtype = DType::kBF16}, 804);
}

// ---- window generators and MelWeightMatrix ---------------------------------------------------------

// Every generator, periodic and symmetric, sizes 0, 1, 2, 10 and a large one (several threads), the
// size int64 or int32, written as float, double, f16, bf16, int32 and int64: the reference's bytes.
TEST(SignalCpuTest, WindowsMatchReferenceToTheBit) {
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    for (int64_t periodic : {0, 1}) {
      for (int64_t size : {0, 1, 2, 10, 40000}) {
        for (int64_t dtype : {1, 11, 10, 16, 6, 7}) {
          SCOPED_TRACE(std::string(op) + " periodic " + std::to_string(periodic) + " size " + std::to_string(size) +
                       " output_datatype " + std::to_string(dtype));
          KernelCase c{
              .node = MakeNode(op, 1, 1, {{"periodic", IntAttr(periodic)}, {"output_datatype", IntAttr(dtype)}}),
              .opset = 17};
          c.inputs = {size % 2 == 0 ? I64({}, {size}) : I32({1}, {static_cast<int32_t>(size)})};
          ExpectIdentical(SignalFactory(op, "cpu:window"), c);
        }
      }
    }
  }
}

// Filter banks of several sizes (Whisper's 80 × 201 among them), the edges as f32 or f64 and the sample
// rate int64 or int32, written as float, double and f16: the reference's bytes.
TEST(SignalCpuTest, MelWeightMatrixMatchesReferenceToTheBit) {
  struct Mel {
    int64_t mels, length, rate;
    double lower, upper;
  };
  const std::vector<Mel> cases = {
      {8, 64, 16000, 0, 8000},  {80, 400, 16000, 0, 8000}, {128, 1024, 44100, 20, 22050},
      {3, 16, 8000, 300, 3000}, {40, 512, 16000, 0, 7600}, {1, 2, 100, 0, 40},
  };
  int variant = 0;
  for (const Mel& m : cases) {
    for (int64_t dtype : {1, 11, 10}) {
      ++variant;
      SCOPED_TRACE("MelWeightMatrix " + std::to_string(m.mels) + " mels, dft_length " + std::to_string(m.length) +
                   ", output_datatype " + std::to_string(dtype));
      KernelCase c{.node = MakeNode("MelWeightMatrix", 5, 1, {{"output_datatype", IntAttr(dtype)}}), .opset = 17};
      Tensor lower = variant % 2 == 0 ? F32({}, {static_cast<float>(m.lower)}) : MakeTensor<double>({}, {m.lower});
      Tensor upper = variant % 2 == 0 ? F32({}, {static_cast<float>(m.upper)}) : MakeTensor<double>({}, {m.upper});
      Tensor rate = variant % 3 == 0 ? I32({}, {static_cast<int32_t>(m.rate)}) : I64({}, {m.rate});
      c.inputs = {I64({}, {m.mels}), I64({}, {m.length}), rate, lower, upper};
      ExpectIdentical(SignalFactory("MelWeightMatrix", "cpu:mel-weights"), c);
    }
  }
}

// ---- errors and refusals ---------------------------------------------------------------------------

// Dtypes the ops do not take, and attribute combinations the reference rejects, are refused with the
// reason (the reference then runs them and reports its error).
TEST(SignalCpuTest, UnsupportedCasesAreRefusedWithTheReason) {
  KernelCase dft{.node = MakeNode("DFT", 1), .opset = 17};
  dft.inputs = {I32({1, 4, 1}, {1, 2, 3, 4})};
  EXPECT_EQ(RefusalOf(Dft(), dft), "i32 input (floating point only; the reference reports it)");

  KernelCase both{.node = MakeNode("DFT", 1, 1, {{"onesided", IntAttr(1)}, {"inverse", IntAttr(1)}}), .opset = 17};
  both.inputs = {F32({1, 4, 1}, {1, 2, 3, 4})};
  EXPECT_EQ(RefusalOf(Dft(), both), "onesided=1 with inverse=1 (the reference reports it)");

  KernelCase float_length{.node = MakeNode("DFT", 2), .opset = 17};
  float_length.inputs = {F32({1, 4, 1}, {1, 2, 3, 4}), F32({}, {4})};
  EXPECT_EQ(RefusalOf(Dft(), float_length), "f32 dft_length (an integer; the reference reports it)");

  KernelCase stft{.node = MakeNode("STFT", 2), .opset = 17};
  stft.inputs = {I64({1, 4, 1}, {1, 2, 3, 4}), I64({}, {1})};
  EXPECT_EQ(RefusalOf(Stft(), stft), "i64 signal (floating point only; the reference reports it)");

  KernelCase int_window{.node = MakeNode("STFT", 3), .opset = 17};
  int_window.inputs = {F32({1, 4, 1}, {1, 2, 3, 4}), I64({}, {1}), I64({2}, {1, 1})};
  EXPECT_EQ(RefusalOf(Stft(), int_window), "i64 window (floating point only)");

  KernelCase hann{.node = MakeNode("HannWindow", 1), .opset = 17};
  hann.inputs = {F32({}, {4})};
  EXPECT_EQ(RefusalOf(SignalFactory("HannWindow", "cpu:window"), hann),
            "f32 size (an integer; the reference reports it)");

  KernelCase strings{.node = MakeNode("BlackmanWindow", 1, 1, {{"output_datatype", IntAttr(8)}}), .opset = 17};
  strings.inputs = {I64({}, {4})};
  EXPECT_EQ(RefusalOf(SignalFactory("BlackmanWindow", "cpu:window"), strings),
            "output_datatype 8 is not a numeric tensor type (the reference reports it)");

  KernelCase mel{.node = MakeNode("MelWeightMatrix", 5), .opset = 17};
  mel.inputs = {I64({}, {8}), I64({}, {64}), F32({}, {16000}), F32({}, {0}), F32({}, {8000})};
  EXPECT_EQ(RefusalOf(SignalFactory("MelWeightMatrix", "cpu:mel-weights"), mel),
            "f32 sample_rate (an integer; the reference reports it)");
}

// Values only known at run time that the reference rejects: the kernel reports the same error.
TEST(SignalCpuTest, RunTimeErrorsAreTheReferences) {
  KernelCase mel{.node = MakeNode("MelWeightMatrix", 5), .opset = 17};
  // An upper edge past the Nyquist frequency puts the last edges outside the spectrum's bins.
  mel.inputs = {I64({}, {8}), I64({}, {64}), I64({}, {16000}), F32({}, {0}), F32({}, {16000})};
  auto out = RunCpuKernel(SignalFactory("MelWeightMatrix", "cpu:mel-weights"), mel);
  auto ref = RunNodeOnReference(mel.node, mel.opset, mel.inputs);
  ASSERT_FALSE(out.ok());
  ASSERT_FALSE(ref.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), ref.status().message());
}

}  // namespace
}  // namespace chipfit::testing
