// What the peer tests share: where onnxruntime-node is, running a command, reading a file back.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace chipfit::peer {

// onnxruntime-node's folder (scripts/fetch-models.sh installs it), or CHIPFIT_PEER_DIR.
inline std::filesystem::path PeerDir() {
  const char* env = std::getenv("CHIPFIT_PEER_DIR");
  return env ? std::filesystem::path(env) : std::filesystem::path(CHIPFIT_SOURCE_DIR) / ".cache/peer";
}

// The command's exit status (-1 when it did not exit).
inline int Shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace chipfit::peer
