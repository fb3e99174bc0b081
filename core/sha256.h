// SHA-256 of files and byte strings (OpenSSL's libcrypto): how a model is recognised in the store
// and in reports, whatever its path.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/status.h"

namespace chipfit {

// 64 lowercase hex digits.
Result<std::string> Sha256File(const std::filesystem::path& path);
std::string Sha256Hex(std::string_view bytes);

}  // namespace chipfit
