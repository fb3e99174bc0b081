// libonnx edges: protobuf parsing, onnx::checker and onnx::shape_inference exceptions become Status.
#include "core/graph/onnx_loader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace chipfit {
namespace {

int64_t DefaultOpset(const onnx::ModelProto& proto) {
  for (const auto& opset : proto.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return opset.version();
  }
  return 0;
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

int64_t LibOnnxMaxOpset() {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(onnx::ONNX_DOMAIN);
  return it == map.end() ? 0 : it->second.second;
}

Result<LoadedOnnxModel> LoadOnnxModel(const std::filesystem::path& path, const OnnxLoadOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("model file '" + path.string() + "' does not exist");
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument("model path '" + path.string() + "' is a directory, not an .onnx file");
  }
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return IoError("cannot open model file '" + path.string() + "': " + std::strerror(errno));
  }
  onnx::ModelProto proto;
  {
    google::protobuf::io::FileInputStream raw(fd.get());
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);  // protobuf's own ceiling; larger weights live in external data files
    if (!proto.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
      return ParseError("'" + path.string() +
                        "' is not a valid ONNX model: protobuf parsing failed (truncated or not an ONNX file)");
    }
  }
  return CheckOnnxModel(std::move(proto), path.string(), options);
}

Result<LoadedOnnxModel> CheckOnnxModel(onnx::ModelProto proto, const std::string& origin,
                                       const OnnxLoadOptions& options) {
  LoadedOnnxModel model;
  model.path = origin;
  model.default_opset = DefaultOpset(proto);
  if (!proto.has_graph() || proto.graph().node_size() == 0) {
    return ParseError("'" + origin + "' holds no graph nodes: not an ONNX model, or an empty one");
  }
  if (model.default_opset == 0) {
    return ParseError("'" + origin + "' imports no default-domain (ai.onnx) opset");
  }
  const int64_t known = LibOnnxMaxOpset();
  const bool libonnx_knows_opset = model.default_opset <= known;
  if (!libonnx_knows_opset) {
    model.notes.push_back("opset " + std::to_string(model.default_opset) + " is newer than libonnx " + "knows (<= " +
                          std::to_string(known) + "): onnx::checker and libonnx shape inference were skipped");
  }
  if (options.run_checker && libonnx_knows_opset) {
    try {
      onnx::checker::check_model(proto);
    } catch (const std::exception& e) {
      return InvalidArgument("'" + origin + "' fails the ONNX checker: " + e.what());
    }
  }
  if (options.infer_shapes && libonnx_knows_opset) {
    try {
      onnx::ShapeInferenceOptions si_options(/*check_type_val=*/true,
                                             /*strict_mode_val=*/options.strict_shape_inference ? 1 : 0,
                                             /*data_prop_val=*/true);
      onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), si_options);
    } catch (const std::exception& e) {
      return InvalidArgument("'" + origin + "' fails ONNX shape inference: " + e.what());
    }
  }
  model.proto = std::move(proto);
  return model;
}

}  // namespace chipfit
