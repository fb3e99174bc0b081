// Einsum in f32 and f64 on the CPU: the forms that are a permutation, a sum over labels of one operand
// ("ij->i") or a batched matrix product ("ij->ji", "bhid,bhjd->bhij", "bij,bjk->bik", "i,i"), the ones
// transformer exports write. Each operand is permuted into [batch, rows, contracted] / [batch, contracted,
// columns] order, multiplied with an OpenMP loop that vectorises along the columns, and the product
// permuted into the output's order. Diagonals (a label twice in one term), dims of 1 broadcasting against
// larger ones, a label summed within one of two operands and three or more operands stay on the
// reference, which says so.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/reference/einsum_plan.h"
#include "core/reference/ref_util.h"
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {
namespace {

bool Has(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// `src` (row-major, one label per dim) copied into the order of `to` (every label of src once).
template <typename T>
void Permute(const T* src, const std::vector<int>& labels, const Shape& dims, const std::vector<int>& to, T* dst) {
  const std::vector<int64_t> src_strides = Strides(dims);
  Shape out_dims;
  std::vector<int64_t> strides;
  for (int label : to) {
    const auto d = static_cast<size_t>(std::find(labels.begin(), labels.end(), label) - labels.begin());
    out_dims.push_back(dims[d]);
    strides.push_back(src_strides[d]);
  }
  const int64_t n = NumElements(out_dims);
  if (n == 0) return;
  if (labels == to) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  const int64_t last = out_dims.empty() ? 1 : out_dims.back();
  const int64_t last_stride = strides.empty() ? 0 : strides.back();
  const int64_t rows = n / last;
#pragma omp parallel for schedule(static) if (n >= 65536)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t from = 0;
    for (int64_t rest = row, d = static_cast<int64_t>(out_dims.size()) - 2; d >= 0; --d) {
      const auto du = static_cast<size_t>(d);
      from += rest % out_dims[du] * strides[du];
      rest /= out_dims[du];
    }
    T* out = dst + row * last;
    for (int64_t i = 0; i < last; ++i) out[i] = src[from + i * last_stride];
  }
}

// The equation as a batched product: C[batch, m, n] = Σ_k A[batch, m, k] · B[batch, k, n].
struct ProductPlan {
  std::vector<int> batch, m, n, k;  // labels
  int64_t batch_size = 1, m_size = 1, n_size = 1, k_size = 1;
};

// Why `plan` is not a permutation, a sum over some labels of one operand or a batched product (empty
// when it is one of them).
std::string NotAProduct(const EinsumPlan& plan, const std::vector<Shape>& shapes) {
  if (plan.inputs.size() > 2) return "three or more operands";
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const std::vector<int>& labels = plan.inputs[i];
    for (size_t d = 0; d < labels.size(); ++d) {
      if (std::count(labels.begin(), labels.end(), labels[d]) > 1) return "a diagonal (a label twice in one term)";
      if (shapes[i][d] != plan.sizes[static_cast<size_t>(labels[d])]) return "a dim of 1 broadcasting";
      const bool elsewhere =
          Has(plan.output, labels[d]) || (plan.inputs.size() == 2 && Has(plan.inputs[1 - i], labels[d]));
      if (!elsewhere && plan.inputs.size() > 1) return "a label summed within one operand";
    }
  }
  return "";
}

ProductPlan PlanProduct(const EinsumPlan& plan) {
  ProductPlan p;
  const std::vector<int>& a = plan.inputs[0];
  const std::vector<int> none;
  const std::vector<int>& b = plan.inputs.size() > 1 ? plan.inputs[1] : none;
  auto size = [&](int label) { return plan.sizes[static_cast<size_t>(label)]; };
  for (int label : plan.output) {
    if (Has(a, label) && Has(b, label)) {
      p.batch.push_back(label);
      p.batch_size *= size(label);
    }
  }
  for (int label : a) {
    if (Has(p.batch, label)) continue;
    if (Has(b, label)) {
      p.k.push_back(label);
      p.k_size *= size(label);
    } else {
      p.m.push_back(label);
      p.m_size *= size(label);
    }
  }
  for (int label : b) {
    if (!Has(a, label)) {
      p.n.push_back(label);
      p.n_size *= size(label);
    }
  }
  return p;
}

std::vector<int> Concat(std::initializer_list<const std::vector<int>*> lists) {
  std::vector<int> out;
  for (const std::vector<int>* l : lists) out.insert(out.end(), l->begin(), l->end());
  return out;
}

Shape SizesOf(const std::vector<int>& labels, const EinsumPlan& plan) {
  Shape dims;
  for (int label : labels) dims.push_back(plan.sizes[static_cast<size_t>(label)]);
  return dims;
}

template <typename T>
class EinsumKernel final : public IKernel {
 public:
  Status Run(KernelContext& ctx) override {
    std::vector<Shape> shapes;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) shapes.push_back(ctx.input(i)->shape());
    ASSIGN_OR_RETURN(const EinsumPlan plan, PlanEinsum(ctx.node(), shapes));
    if (const std::string why = NotAProduct(plan, shapes); !why.empty()) {
      return ctx.Error("the shapes given make the equation " + why + ", which this kernel does not compute");
    }
    T* y = ctx.output(0)->data<T>();
    const int64_t total = ctx.output(0)->numel();
    if (plan.inputs.size() == 1) {
      std::vector<int> summed;
      for (int label : plan.inputs[0]) {
        if (!Has(plan.output, label)) summed.push_back(label);
      }
      if (summed.empty()) {
        Permute(ctx.input(0)->data<T>(), plan.inputs[0], shapes[0], plan.output, y);
        return Status();
      }
      // The output's labels first, the summed ones last: each output value sums one contiguous row.
      const std::vector<int> order = Concat({&plan.output, &summed});
      const int64_t row = NumElements(SizesOf(summed, plan));
      a_.resize(static_cast<size_t>(total * row));
      Permute(ctx.input(0)->data<T>(), plan.inputs[0], shapes[0], order, a_.data());
      const T* a = a_.data();
#pragma omp parallel for schedule(static) if (total * row >= 65536)
      for (int64_t i = 0; i < total; ++i) {
        T sum = 0;
        for (int64_t j = 0; j < row; ++j) sum += a[i * row + j];
        y[i] = sum;
      }
      return Status();
    }
    const ProductPlan p = PlanProduct(plan);
    const std::vector<int> a_order = Concat({&p.batch, &p.m, &p.k});
    const std::vector<int> b_order = Concat({&p.batch, &p.k, &p.n});
    const std::vector<int> c_order = Concat({&p.batch, &p.m, &p.n});
    a_.resize(static_cast<size_t>(p.batch_size * p.m_size * p.k_size));
    b_.resize(static_cast<size_t>(p.batch_size * p.k_size * p.n_size));
    Permute(ctx.input(0)->data<T>(), plan.inputs[0], shapes[0], a_order, a_.data());
    Permute(ctx.input(1)->data<T>(), plan.inputs[1], shapes[1], b_order, b_.data());
    const bool direct = c_order == plan.output;
    c_.resize(direct ? 0 : static_cast<size_t>(total));
    T* c = direct ? y : c_.data();
    const int64_t m = p.m_size, n = p.n_size, k = p.k_size;
    const T* a = a_.data();
    const T* b = b_.data();
#pragma omp parallel for schedule(static) if (p.batch_size * m * n * k >= 32768)
    for (int64_t row = 0; row < p.batch_size * m; ++row) {
      const int64_t batch = row / m;
      T* out = c + row * n;
      std::fill(out, out + n, T(0));
      const T* a_row = a + row * k;
      const T* b_batch = b + batch * k * n;
      for (int64_t kk = 0; kk < k; ++kk) {
        const T v = a_row[kk];
        const T* b_row = b_batch + kk * n;
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) out[j] += v * b_row[j];
      }
    }
    if (!direct) Permute(c_.data(), c_order, SizesOf(c_order, plan), plan.output, y);
    return Status();
  }

 private:
  std::vector<T> a_, b_, c_;  // the operands and the product in product order
};

Result<std::unique_ptr<IKernel>> CreateEinsum(const KernelInit& init) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < init.inputs.size(); ++i) {
    const ValueInfo* in = init.inputs[i];
    if (in == nullptr) return Unsupported("input " + std::to_string(i) + " is missing");
    if ((in->dtype != DType::kF32 && in->dtype != DType::kF64) || in->dtype != init.inputs[0]->dtype) {
      return Unsupported(std::string(DTypeName(in->dtype)) + " inputs (f32 or f64 ones, all alike, run here)");
    }
    if (std::any_of(in->shape.begin(), in->shape.end(), [](int64_t d) { return d < 0; })) {
      return Unsupported("shapes known only at run time (the equation's form depends on them)");
    }
    shapes.push_back(in->shape);
  }
  Result<EinsumPlan> plan = PlanEinsum(init.node, shapes);
  if (!plan.ok()) return Unsupported(plan.status().message() + " (the reference reports it)");
  if (const std::string why = NotAProduct(*plan, shapes); !why.empty()) {
    return Unsupported("the equation has " + why +
                       ": not a permutation, a sum within one operand or a batched product");
  }
  if (init.inputs[0]->dtype == DType::kF64) return std::unique_ptr<IKernel>(std::make_unique<EinsumKernel<double>>());
  return std::unique_ptr<IKernel>(std::make_unique<EinsumKernel<float>>());
}

}  // namespace

void AddEinsumKernels(KernelTable& t) {
  t.Add("Einsum", "", DeviceKind::kCpu, Precision::kFp32, {"cpu:einsum", CreateEinsum});
}

}  // namespace chipfit::cpu
