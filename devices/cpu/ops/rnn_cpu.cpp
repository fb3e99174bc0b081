// LSTM, GRU (both reset placements) and RNN on oneDNN's RNN primitives, fp32 and bf16 (tensors stay f32
// outside the kernel); weights repacked into oneDNN's gate order once at Init when constant.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <unordered_map>
#include <vector>

#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

enum class Cell { kRnn, kGru, kLstm };

// ONNX input and output positions.
constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitH = 5, kInitC = 6, kP = 7;
constexpr size_t kY = 0, kYh = 1, kYc = 2;

int64_t Gates(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }

// oneDNN gate g holds ONNX gate kGateMap[g]: oneDNN orders LSTM gates i, f, c, o where ONNX has
// i, o, f, c; GRU is z(u), r, h in both; peepholes are i, f, o in oneDNN and i, o, f in ONNX.
constexpr std::array<int64_t, 4> kLstmGateMap = {0, 2, 3, 1};
constexpr std::array<int64_t, 3> kPeepholeMap = {0, 2, 1};

bool HasAvx512Core() {
  const auto isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni ||
         isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

struct RnnConfig {
  Cell cell = Cell::kLstm;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool reverse = false;
  bool batch_major = false;                                    // layout 1
  bool lbr = false;                                            // GRU linear_before_reset
  dnnl::algorithm activation = dnnl::algorithm::eltwise_tanh;  // RNN only
  bool has_bias = false, has_peephole = false, has_init_h = false, has_init_c = false;
  bool want_y = false, want_yh = false, want_yc = false;
};

bool Present(const KernelInit& init, size_t i) {
  return i < init.inputs.size() && init.inputs[i] != nullptr && init.node.HasInput(i);
}

// What oneDNN's cells compute is the ONNX default; everything else is refused with the reason.
Status CheckActivations(const Node& node, Cell cell, int64_t dirs, RnnConfig& c) {
  auto it = node.attributes.find("activations");
  if (it == node.attributes.end() || it->second.strings.empty()) return Status();
  const std::vector<std::string>& names = it->second.strings;
  const std::vector<std::string> defaults = cell == Cell::kRnn   ? std::vector<std::string>{"tanh"}
                                            : cell == Cell::kGru ? std::vector<std::string>{"sigmoid", "tanh"}
                                                                 : std::vector<std::string>{"sigmoid", "tanh", "tanh"};
  if (names.size() != defaults.size() * static_cast<size_t>(dirs)) return Unsupported("malformed activations list");
  if (cell == Cell::kRnn) {
    // One function for both directions: Relu (slope 0), Tanh or Sigmoid.
    const std::string f = Lower(names[0]);
    if (dirs == 2 && Lower(names[1]) != f) return Unsupported("different activations per direction");
    if (f == "relu") {
      c.activation = dnnl::algorithm::eltwise_relu;
    } else if (f == "sigmoid") {
      c.activation = dnnl::algorithm::eltwise_logistic;
    } else if (f != "tanh") {
      return Unsupported("activation " + names[0] + " (oneDNN's RNN cell has Relu, Tanh and Sigmoid)");
    }
    return Status();
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (Lower(names[i]) != defaults[i % defaults.size()]) {
      return Unsupported("activation " + names[i] + " (oneDNN's " + node.op_type +
                         " cell has the default functions only)");
    }
  }
  return Status();
}

Result<RnnConfig> ReadConfig(const KernelInit& init, Cell cell) {
  const Node& node = init.node;
  RnnConfig c;
  c.cell = cell;
  RETURN_IF_ERROR(RequireStaticF32(init, {kX, kW, kR}));
  c.has_bias = Present(init, kB);
  c.has_init_h = Present(init, kInitH);
  c.has_init_c = cell == Cell::kLstm && Present(init, kInitC);
  c.has_peephole = cell == Cell::kLstm && Present(init, kP);
  if (c.has_bias) RETURN_IF_ERROR(RequireStaticF32(init, {kB}));
  if (c.has_init_h) RETURN_IF_ERROR(RequireStaticF32(init, {kInitH}));
  if (c.has_init_c) RETURN_IF_ERROR(RequireStaticF32(init, {kInitC}));
  if (c.has_peephole) RETURN_IF_ERROR(RequireStaticF32(init, {kP}));

  const std::string direction = node.GetString("direction", "forward");
  c.dirs = direction == "bidirectional" ? 2 : 1;
  c.reverse = direction == "reverse";
  c.batch_major = init.opset >= 14 && node.GetInt("layout", 0) == 1;
  if (node.Has("clip")) return Unsupported("clip (oneDNN's RNN cells do not clip)");
  if (cell == Cell::kLstm && node.GetInt("input_forget", 0) != 0) {
    return Unsupported("input_forget (oneDNN's LSTM cell has no coupled gates)");
  }
  c.lbr = cell == Cell::kGru && node.GetInt("linear_before_reset", 0) != 0;
  RETURN_IF_ERROR(CheckActivations(node, cell, c.dirs, c));

  const Shape& x = init.inputs[kX]->shape;
  const Shape& w = init.inputs[kW]->shape;
  const Shape& r = init.inputs[kR]->shape;
  if (x.size() != 3 || w.size() != 3 || r.size() != 3) return Unsupported("X, W or R is not 3-D");
  c.seq = x[c.batch_major ? 1 : 0];
  c.batch = x[c.batch_major ? 0 : 1];
  c.input = x[2];
  c.hidden = r[2];
  const int64_t rows = Gates(cell) * c.hidden;
  if (node.GetInt("hidden_size", c.hidden) != c.hidden || w != Shape{c.dirs, rows, c.input} ||
      r != Shape{c.dirs, rows, c.hidden}) {
    return Unsupported("W or R does not match hidden_size and direction (the reference reports it)");
  }

  if (Present(init, kSeqLens)) {
    const Tensor* lens = init.inputs[kSeqLens]->value;
    if (lens == nullptr)
      return Unsupported("sequence_lens known only at run time (oneDNN runs every sequence in full)");
    for (int64_t b = 0; b < lens->numel(); ++b) {
      if (lens->GetAsInt64(b) != c.seq) return Unsupported("sequences shorter than seq_length (sequence_lens)");
    }
  }
  c.want_y = !node.outputs.empty() && !node.outputs[kY].empty();
  c.want_yh = node.outputs.size() > kYh && !node.outputs[kYh].empty();
  c.want_yc = cell == Cell::kLstm && node.outputs.size() > kYc && !node.outputs[kYc].empty();
  return c;
}

// One primitive argument and how chipfit's f32 tensor gets to it: bound directly when the
// primitive takes the tensor as it is, else through a reorder (dtype, or the order of dims).
struct Staged {
  int arg = 0;
  bool direct = true;
  memory prim;       // the primitive's memory (owns a buffer unless direct)
  memory user;       // the chipfit tensor, handle set per run
  memory prim_view;  // prim's buffer seen with user's dims, for the reorder
  dnnl::reorder copy;
};

class RnnKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, Cell cell, bool bf16) {
    ASSIGN_OR_RETURN(RnnConfig c, ReadConfig(init, cell));
    auto kernel = std::unique_ptr<RnnKernel>(new RnnKernel());
    kernel->c_ = c;
    RETURN_IF_ERROR(Guard(init.node, "RNN", [&] { kernel->Build(bf16); }));
    // oneDNN names its gemm-based RNN driver "ref" whatever the gemm; only a missing JIT gemm makes
    // it slow, which the bf16 gemm lacks below AVX-512.
    if (bf16 && IsReferenceImpl(kernel->impl_) && !HasAvx512Core()) {
      return Unsupported("bf16 RNN: oneDNN has no bf16 JIT gemm below AVX-512");
    }
    // Constant weights are repacked once; run-time ones before each run.
    const bool constant = init.inputs[kW]->value != nullptr && init.inputs[kR]->value != nullptr &&
                          (!c.has_bias || init.inputs[kB]->value != nullptr) &&
                          (!c.has_peephole || init.inputs[kP]->value != nullptr);
    if (constant) {
      RETURN_IF_ERROR(Guard(init.node, "RNN weights", [&] {
        kernel->PackWeights(init.inputs[kW]->value->data<float>(), init.inputs[kR]->value->data<float>(),
                            c.has_bias ? init.inputs[kB]->value->data<float>() : nullptr,
                            c.has_peephole ? init.inputs[kP]->value->data<float>() : nullptr);
      }));
      kernel->packed_ = true;
    }
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const RnnConfig& c = c_;
    return Guard(ctx.node(), "RNN", [&] {
      if (!packed_) {
        auto data = [&](size_t i) { return ctx.input(i) != nullptr ? ctx.input(i)->data<float>() : nullptr; };
        PackWeights(data(kW), data(kR), c.has_bias ? data(kB) : nullptr, c.has_peephole ? data(kP) : nullptr);
      }
      dnnl::stream& s = Stream();
      auto bind_in = [&](Staged& st, const Tensor* t) {
        st.user.set_data_handle(const_cast<float*>(t->data<float>()));
        if (st.direct) {
          args_[st.arg] = st.user;
        } else {
          st.copy.execute(s, st.user, st.prim_view);
        }
      };
      bind_in(src_layer_, ctx.input(kX));
      if (c.has_init_h) bind_in(src_iter_, ctx.input(kInitH));
      if (c.has_init_c) bind_in(src_iter_c_, ctx.input(kInitC));
      auto bind_out = [&](Staged& st, Tensor* t) {
        if (t != nullptr) st.user.set_data_handle(t->data<float>());
        args_[st.arg] = st.direct && t != nullptr ? st.user : st.prim;
      };
      bind_out(dst_layer_, c.want_y ? ctx.output(kY) : nullptr);
      if (c.want_yh) bind_out(dst_iter_, ctx.output(kYh));
      if (c.want_yc) bind_out(dst_iter_c_, ctx.output(kYc));
      primitive_.execute(s, args_);
      const std::pair<Staged*, bool> outputs[] = {
          {&dst_layer_, c.want_y}, {&dst_iter_, c.want_yh}, {&dst_iter_c_, c.want_yc}};
      for (auto [st, wanted] : outputs) {
        if (wanted && !st->direct) st->copy.execute(s, st->prim_view, st->user);
      }
      s.wait();
    });
  }

 private:
  RnnKernel() = default;

  // Descriptors, the primitive and the staging of each argument.
  void Build(bool bf16) {
    const RnnConfig& c = c_;
    const dt data_type = bf16 ? dt::bf16 : dt::f32;
    const int64_t g = Gates(c.cell), d = c.dirs, n = c.batch, h = c.hidden;
    const int64_t bias_gates = c.lbr ? 4 : g;
    const tag seq_tag = c.batch_major ? tag::ntc : tag::tnc;
    const memory::desc src_layer_md({c.seq, n, c.input}, data_type, seq_tag);
    const memory::desc iter_md({1, d, n, h}, data_type, tag::ldnc);
    const memory::desc iter_c_md({1, d, n, h}, dt::f32, tag::ldnc);
    const memory::desc wl_md({1, d, c.input, g, h}, data_type, tag::any);
    const memory::desc wi_md({1, d, h, g, h}, data_type, tag::any);
    const memory::desc bias_md({1, d, bias_gates, h}, dt::f32, tag::ldgo);
    const memory::desc peep_md({1, d, 3, h}, dt::f32, tag::ldgo);
    const memory::desc dst_layer_md({c.seq, n, d * h}, data_type, seq_tag);
    const memory::desc none;
    const auto opt = [&](bool present, const memory::desc& md) { return present ? md : none; };
    const auto dir = d == 2      ? dnnl::rnn_direction::bidirectional_concat
                     : c.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                 : dnnl::rnn_direction::unidirectional_left2right;
    const auto prop = dnnl::prop_kind::forward_inference;

    const bool lstm = c.cell == Cell::kLstm;
    const bool src_states = c.has_init_h || c.has_init_c;
    const bool dst_states = c.want_yh || c.want_yc;
    dnnl::primitive_desc_base pd;
    switch (c.cell) {
      case Cell::kLstm: {
        // oneDNN takes both states or neither: the one ONNX omits becomes zeros or a scratch buffer.
        dnnl::lstm_forward::desc desc(prop, dir, src_layer_md, opt(src_states, iter_md), opt(src_states, iter_c_md),
                                      wl_md, wi_md, opt(c.has_peephole, peep_md), none, bias_md, dst_layer_md,
                                      opt(dst_states, iter_md), opt(dst_states, iter_c_md));
        dnnl::lstm_forward::primitive_desc p(desc, Engine());
        primitive_ = dnnl::lstm_forward(p);
        pd = p;
        break;
      }
      case Cell::kGru: {
        if (c.lbr) {
          dnnl::lbr_gru_forward::desc desc(prop, dir, src_layer_md, opt(c.has_init_h, iter_md), wl_md, wi_md, bias_md,
                                           dst_layer_md, opt(c.want_yh, iter_md));
          dnnl::lbr_gru_forward::primitive_desc p(desc, Engine());
          primitive_ = dnnl::lbr_gru_forward(p);
          pd = p;
        } else {
          dnnl::gru_forward::desc desc(prop, dir, src_layer_md, opt(c.has_init_h, iter_md), wl_md, wi_md, bias_md,
                                       dst_layer_md, opt(c.want_yh, iter_md));
          dnnl::gru_forward::primitive_desc p(desc, Engine());
          primitive_ = dnnl::gru_forward(p);
          pd = p;
        }
        break;
      }
      case Cell::kRnn: {
        dnnl::vanilla_rnn_forward::desc desc(prop, c.activation, dir, src_layer_md, opt(c.has_init_h, iter_md), wl_md,
                                             wi_md, bias_md, dst_layer_md, opt(c.want_yh, iter_md));
        dnnl::vanilla_rnn_forward::primitive_desc p(desc, Engine());
        primitive_ = dnnl::vanilla_rnn_forward(p);
        pd = p;
        break;
      }
    }
    impl_ = pd.impl_info_str();
    auto query = [&](int arg) { return pd.query_md(dnnl::query::exec_arg_md, arg); };

    // ONNX X and Y match oneDNN's tnc/ntc except Y of a bidirectional layout-0 node: [T, D, N, H]
    // where oneDNN writes [T, N, D·H]. States are ldnc for layout 0; layout 1 puts batch first.
    const memory::desc x_user({c.seq, n, c.input}, dt::f32, seq_tag);
    src_layer_ = Stage(DNNL_ARG_SRC_LAYER, query(DNNL_ARG_SRC_LAYER), x_user, {}, true);
    const memory::desc state_user = c.batch_major && d == 2
                                        ? memory::desc({1, d, n, h}, dt::f32, {d * n * h, h, d * h, 1})
                                        : memory::desc({1, d, n, h}, dt::f32, tag::ldnc);
    if (c.has_init_h) {
      src_iter_ = Stage(DNNL_ARG_SRC_ITER, query(DNNL_ARG_SRC_ITER), state_user, {}, true);
    } else if (lstm && src_states) {
      src_iter_ = Scratch(DNNL_ARG_SRC_ITER, query(DNNL_ARG_SRC_ITER));
    }
    if (c.has_init_c) {
      src_iter_c_ = Stage(DNNL_ARG_SRC_ITER_C, query(DNNL_ARG_SRC_ITER_C), state_user, {}, true);
    } else if (lstm && src_states) {
      src_iter_c_ = Scratch(DNNL_ARG_SRC_ITER_C, query(DNNL_ARG_SRC_ITER_C));
    }
    if (!c.want_y) {
      dst_layer_ = Scratch(DNNL_ARG_DST_LAYER, query(DNNL_ARG_DST_LAYER));  // oneDNN always writes it
    } else if (!c.batch_major && d == 2) {
      const memory::desc y_user({c.seq, n, d, h}, dt::f32, {d * n * h, h, n * h, 1});
      const memory::desc y_view({c.seq, n, d, h}, query(DNNL_ARG_DST_LAYER).data_type(), tag::abcd);
      dst_layer_ = Stage(DNNL_ARG_DST_LAYER, query(DNNL_ARG_DST_LAYER), y_user, y_view, false);
    } else {
      const memory::desc y_user({c.seq, n, d * h}, dt::f32, seq_tag);
      dst_layer_ = Stage(DNNL_ARG_DST_LAYER, query(DNNL_ARG_DST_LAYER), y_user, {}, false);
    }
    if (c.want_yh) {
      dst_iter_ = Stage(DNNL_ARG_DST_ITER, query(DNNL_ARG_DST_ITER), state_user, {}, false);
    } else if (lstm && dst_states) {
      dst_iter_ = Scratch(DNNL_ARG_DST_ITER, query(DNNL_ARG_DST_ITER));
    }
    if (c.want_yc) {
      dst_iter_c_ = Stage(DNNL_ARG_DST_ITER_C, query(DNNL_ARG_DST_ITER_C), state_user, {}, false);
    } else if (lstm && dst_states) {
      dst_iter_c_ = Scratch(DNNL_ARG_DST_ITER_C, query(DNNL_ARG_DST_ITER_C));
    }

    weights_layer_ = memory(query(DNNL_ARG_WEIGHTS_LAYER), Engine());
    weights_iter_ = memory(query(DNNL_ARG_WEIGHTS_ITER), Engine());
    bias_ = memory(bias_md, Engine());
    args_[DNNL_ARG_WEIGHTS_LAYER] = weights_layer_;
    args_[DNNL_ARG_WEIGHTS_ITER] = weights_iter_;
    args_[DNNL_ARG_BIAS] = bias_;
    if (c.has_peephole) {
      peephole_ = memory(peep_md, Engine());
      args_[DNNL_ARG_WEIGHTS_PEEPHOLE] = peephole_;
    }
    for (Staged* st : {&src_layer_, &src_iter_, &src_iter_c_, &dst_layer_, &dst_iter_, &dst_iter_c_}) {
      if (st->prim) args_[st->arg] = st->prim;
    }
  }

  // A buffer of the kernel's own, zeros, for an argument oneDNN needs and ONNX omits.
  static Staged Scratch(int arg, const memory::desc& md) {
    Staged st;
    st.arg = arg;
    st.direct = false;
    st.prim = memory(md, Engine());
    std::fill_n(static_cast<char*>(st.prim.get_data_handle()), md.get_size(), 0);
    return st;
  }

  // `view` (optional) reads the primitive's buffer with the user's dims when they differ.
  static Staged Stage(int arg, const memory::desc& prim_md, const memory::desc& user_md, const memory::desc& view,
                      bool input) {
    Staged st;
    st.arg = arg;
    st.user = memory(user_md, Engine(), DNNL_MEMORY_NONE);
    st.direct = prim_md == user_md;
    if (st.direct) {
      st.prim = st.user;
      return st;
    }
    st.prim = memory(prim_md, Engine());
    st.prim_view = view.is_zero() ? st.prim : memory(view, Engine(), st.prim.get_data_handle());
    st.copy = input ? dnnl::reorder(st.user, st.prim_view) : dnnl::reorder(st.prim_view, st.user);
    return st;
  }

  // ONNX W [D, G·H, I] (rows gate by gate in ONNX order) → oneDNN ldigo, then into the primitive's
  // format; the biases of W and R add up except the one LBR-GRU keeps apart (R's h-gate bias).
  void PackWeights(const float* w, const float* r, const float* b, const float* p) {
    const RnnConfig& c = c_;
    const int64_t g = Gates(c.cell), d = c.dirs, h = c.hidden;
    auto onnx_gate = [&](int64_t gate) {
      return c.cell == Cell::kLstm ? kLstmGateMap[static_cast<size_t>(gate)] : gate;
    };
    auto pack = [&](const float* src, int64_t in, memory& dst) {
      std::vector<float> ldigo(static_cast<size_t>(d * in * g * h));
      for (int64_t dd = 0; dd < d; ++dd) {
        for (int64_t i = 0; i < in; ++i) {
          for (int64_t gate = 0; gate < g; ++gate) {
            const float* row = src + (dd * g + onnx_gate(gate)) * h * in;
            float* out = ldigo.data() + ((dd * in + i) * g + gate) * h;
            for (int64_t o = 0; o < h; ++o) out[o] = row[o * in + i];
          }
        }
      }
      memory user(memory::desc({1, d, in, g, h}, dt::f32, tag::ldigo), Engine(), ldigo.data());
      dnnl::reorder(user, dst).execute(Stream(), user, dst);
      Stream().wait();
    };
    pack(w, c.input, weights_layer_);
    pack(r, h, weights_iter_);

    const int64_t bias_gates = c.lbr ? 4 : g;
    auto* bias = static_cast<float*>(bias_.get_data_handle());
    std::fill(bias, bias + d * bias_gates * h, 0.0f);
    if (b != nullptr) {
      for (int64_t dd = 0; dd < d; ++dd) {
        const float* wb = b + dd * 2 * g * h;
        const float* rb = wb + g * h;
        for (int64_t gate = 0; gate < bias_gates; ++gate) {
          float* out = bias + (dd * bias_gates + gate) * h;
          for (int64_t o = 0; o < h; ++o) {
            if (c.lbr && gate == 3) {
              out[o] = rb[2 * h + o];
            } else if (c.lbr && gate == 2) {
              out[o] = wb[2 * h + o];
            } else {
              const int64_t og = onnx_gate(gate);
              out[o] = wb[og * h + o] + rb[og * h + o];
            }
          }
        }
      }
    }
    if (p != nullptr) {
      auto* peep = static_cast<float*>(peephole_.get_data_handle());
      for (int64_t dd = 0; dd < d; ++dd) {
        for (int64_t gate = 0; gate < 3; ++gate) {
          std::copy_n(p + (dd * 3 + kPeepholeMap[static_cast<size_t>(gate)]) * h, h, peep + (dd * 3 + gate) * h);
        }
      }
    }
  }

  RnnConfig c_;
  dnnl::primitive primitive_;
  std::string impl_;
  std::unordered_map<int, memory> args_;
  Staged src_layer_, src_iter_, src_iter_c_, dst_layer_, dst_iter_, dst_iter_c_;
  memory weights_layer_, weights_iter_, bias_, peephole_;
  bool packed_ = false;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateLstmF32(const KernelInit& init) {
  return RnnKernel::Create(init, Cell::kLstm, false);
}
Result<std::unique_ptr<IKernel>> CreateGruF32(const KernelInit& init) {
  return RnnKernel::Create(init, Cell::kGru, false);
}
Result<std::unique_ptr<IKernel>> CreateRnnF32(const KernelInit& init) {
  return RnnKernel::Create(init, Cell::kRnn, false);
}
Result<std::unique_ptr<IKernel>> CreateLstmBf16(const KernelInit& init) {
  return RnnKernel::Create(init, Cell::kLstm, true);
}
Result<std::unique_ptr<IKernel>> CreateGruBf16(const KernelInit& init) {
  return RnnKernel::Create(init, Cell::kGru, true);
}
Result<std::unique_ptr<IKernel>> CreateRnnBf16(const KernelInit& init) {
  return RnnKernel::Create(init, Cell::kRnn, true);
}

}  // namespace chipfit::cpu
