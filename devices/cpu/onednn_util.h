// Shared oneDNN plumbing for the CPU kernels: engine and stream, memory descriptors for chipfit
// tensors, exception → Status conversion, and the checks every kernel's Init makes.
#pragma once

#include <string>
#include <vector>

#include "core/runtime/kernel.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace chipfit::cpu {

// The process-wide CPU engine, and a stream for the calling thread (kernels run on the thread that
// calls CompiledModel::Run; oneDNN parallelises inside a primitive with OpenMP).
dnnl::engine& Engine();
dnnl::stream& Stream();

// oneDNN's data type for a chipfit dtype; data_type::undef when oneDNN has none.
dnnl::memory::data_type ToDnnl(DType dtype);
dnnl::memory::dims ToDims(const Shape& shape);

// A descriptor for a tensor of this shape and dtype in this order (channels-last only for rank 4).
dnnl::memory::desc Describe(const Shape& shape, dnnl::memory::data_type type, Layout layout);
dnnl::memory::desc Describe(const Shape& shape, DType dtype, Layout layout);

// Unsupported unless every listed input is present with a static shape ("shape known only at run
// time"), and the dtype is f32 (the only activation dtype the fp32/int8 kernels take).
Status RequireStaticF32(const KernelInit& init, std::initializer_list<size_t> inputs);

// Runs `body`, turning a dnnl::error into a Status that names the node and oneDNN's status.
template <typename Body>
Status Guard(const Node& node, const char* what, Body&& body) {
  try {
    body();
    return Status();
  } catch (const dnnl::error& e) {
    return Unsupported(std::string(what) + ": oneDNN refused (" + e.what() + ")");
  } catch (const std::bad_alloc&) {
    return Internal(node.Describe() + ": out of memory in " + what);
  }
}

// True when oneDNN's int8 kernels have VNNI (vpdpbusd) here. Without it they multiply u8·s8 pairs
// with vpmaddubsw, whose 16-bit sums saturate when weights use the full int8 range.
bool HasVnni();

// Per-tensor quantisation of a calibrated activation for oneDNN's int8 kernels: real = scale · (q − zero_point).
struct ActivationQuant {
  dnnl::memory::data_type type = dnnl::memory::data_type::u8;
  float scale = 1.0f;
  int32_t zero_point = 0;  // u8 only
};
// Symmetric: u8 when the range never goes negative (after Relu, Clip …), else s8.
ActivationQuant ChooseActivationQuant(const QuantParams& p);
// Asymmetric u8 with a zero point: twice the resolution of s8 for a lopsided range (hard-swish
// outputs span [−0.375, 6]); kernels fall back to ChooseActivationQuant where oneDNN refuses
// source zero points.
ActivationQuant AsymmetricU8(const QuantParams& p);

// oneDNN's reference implementations are orders of magnitude slower than its JIT ones; a kernel
// that only got one refuses with this reason, so placement moves on.
bool IsReferenceImpl(const std::string& impl_info);

// Holds a primitive with its argument map; Run only swaps data handles.
class PrimitiveCall {
 public:
  PrimitiveCall() = default;
  PrimitiveCall(dnnl::primitive primitive, std::unordered_map<int, dnnl::memory> args)
      : primitive_(std::move(primitive)), args_(std::move(args)) {}
  void SetHandle(int arg, const void* data) { args_.at(arg).set_data_handle(const_cast<void*>(data)); }
  void Execute() {
    primitive_.execute(Stream(), args_);
    Stream().wait();
  }
  dnnl::memory& arg(int id) { return args_.at(id); }
  // oneDNN's name for the implementation it chose, with its instruction set ("brg:avx512_core_amx");
  // empty before a primitive is set.
  std::string Impl() const;

  // The common case: a primitive with one source and one destination (eltwise, softmax, reduction,
  // pooling, reorder), bound to new data on each run.
  static PrimitiveCall SrcDst(dnnl::primitive primitive, const dnnl::memory::desc& src, const dnnl::memory::desc& dst,
                              int src_arg = DNNL_ARG_SRC, int dst_arg = DNNL_ARG_DST) {
    std::unordered_map<int, dnnl::memory> args;
    args[src_arg] = dnnl::memory(src, Engine(), DNNL_MEMORY_NONE);
    args[dst_arg] = dnnl::memory(dst, Engine(), DNNL_MEMORY_NONE);
    PrimitiveCall call(std::move(primitive), std::move(args));
    call.src_arg_ = src_arg;
    call.dst_arg_ = dst_arg;
    return call;
  }
  // A reorder from data given at each run (`Refill`) in the order `from` into the memory `to`, which keeps
  // it between runs: weights computed at run time, reordered into the primitive's layout before each run.
  static PrimitiveCall ReorderInto(const dnnl::memory::desc& from, const dnnl::memory& to) {
    std::unordered_map<int, dnnl::memory> args;
    args[DNNL_ARG_FROM] = dnnl::memory(from, Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_TO] = to;
    return {dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), from, Engine(), to.get_desc())), std::move(args)};
  }
  // Runs a ReorderInto call on `from`.
  void Refill(const void* from) {
    SetHandle(DNNL_ARG_FROM, from);
    Execute();
  }
  // Runs a SrcDst call on `src` → `dst`.
  void Run(const void* src, void* dst) {
    SetHandle(src_arg_, src);
    SetHandle(dst_arg_, dst);
    Execute();
  }

 private:
  dnnl::primitive primitive_;
  std::unordered_map<int, dnnl::memory> args_;
  int src_arg_ = DNNL_ARG_SRC;
  int dst_arg_ = DNNL_ARG_DST;
};

// A chain of eltwise post-ops in which no algorithm appears twice: oneDNN 2.7's JIT post-op injectors
// give wrong results for a chain that repeats one (clip then clip, linear · clip · linear; measured
// on FusedConv with an absorbed clamp or scale). Adjacent linears and clips merge, and a linear after
// a clip moves before it (s · clip(u, lo, hi) + t = clip(s · u + t, …) with the bounds mapped and, for
// s < 0, swapped), so a FusedConv's activation → clamp → scale-and-shift needs each algorithm once.
class EltwiseChain {
 public:
  // An ONNX activation by name (FusedConv's `activation`, or a plain activation node); Unsupported
  // names one oneDNN cannot apply.
  Status AddActivation(const std::string& activation, const std::vector<float>& params);
  void AddClip(float lo, float hi);
  void AddLinear(float scale, float shift);
  void AppendTo(dnnl::post_ops& ops) const;

 private:
  struct Op {
    dnnl::algorithm alg;
    float alpha, beta;
  };
  void Add(dnnl::algorithm alg, float alpha, float beta);
  std::vector<Op> ops_;
};

}  // namespace chipfit::cpu
