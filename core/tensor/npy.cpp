// .npy reader/writer: magic, version, little-endian header length, a Python dict literal header
// ('descr', 'fortran_order', 'shape'), then the raw data.
#include "core/tensor/npy.h"

#include <cstring>
#include <fstream>
#include <string_view>

namespace chipfit {
namespace {

struct NpyType {
  const char* descr;
  DType dtype;
};
constexpr NpyType kTypes[] = {
    {"<f4", DType::kF32}, {"<f8", DType::kF64}, {"<f2", DType::kF16}, {"|i1", DType::kI8},
    {"|u1", DType::kU8},  {"<i2", DType::kI16}, {"<u2", DType::kU16}, {"<i4", DType::kI32},
    {"<u4", DType::kU32}, {"<i8", DType::kI64}, {"<u8", DType::kU64}, {"|b1", DType::kBool},
};

// The value of `key` in the header dict, as the text up to the next top-level ',' or '}'.
std::string_view HeaderValue(std::string_view header, std::string_view key) {
  const std::string quoted = "'" + std::string(key) + "'";
  size_t pos = header.find(quoted);
  if (pos == std::string_view::npos) return {};
  pos = header.find(':', pos + quoted.size());
  if (pos == std::string_view::npos) return {};
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  size_t end = pos;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (depth < 0) break;
  }
  if (end < header.size() && header[end] == ')') ++end;
  return header.substr(pos, end - pos);
}

}  // namespace

Result<Tensor> ReadNpy(const std::filesystem::path& path) {
  const std::string what = "'" + path.string() + "'";
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(".npy file " + what + " cannot be opened");
  char magic[8] = {};
  in.read(magic, 8);
  if (in.gcount() != 8 || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return ParseError(what + " is not a .npy file (bad magic)");
  }
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char len[2];
    in.read(reinterpret_cast<char*>(len), 2);
    header_len = len[0] | (len[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char len[4];
    in.read(reinterpret_cast<char*>(len), 4);
    header_len = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<uint32_t>(len[3]) << 24);
  } else {
    return ParseError(what + ": .npy format version " + std::to_string(major) + " is not supported");
  }
  if (!in || header_len > (1u << 20)) return ParseError(what + ": truncated or oversized .npy header");
  std::string header(header_len, '\0');
  in.read(header.data(), header_len);
  if (static_cast<uint32_t>(in.gcount()) != header_len) return ParseError(what + ": truncated .npy header");

  std::string_view descr = HeaderValue(header, "descr");
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"')) descr = descr.substr(1, descr.size() - 2);
  const NpyType* type = nullptr;
  for (const NpyType& t : kTypes) {
    // '=' and '<' both mean little-endian here; single-byte types may be written with either '|' or '<'.
    if (descr == t.descr ||
        (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string_view(t.descr + 1)) ||
        (descr.size() == 3 && t.descr[0] == '|' && descr.substr(1) == std::string_view(t.descr + 1))) {
      type = &t;
    }
  }
  if (type == nullptr) return ParseError(what + ": dtype '" + std::string(descr) + "' is not supported");
  if (HeaderValue(header, "fortran_order").starts_with("True")) {
    return Unsupported(what + ": Fortran-order arrays are not supported; save with C order");
  }
  std::string_view shape_text = HeaderValue(header, "shape");
  if (shape_text.size() < 2 || shape_text.front() != '(') return ParseError(what + ": missing shape in .npy header");
  Shape shape;
  std::string number;
  for (char c : shape_text.substr(1)) {
    if (c >= '0' && c <= '9') {
      number += c;
    } else if (c == ',' || c == ')') {
      if (!number.empty()) shape.push_back(std::stoll(number));
      number.clear();
    } else if (c != ' ' && c != 'L') {
      return ParseError(what + ": malformed shape " + std::string(shape_text));
    }
  }
  Tensor tensor(type->dtype, shape);
  in.read(static_cast<char*>(tensor.raw_data()), static_cast<std::streamsize>(tensor.nbytes()));
  if (static_cast<size_t>(in.gcount()) != tensor.nbytes()) {
    return ParseError(what + ": data is shorter than shape " + ShapeToString(shape) + " of " + std::string(descr) +
                      " needs (" + std::to_string(tensor.nbytes()) + " bytes)");
  }
  return tensor;
}

Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor) {
  const NpyType* type = nullptr;
  for (const NpyType& t : kTypes) {
    if (t.dtype == tensor.dtype()) type = &t;
  }
  if (type == nullptr) {
    return Unsupported("cannot write " + std::string(DTypeName(tensor.dtype())) + " to .npy ('" + path.string() + "')");
  }
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i) shape += std::to_string(tensor.shape()[i]) + ", ";
  if (tensor.shape().size() > 1) shape.resize(shape.size() - 2);
  if (tensor.shape().size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header =
      std::string("{'descr': '") + type->descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so the data starts on a 64-byte boundary, ending the header with '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) return IoError("cannot write '" + path.string() + "'");
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_bytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(tensor.raw_data()), static_cast<std::streamsize>(tensor.nbytes()));
  if (!out) return IoError("writing '" + path.string() + "' failed");
  return Status::Ok();
}

}  // namespace chipfit
