// Broadcasting and axis helpers for reference kernels.
#include "core/reference/ref_util.h"

#include <algorithm>
#include <bit>

namespace chipfit {

Result<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return InvalidArgument("shapes " + ShapeToString(a) + " and " + ShapeToString(b) + " do not broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Result<Shape> BroadcastShapes(const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes) {
    ASSIGN_OR_RETURN(out, BroadcastShapes(out, s));
  }
  return out;
}

BroadcastIndexer::BroadcastIndexer(const Shape& in, const Shape& out) : out_dims_(out) {
  identity_ = in == out;
  in_strides_.assign(out.size(), 0);
  const std::vector<int64_t> strides = Strides(in);
  const size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) in_strides_[offset + i] = in[i] == 1 ? 0 : strides[i];
}

int64_t BroadcastIndexer::operator()(int64_t flat_out) const {
  if (identity_) return flat_out;
  int64_t offset = 0;
  for (int64_t d = static_cast<int64_t>(out_dims_.size()) - 1; d >= 0; --d) {
    const int64_t dim = out_dims_[static_cast<size_t>(d)];
    const int64_t coord = flat_out % dim;
    flat_out /= dim;
    offset += coord * in_strides_[static_cast<size_t>(d)];
  }
  return offset;
}

Result<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const Node& node) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    return InvalidArgument(node.Describe() + ": axis " + std::to_string(axis) + " is out of range for rank " +
                           std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

Result<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank, const Node& node) {
  std::vector<int64_t> out;
  for (int64_t axis : axes) {
    ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(axis, rank, node));
    if (std::find(out.begin(), out.end(), a) != out.end()) {
      return InvalidArgument(node.Describe() + ": axis " + std::to_string(axis) + " is repeated");
    }
    out.push_back(a);
  }
  return out;
}

bool IsOneOf(DType dtype, std::initializer_list<DType> allowed) {
  return std::find(allowed.begin(), allowed.end(), dtype) != allowed.end();
}

Status InferSameAsInput0(InferContext& ctx) {
  const ValueInfo* in = ctx.input(0);
  if (in == nullptr) return ctx.Error("missing input 0");
  ctx.SetOutput(0, in->dtype, in->shape);
  return Status::Ok();
}

SplitMix64 RandomStream(const Node& node) {
  if (auto it = node.attributes.find("seed"); it != node.attributes.end()) {
    // A float seed's bits, so seeds 1.0 and 1.5 give different streams.
    const uint64_t bits = it->second.kind == Attribute::Kind::kFloat ? std::bit_cast<uint32_t>(it->second.f)
                                                                     : static_cast<uint64_t>(it->second.i);
    return SplitMix64(bits ^ 0x5EEDULL);
  }
  // FNV-1a over the node's name: a stable stream per node when the model gives no seed.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : node.name) h = (h ^ c) * 0x100000001b3ULL;
  return SplitMix64(h);
}

}  // namespace chipfit
