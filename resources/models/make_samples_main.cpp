// chipfit-make-samples: writes cnn.onnx, mlp.onnx and transformer.onnx into a directory.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "core/graph/onnx_loader.h"
#include "resources/models/sample_models.h"

namespace {

constexpr int kExitFailure = 1;  // a generated model fails the checker: a generator bug, not a user error
constexpr int kExitUsage = 2;    // as the chipfit CLI: usage or input error

void PrintUsage(std::FILE* to) {
  std::fprintf(to,
               "usage: chipfit-make-samples OUTPUT_DIR\n"
               "Writes the sample models cnn.onnx, mlp.onnx and transformer.onnx into OUTPUT_DIR (created if\n"
               "missing). The bytes are deterministic; run with resources/models to refresh the committed files.\n");
}

// Writes through a temporary name and renames, so an interrupted run never leaves a truncated model behind.
bool WriteFile(const std::filesystem::path& path, const std::string& bytes, std::string* error) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      *error = "cannot open '" + tmp.string() + "' for writing: " + std::strerror(errno);
      return false;
    }
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      *error = "writing '" + tmp.string() + "' failed: " + std::strerror(errno);
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    *error = "cannot rename '" + tmp.string() + "' to '" + path.string() + "': " + ec.message();
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
    PrintUsage(stdout);
    return 0;
  }
  if (argc != 2 || argv[1][0] == '\0' || argv[1][0] == '-') {
    std::fprintf(stderr, "chipfit-make-samples: expected exactly one argument, the output directory\n");
    PrintUsage(stderr);
    return kExitUsage;
  }
  const std::filesystem::path dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec)) {
    std::fprintf(stderr, "chipfit-make-samples: output directory '%s' cannot be created or is not a directory%s%s\n",
                 dir.c_str(), ec ? ": " : "", ec ? ec.message().c_str() : "");
    return kExitUsage;
  }

  // Check every model before writing any, so a generator bug never replaces good committed files.
  auto models = chipfit::BuildSampleModels();
  chipfit::OnnxLoadOptions options;
  options.strict_shape_inference = true;
  for (const auto& model : models) {
    auto checked = chipfit::CheckOnnxModel(model.proto, model.file_name, options);
    if (!checked.ok()) {
      std::fprintf(stderr, "chipfit-make-samples: generated %s is invalid: %s\n", model.file_name.c_str(),
                   checked.status().ToString().c_str());
      return kExitFailure;
    }
  }
  for (const auto& model : models) {
    const std::string bytes = chipfit::SerializeDeterministic(model.proto);
    const std::filesystem::path path = dir / model.file_name;
    std::string error;
    if (!WriteFile(path, bytes, &error)) {
      std::fprintf(stderr, "chipfit-make-samples: %s\n", error.c_str());
      return kExitUsage;
    }
    std::printf("wrote %s (%zu bytes, %d nodes)\n", path.c_str(), bytes.size(), model.proto.graph().node_size());
  }
  return 0;
}
