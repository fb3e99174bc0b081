// The executor with a device that has its own memory, played by host memory behind the
// DeviceContext interface: copies as steps, device arena planning, the fit check before any
// allocation, CPU/reference fallback around refused nodes, half storage, observer downloads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/graph/onnx_import.h"
#include "core/runtime/compiled_model.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

using testing::AddNode;
using testing::AddValue;

class HostAllocation final : public DeviceAllocation {
 public:
  explicit HostAllocation(size_t bytes) : memory_(bytes, 0xCD) {}
  size_t bytes() const override { return memory_.size(); }
  Result<DeviceBuffer> View(size_t offset, size_t bytes) override {
    if (offset + bytes > memory_.size()) return Internal("view outside the allocation");
    if (bytes == 0) return DeviceBuffer{};
    return DeviceBuffer{memory_.data() + offset, bytes};
  }

 private:
  std::vector<unsigned char> memory_;
};

// "Device" memory is host memory the executor must still reach only through this interface.
class FakeDevice final : public DeviceContext {
 public:
  explicit FakeDevice(bool half = false, size_t limit = size_t{1} << 30) : half_(half), limit_(limit) {}
  std::string DeviceId() const override { return "opencl:0"; }
  DType StorageType(DType dtype) const override { return half_ && dtype == DType::kF32 ? DType::kF16 : dtype; }
  size_t Alignment() const override { return 256; }
  Status CheckFits(const DeviceMemoryNeeds& needs) const override {
    if (needs.arena_bytes + needs.constant_bytes > limit_) return Unsupported("does not fit the fake device");
    return Status();
  }
  Result<std::shared_ptr<DeviceAllocation>> Allocate(size_t bytes) override {
    ++allocations;
    return std::shared_ptr<DeviceAllocation>(std::make_shared<HostAllocation>(bytes));
  }
  Status Upload(const Tensor& host, const DeviceBuffer& dst) override {
    ++uploads;
    if (StorageType(host.dtype()) != host.dtype()) {
      auto* out = static_cast<uint16_t*>(dst.handle);
      for (int64_t i = 0; i < host.numel(); ++i) out[i] = FloatToHalfBits(host.data<float>()[i]);
      return Status();
    }
    if (host.nbytes() != dst.bytes) return Internal("upload size mismatch");
    std::memcpy(dst.handle, host.raw_data(), host.nbytes());
    return Status();
  }
  Status Download(const DeviceBuffer& src, Tensor& host) override {
    ++downloads;
    if (StorageType(host.dtype()) != host.dtype()) {
      const auto* in = static_cast<const uint16_t*>(src.handle);
      for (int64_t i = 0; i < host.numel(); ++i) host.data<float>()[i] = HalfBitsToFloat(in[i]);
      return Status();
    }
    if (host.nbytes() != src.bytes) return Internal("download size mismatch");
    std::memcpy(host.raw_data(), src.handle, host.nbytes());
    return Status();
  }
  Status Finish() override { return Status(); }
  void TimerBegin() override {}
  Result<double> TimerEndMs() override { return 0.25; }

  int allocations = 0, uploads = 0, downloads = 0;

 private:
  bool half_;
  size_t limit_;
};

// Relu and Add on the fake device, on f32 or half storage.
class FakeKernel final : public IKernel {
 public:
  explicit FakeKernel(bool add) : add_(add) {}
  bool InputOnDevice(size_t) const override { return true; }
  bool OutputOnDevice(size_t) const override { return true; }
  Status Run(KernelContext& ctx) override {
    const bool half = ctx.output(0)->dtype() == DType::kF16;
    const int64_t n = ctx.output(0)->numel();
    auto load = [&](size_t input, int64_t i) {
      const void* p = ctx.device_input(input).handle;
      return half ? HalfBitsToFloat(static_cast<const uint16_t*>(p)[i]) : static_cast<const float*>(p)[i];
    };
    for (int64_t i = 0; i < n; ++i) {
      const float v = add_ ? load(0, i) + load(1, i) : std::max(load(0, i), 0.0f);
      void* out = ctx.device_output(0).handle;
      if (half) {
        static_cast<uint16_t*>(out)[i] = FloatToHalfBits(v);
      } else {
        static_cast<float*>(out)[i] = v;
      }
    }
    return Status();
  }

 private:
  bool add_;
};

Result<std::unique_ptr<IKernel>> CreateFakeRelu(const KernelInit& init) {
  if (init.device == nullptr || init.outputs == nullptr) return Unsupported("needs a device and static shapes");
  return std::unique_ptr<IKernel>(std::make_unique<FakeKernel>(false));
}
Result<std::unique_ptr<IKernel>> CreateFakeAdd(const KernelInit& init) {
  if (init.device == nullptr || init.inputs[0]->shape != init.inputs[1]->shape) {
    return Unsupported("same shapes only");
  }
  return std::unique_ptr<IKernel>(std::make_unique<FakeKernel>(true));
}

const KernelTable& FakeTable() {
  static const KernelTable table = [] {
    KernelTable t;
    for (Precision p : {Precision::kFp32, Precision::kFp16}) {
      t.Add("Relu", "", DeviceKind::kOpenCL, p, {"fake:relu", CreateFakeRelu});
      t.Add("Add", "", DeviceKind::kOpenCL, p, {"fake:add", CreateFakeAdd});
    }
    return t;
  }();
  return table;
}

// y = Relu(Sigmoid(Relu(x + w))): Sigmoid has no device kernel and falls back to the host.
Result<Graph> ChainGraph(int64_t n = 1000) {
  onnx::ModelProto m = testing::NewModel("chain");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {n});
  AddValue(g->mutable_output(), "y", {n});
  testing::AddInitializer(g, "w", {n}, [](int64_t i) { return 0.01 * static_cast<double>(i % 7) - 0.03; });
  AddNode(g, "Add", {"x", "w"}, {"a"}, "add");
  AddNode(g, "Relu", {"a"}, {"r1"}, "relu1");
  AddNode(g, "Sigmoid", {"r1"}, {"s"}, "sigmoid");
  AddNode(g, "Relu", {"s"}, {"y"}, "relu2");
  ASSIGN_OR_RETURN(LoadedOnnxModel loaded, CheckOnnxModel(m, "chain"));
  return ImportModel(loaded);
}

Tensor Ramp(int64_t n) {
  Tensor t(DType::kF32, {n});
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = 0.01f * static_cast<float>(i % 200) - 1.0f;
  return t;
}

struct Recorder final : RunObserver {
  std::vector<std::string> names;
  std::vector<double> ms;
  std::map<std::string, Tensor> values;
  void KernelEnd(size_t, const KernelInfo& k, double elapsed) override {
    names.push_back(k.implementation);
    ms.push_back(elapsed);
  }
  bool WantsOutputs(size_t) override { return true; }
  void KernelOutputs(size_t, const KernelInfo& k, const std::vector<const Tensor*>& outs) override {
    if (!k.outputs.empty() && outs[0] != nullptr) values[k.outputs[0]] = outs[0]->Clone();
  }
};

TEST(DeviceMemoryTest, CopiesAreStepsAndFallbacksRunOnTheHost) {
  auto graph = ChainGraph();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto device = std::make_shared<FakeDevice>();
  CompileOptions options{.kernels = &FakeTable(), .device = device};
  auto model = Compile(*graph, *ParseTarget("opencl:0:fp32"), options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::vector<std::string> impls;
  for (const KernelInfo& k : (*model)->kernels()) impls.push_back(k.implementation);
  const std::vector<std::string> expected = {"copy to opencl:0", "fake:add",         "fake:relu", "copy from opencl:0",
                                             "reference",        "copy to opencl:0", "fake:relu", "copy from opencl:0"};
  EXPECT_EQ(impls, expected);
  EXPECT_EQ((*model)->stats().transfers, 4);
  EXPECT_EQ((*model)->stats().device_kernels, 3);
  ASSERT_EQ((*model)->fallbacks().size(), 1u);
  EXPECT_EQ((*model)->fallbacks()[0].node, "sigmoid");
  EXPECT_EQ(device->uploads, 1);  // the weight, once, at compile time
  EXPECT_GT((*model)->stats().device_arena_bytes, 0u);
  EXPECT_EQ((*model)->stats().device_constant_bytes, 4000u);

  auto ref = Compile(*graph, Target{});
  ASSERT_TRUE(ref.ok());
  const Tensor x = Ramp(1000);
  auto want = (*ref)->Run({{"x", x}});
  Recorder recorder;
  auto got = (*model)->Run({{"x", x}}, &recorder);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(want.ok());
  for (int64_t i = 0; i < 1000; ++i) EXPECT_EQ((*got)[0].data<float>()[i], (*want)[0].data<float>()[i]);
  EXPECT_EQ(recorder.names.size(), 8u);
  EXPECT_EQ(recorder.ms[1], 0.25);  // device steps use the device's timer
  // The observer gets device outputs downloaded to the host.
  ASSERT_TRUE(recorder.values.contains("r1"));
  EXPECT_EQ(recorder.values["r1"].dtype(), DType::kF32);
  EXPECT_FLOAT_EQ(recorder.values["r1"].data<float>()[150], std::max(0.5f + 0.01f * (150 % 7) - 0.03f, 0.0f));
}

// A host kernel standing in for the CPU device's Sigmoid.
class HostSigmoid final : public IKernel {
 public:
  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    for (int64_t i = 0; i < x.numel(); ++i)
      ctx.output(0)->data<float>()[i] = 1.0f / (1.0f + std::exp(-x.data<float>()[i]));
    return Status();
  }
};

TEST(DeviceMemoryTest, RefusedNodesTryTheCpuKernelsBeforeTheReference) {
  auto graph = ChainGraph();
  ASSERT_TRUE(graph.ok());
  KernelTable cpu;
  cpu.Add("Sigmoid", "", DeviceKind::kCpu, Precision::kFp32,
          {"fake-cpu:sigmoid", [](const KernelInit&) -> Result<std::unique_ptr<IKernel>> {
             return std::unique_ptr<IKernel>(std::make_unique<HostSigmoid>());
           }});
  CompileOptions options{.kernels = &FakeTable(), .device = std::make_shared<FakeDevice>(), .fallback_kernels = &cpu};
  auto model = Compile(*graph, *ParseTarget("opencl:0:fp32"), options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const KernelInfo& sigmoid = (*model)->kernels()[4];
  EXPECT_EQ(sigmoid.device, "cpu");
  EXPECT_EQ(sigmoid.implementation, "fake-cpu:sigmoid");
  EXPECT_NE(sigmoid.fallback_reason.find("no opencl:0:fp32 kernel for Sigmoid"), std::string::npos)
      << sigmoid.fallback_reason;
  ASSERT_EQ((*model)->fallbacks().size(), 1u);
  auto out = (*model)->Run({{"x", Ramp(1000)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
}

TEST(DeviceMemoryTest, NoFallbackNamesTheRefusedNode) {
  auto graph = ChainGraph();
  ASSERT_TRUE(graph.ok());
  CompileOptions options{.kernels = &FakeTable(), .device = std::make_shared<FakeDevice>(), .allow_fallback = false};
  auto model = Compile(*graph, *ParseTarget("opencl:0:fp32"), options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(model.status().message().find("sigmoid"), std::string::npos) << model.status().message();
  EXPECT_NE(model.status().message().find("fallback disabled"), std::string::npos);
}

TEST(DeviceMemoryTest, TooLargeIsRefusedBeforeAnyAllocation) {
  auto graph = ChainGraph(1 << 16);
  ASSERT_TRUE(graph.ok());
  auto device = std::make_shared<FakeDevice>(false, 1 << 16);
  CompileOptions options{.kernels = &FakeTable(), .device = device};
  auto model = Compile(*graph, *ParseTarget("opencl:0:fp32"), options);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("does not fit"), std::string::npos);
  EXPECT_EQ(device->allocations, 0);
  EXPECT_EQ(device->uploads, 0);
}

TEST(DeviceMemoryTest, HalfStorageHalvesDeviceBytesAndStaysClose) {
  auto graph = ChainGraph();
  ASSERT_TRUE(graph.ok());
  auto device = std::make_shared<FakeDevice>(true);
  CompileOptions options{.kernels = &FakeTable(), .device = device};
  auto model = Compile(*graph, *ParseTarget("opencl:0:fp16"), options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->stats().device_constant_bytes, 2000u);
  for (const KernelInfo& k : (*model)->kernels()) {
    if (k.implementation.starts_with("fake:")) {
      EXPECT_EQ(k.precision, "fp16");
    }
  }
  auto ref = Compile(*graph, Target{});
  const Tensor x = Ramp(1000);
  auto want = (*ref)->Run({{"x", x}});
  auto got = (*model)->Run({{"x", x}});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  for (int64_t i = 0; i < 1000; ++i) {
    const float w = (*want)[0].data<float>()[i];
    EXPECT_NEAR((*got)[0].data<float>()[i], w, 2e-3f * std::fabs(w) + 1e-3f);
  }
}

}  // namespace
}  // namespace chipfit
