// Streams the file through OpenSSL's EVP digest in 1 MiB chunks (models can be gigabytes).
#include "core/sha256.h"

#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

namespace chipfit {
namespace {

struct DigestContext {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};

  bool Init() { return ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1; }
  bool Update(const void* data, size_t n) { return EVP_DigestUpdate(ctx.get(), data, n) == 1; }
  std::string FinalHex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(ctx.get(), digest.data(), &length) != 1) return {};
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    for (unsigned int i = 0; i < length; ++i) {
      hex += kHex[digest[i] >> 4];
      hex += kHex[digest[i] & 15];
    }
    return hex;
  }
};

}  // namespace

Result<std::string> Sha256File(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open '" + path.string() + "' to hash it: " + std::strerror(errno));
  DigestContext digest;
  if (!digest.Init()) return Internal("OpenSSL could not start a SHA-256 digest");
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    if (in.gcount() > 0 && !digest.Update(chunk.data(), static_cast<size_t>(in.gcount()))) {
      return Internal("OpenSSL SHA-256 update failed");
    }
  }
  if (in.bad()) return IoError("reading '" + path.string() + "' failed while hashing it");
  std::string hex = digest.FinalHex();
  if (hex.empty()) return Internal("OpenSSL SHA-256 final failed");
  return hex;
}

std::string Sha256Hex(std::string_view bytes) {
  DigestContext digest;
  if (!digest.Init() || !digest.Update(bytes.data(), bytes.size())) return {};
  return digest.FinalHex();
}

}  // namespace chipfit
