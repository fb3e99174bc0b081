// --data folders: which kind a folder holds, image decoding + resize + normalisation, .wav decoding and fitting.
#include "core/quant/input_data.h"

#include <sndfile.h>
#include <stb_image.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <memory>
#include <system_error>

#include "core/quant/calibration_data.h"
#include "core/sha256.h"

namespace chipfit {

namespace fs = std::filesystem;

namespace {

// Per-sample tensor cap (elements): a bound shape or resize= that asks for more is a typo, not a dataset, and
// failing here beats a bad_alloc out of core.
constexpr int64_t kMaxSampleElements = int64_t{1} << 28;

const char kImageExtensions[] = ".png .jpg .jpeg .bmp";

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool IsImageExtension(const std::string& ext) {
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".bmp";
}

std::string DimText(int64_t d) { return d >= 0 ? std::to_string(d) : "?"; }

std::string ShapeText(const ValueDesc& input) {
  if (!input.has_shape) return "unknown shape";
  std::string out;
  for (size_t d = 0; d < input.shape.size(); ++d) out += (d > 0 ? "x" : "") + DimText(input.shape[d]);
  return out.empty() ? "scalar" : out;
}

// "'a' (f32, 1x3x?x?), 'b' (i64, 2)": what the model offers, for errors about what it should have.
std::string DescribeInputs(const std::vector<ValueDesc>& inputs) {
  std::string out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    out += (i > 0 ? ", '" : "'") + inputs[i].name + "' (" + std::string(DTypeName(inputs[i].dtype)) + ", " +
           ShapeText(inputs[i]) + ")";
  }
  return out.empty() ? "none" : out;
}

// An unknown dtype is read as f32, as RandomCalibrationData does.
Status CheckF32(const ValueDesc& input, const std::string& kind) {
  if (input.dtype == DType::kF32 || input.dtype == DType::kUndefined) return Status::Ok();
  return InvalidArgument("input data: input '" + input.name + "' is " + std::string(DTypeName(input.dtype)) + "; " +
                         kind + " are read only into f32 inputs");
}

std::string SizeText(int64_t a, int64_t b) { return std::to_string(a) + "x" + std::to_string(b); }

// What the folder holds, by kind.
struct Listing {
  bool has_npy = false;             // a loose .npy (LoadCalibrationData's own test)
  bool has_npy_subfolder = false;   // a non-hidden sub-folder holding a .npy
  std::vector<std::string> images;  // file names, sorted
  std::vector<std::string> wavs;    // file names, sorted
  int ignored = 0;                  // other non-hidden files
};

bool FolderHasNpy(const fs::path& folder) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && it->path().extension() == ".npy") return true;
  }
  return false;
}

Result<Listing> ListFolder(const std::string& dir) {
  Listing listing;
  std::error_code ec;
  // The non-throwing iteration: core reports errors as Status, and the listing can fail half-way.
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    std::error_code type_ec;  // an entry that vanished or cannot be stat'ed is simply not data
    if (it->is_regular_file(type_ec)) {
      if (path.extension() == ".npy") listing.has_npy = true;
      if (name.starts_with(".")) continue;
      const std::string ext = Lower(path.extension().string());
      if (IsImageExtension(ext)) {
        listing.images.push_back(name);
      } else if (ext == ".wav") {
        listing.wavs.push_back(name);
      } else if (ext != ".npy") {
        ++listing.ignored;
      }
    } else if (it->is_directory(type_ec) && !name.starts_with(".")) {
      if (!listing.has_npy_subfolder && FolderHasNpy(path)) listing.has_npy_subfolder = true;
    }
  }
  if (ec) return IoError("input data: cannot list '" + dir + "': " + ec.message());
  std::sort(listing.images.begin(), listing.images.end());
  std::sort(listing.wavs.begin(), listing.wavs.end());
  return listing;
}

void SetFiles(InputData& data, std::vector<std::string> files) {
  std::string text;
  for (const std::string& f : files) text += f + "\n";
  data.files = std::move(files);
  data.files_sha256 = Sha256Hex(text);
}

// The files LoadCalibrationData read, in its order: its folder choice repeated.
std::vector<std::string> NpyFiles(const std::string& dir, bool flat, const std::vector<ValueDesc>& inputs) {
  std::vector<std::string> folders;
  if (flat) {
    folders.emplace_back();
  } else {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code type_ec;
      const std::string name = it->path().filename().string();
      if (it->is_directory(type_ec) && !name.starts_with(".")) folders.push_back(name);
    }
    std::sort(folders.begin(), folders.end());
  }
  std::vector<std::string> files;
  for (const std::string& folder : folders) {
    for (const ValueDesc& input : inputs) {
      files.push_back(folder.empty() ? CalibrationFileName(input.name)
                                     : folder + "/" + CalibrationFileName(input.name));
    }
  }
  return files;
}

void NoteIgnored(InputData& data, int ignored) {
  if (ignored == 0) return;
  data.notes.push_back(std::to_string(ignored) + (ignored == 1 ? " file" : " files") + " ignored (not .npy, " +
                       kImageExtensions + " or .wav)");
}

// ---- images ----

// The one image input, resolved against the spec: every value the loader needs, or why the model cannot take
// images.
struct ImageTarget {
  std::string input;
  bool nhwc = false;
  int64_t n = 0, c = 0, h = 0, w = 0;
  Preprocess spec;  // resolved: resize set, mean/std one per channel, layout set
};

Result<ImageTarget> ResolveImageTarget(const std::vector<ValueDesc>& inputs, const Preprocess& given) {
  if (inputs.size() != 1 || !inputs[0].has_shape || inputs[0].shape.size() != 4) {
    return InvalidArgument("input data: images need one 4-D image input ([N,C,H,W] or [N,H,W,C]); the model has " +
                           std::to_string(inputs.size()) + (inputs.size() == 1 ? " input: " : " inputs: ") +
                           DescribeInputs(inputs));
  }
  const ValueDesc& input = inputs[0];
  RETURN_IF_ERROR(CheckF32(input, "images"));
  const Shape& shape = input.shape;
  ImageTarget t;
  t.input = input.name;
  t.spec = given;
  if (t.spec.layout.empty()) {
    if (shape[1] == 1 || shape[1] == 3) {
      t.spec.layout = "nchw";
    } else if (shape[3] == 1 || shape[3] == 3) {
      t.spec.layout = "nhwc";
    } else {
      return InvalidArgument("input data: cannot tell the channel dim of input '" + input.name + "' (" +
                             ShapeText(input) + "): neither dim 1 nor dim 3 is 1 or 3; give layout=nchw or nhwc");
    }
  }
  t.nhwc = t.spec.layout == "nhwc";
  const size_t c_dim = t.nhwc ? 3 : 1, h_dim = t.nhwc ? 1 : 2, w_dim = t.nhwc ? 2 : 3;
  const bool gray = t.spec.channels == "gray";
  t.c = shape[c_dim] >= 0 ? shape[c_dim] : (gray ? 1 : 3);
  if (t.c != 1 && t.c != 3) {
    return InvalidArgument("input data: input '" + input.name + "' (" + ShapeText(input) + ", layout " + t.spec.layout +
                           ") has " + std::to_string(t.c) + " channels; images give 1 or 3");
  }
  if (t.c == 1 && !gray) {
    return InvalidArgument("input data: input '" + input.name + "' (" + ShapeText(input) +
                           ") has 1 channel but channels=" + t.spec.channels + "; give channels=gray");
  }
  if (t.c == 3 && gray) {
    return InvalidArgument("input data: input '" + input.name + "' (" + ShapeText(input) +
                           ") has 3 channels but channels=gray; give channels=rgb or bgr");
  }
  for (auto* values : {&t.spec.mean, &t.spec.std}) {
    const char* key = values == &t.spec.mean ? "mean" : "std";
    if (values->size() == 1) values->assign(static_cast<size_t>(t.c), values->front());
    if (static_cast<int64_t>(values->size()) != t.c) {
      return InvalidArgument("input data: " + std::string(key) + " has " + std::to_string(values->size()) +
                             " values, input '" + input.name + "' has " + std::to_string(t.c) + " channel(s)");
    }
  }
  // The command that would bind it, with what is known filled in.
  const std::string n_text = shape[0] >= 1 ? std::to_string(shape[0]) : "1";
  const std::string c_text = std::to_string(t.c);
  const std::string h_text = shape[h_dim] >= 1 ? std::to_string(shape[h_dim]) : "H";
  const std::string w_text = shape[w_dim] >= 1 ? std::to_string(shape[w_dim]) : "W";
  const std::string bind = "--shape " + input.name + "=" +
                           (t.nhwc ? n_text + "x" + h_text + "x" + w_text + "x" + c_text
                                   : n_text + "x" + c_text + "x" + h_text + "x" + w_text);
  if (shape[0] < 1) {
    return InvalidArgument("input data: input '" + input.name + "' (" + ShapeText(input) +
                           ") has no bound batch dim; bind it with " + bind);
  }
  t.n = shape[0];
  if (t.spec.resize) {
    t.h = t.spec.resize->first;
    t.w = t.spec.resize->second;
    if ((shape[h_dim] >= 0 && shape[h_dim] != t.h) || (shape[w_dim] >= 0 && shape[w_dim] != t.w)) {
      return InvalidArgument("input data: resize=" + SizeText(t.h, t.w) + " does not fit input '" + input.name + "' (" +
                             ShapeText(input) + ")");
    }
  } else {
    if (shape[h_dim] < 1 || shape[w_dim] < 1) {
      return InvalidArgument("input data: input '" + input.name + "' (" + ShapeText(input) +
                             ") has no bound HxW to resize images to; bind it with " + bind + " or give resize=HxW");
    }
    t.h = shape[h_dim];
    t.w = shape[w_dim];
    t.spec.resize = std::make_pair(t.h, t.w);
  }
  // Each factor is at most 65536 (resize) or checked here in turn, so the products cannot overflow.
  if (t.n > kMaxSampleElements || t.h > kMaxSampleElements || t.w > kMaxSampleElements ||
      t.n * t.c > kMaxSampleElements || t.n * t.c * t.h > kMaxSampleElements ||
      t.n * t.c * t.h * t.w > kMaxSampleElements) {
    return InvalidArgument("input data: input '" + input.name + "' would take " + std::to_string(t.n) + "x" +
                           std::to_string(t.c) + "x" + SizeText(t.h, t.w) + " values per sample, more than " +
                           std::to_string(kMaxSampleElements));
  }
  return t;
}

struct StbFree {
  void operator()(unsigned char* p) const { stbi_image_free(p); }
};

// stb_image's failure reason, made printable. For an unknown PNG chunk stb copies the chunk's type bytes from the
// file into "XXXX PNG chunk not known", so a corrupt file can put control bytes there, and a truncated one (stb reads
// zeros past the end) a NUL that leaves "", "I", "ID" …; every other reason of stb's is at least 5 characters.
std::string StbReason() {
  const char* raw = stbi_failure_reason();
  std::string reason = raw != nullptr ? raw : "";
  if (reason.size() < 5) return "a PNG chunk is missing or unknown: the file is truncated or corrupt";
  for (char& c : reason) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return reason;
}

// Bilinear source taps for one output axis: half-pixel centres, clamped at the edges.
struct Taps {
  std::vector<int64_t> lo, hi;
  std::vector<double> frac;
};

Taps MakeTaps(int64_t in, int64_t out) {
  Taps taps;
  taps.lo.resize(static_cast<size_t>(out));
  taps.hi.resize(static_cast<size_t>(out));
  taps.frac.resize(static_cast<size_t>(out));
  const double ratio = static_cast<double>(in) / static_cast<double>(out);
  for (int64_t i = 0; i < out; ++i) {
    const double src = std::clamp((static_cast<double>(i) + 0.5) * ratio - 0.5, 0.0, static_cast<double>(in - 1));
    const auto lo = static_cast<int64_t>(std::floor(src));
    taps.lo[static_cast<size_t>(i)] = lo;
    taps.hi[static_cast<size_t>(i)] = std::min(lo + 1, in - 1);
    taps.frac[static_cast<size_t>(i)] = src - static_cast<double>(lo);
  }
  return taps;
}

// Decodes `path` and writes image `index` of the batch into `out` (the sample tensor).
Status LoadImage(const fs::path& path, const ImageTarget& t, int64_t index, float* out) {
  int width = 0, height = 0, file_channels = 0;
  const int channels = static_cast<int>(t.c);
  std::unique_ptr<unsigned char, StbFree> pixels(
      stbi_load(path.string().c_str(), &width, &height, &file_channels, channels));
  if (!pixels) return InvalidArgument("input data: cannot decode image '" + path.string() + "': " + StbReason());
  if (width < 1 || height < 1) return InvalidArgument("input data: image '" + path.string() + "' is empty");
  const int64_t w = width, h = height;
  // The region the image is drawn into: all of H×W, or the letterbox.
  int64_t rh = t.h, rw = t.w;
  if (t.spec.keep_aspect) {
    const double s =
        std::min(static_cast<double>(t.h) / static_cast<double>(h), static_cast<double>(t.w) / static_cast<double>(w));
    rh = std::clamp<int64_t>(std::llround(static_cast<double>(h) * s), 1, t.h);
    rw = std::clamp<int64_t>(std::llround(static_cast<double>(w) * s), 1, t.w);
  }
  const int64_t top = (t.h - rh) / 2, left = (t.w - rw) / 2;
  const Taps ys = MakeTaps(h, rh), xs = MakeTaps(w, rw);
  const bool bgr = t.spec.channels == "bgr";
  const int64_t plane = t.h * t.w;
  float* image = out + index * t.c * plane;
  const unsigned char* src = pixels.get();
  for (int64_t c = 0; c < t.c; ++c) {
    const int64_t sc = bgr ? 2 - c : c;  // stb gives R, G, B
    const double scale = t.spec.scale / t.spec.std[static_cast<size_t>(c)];
    const double offset = -t.spec.mean[static_cast<size_t>(c)] / t.spec.std[static_cast<size_t>(c)];
    for (int64_t y = 0; y < t.h; ++y) {
      for (int64_t x = 0; x < t.w; ++x) {
        double pixel = 0.0;  // the letterbox border is black
        const int64_t ry = y - top, rx = x - left;
        if (ry >= 0 && ry < rh && rx >= 0 && rx < rw) {
          const auto yi = static_cast<size_t>(ry), xi = static_cast<size_t>(rx);
          const auto at = [&](int64_t sy, int64_t sx) { return static_cast<double>(src[(sy * w + sx) * t.c + sc]); };
          const double fy = ys.frac[yi], fx = xs.frac[xi];
          const double top_row = (1.0 - fx) * at(ys.lo[yi], xs.lo[xi]) + fx * at(ys.lo[yi], xs.hi[xi]);
          const double bottom_row = (1.0 - fx) * at(ys.hi[yi], xs.lo[xi]) + fx * at(ys.hi[yi], xs.hi[xi]);
          pixel = (1.0 - fy) * top_row + fy * bottom_row;
        }
        const auto value = static_cast<float>(pixel * scale + offset);
        if (t.nhwc) {
          image[(y * t.w + x) * t.c + c] = value;
        } else {
          image[c * plane + y * t.w + x] = value;
        }
      }
    }
  }
  return Status::Ok();
}

Result<InputData> LoadImages(const std::string& dir, const Listing& listing, const std::vector<ValueDesc>& inputs,
                             const Preprocess& preprocess) {
  ASSIGN_OR_RETURN(const ImageTarget t, ResolveImageTarget(inputs, preprocess));
  const auto count = static_cast<int64_t>(listing.images.size());
  if (count < t.n) {
    return InvalidArgument("input data: '" + dir + "' holds " + std::to_string(count) + " image(s); input '" + t.input +
                           "' takes " + std::to_string(t.n) + " per sample (batch dim)");
  }
  InputData data;
  data.kind = "images";
  data.preprocess = t.spec.ToString();
  const int64_t sample_count = count / t.n;
  const Shape shape = t.nhwc ? Shape{t.n, t.h, t.w, t.c} : Shape{t.n, t.c, t.h, t.w};
  std::vector<std::string> used(listing.images.begin(), listing.images.begin() + sample_count * t.n);
  for (int64_t s = 0; s < sample_count; ++s) {
    Tensor tensor(DType::kF32, shape);
    for (int64_t i = 0; i < t.n; ++i) {
      RETURN_IF_ERROR(LoadImage(fs::path(dir) / used[static_cast<size_t>(s * t.n + i)], t, i, tensor.data<float>()));
    }
    data.samples.push_back({{t.input, std::move(tensor)}});
  }
  if (const int64_t left_over = count - sample_count * t.n; left_over > 0) {
    data.notes.push_back(std::to_string(left_over) + " image(s) left out: " + std::to_string(count) +
                         " images do not fill batches of " + std::to_string(t.n));
  }
  NoteIgnored(data, listing.ignored);
  SetFiles(data, std::move(used));
  return data;
}

// ---- audio ----

struct SndFileClose {
  void operator()(SNDFILE* f) const { sf_close(f); }
};

Result<InputData> LoadAudio(const std::string& dir, const Listing& listing, const std::vector<ValueDesc>& inputs,
                            int sample_rate) {
  if (inputs.size() != 1 || !inputs[0].has_shape || inputs[0].shape.empty() || inputs[0].shape.size() > 2) {
    return InvalidArgument(
        "input data: .wav files need one input of rank 1 ([samples]) or 2 ([N, samples]); "
        "the model has " +
        std::to_string(inputs.size()) + (inputs.size() == 1 ? " input: " : " inputs: ") + DescribeInputs(inputs));
  }
  const ValueDesc& input = inputs[0];
  RETURN_IF_ERROR(CheckF32(input, ".wav files"));
  if (sample_rate <= 0)
    return InvalidArgument("input data: sample rate " + std::to_string(sample_rate) + " is not > 0");
  const bool batched = input.shape.size() == 2;
  const int64_t n = batched ? input.shape[0] : 1;
  const int64_t length = input.shape.back();
  if (n < 1 || length < 1) {
    const std::string bind = "--shape " + input.name + "=" +
                             (batched ? (n >= 1 ? std::to_string(n) : std::string("1")) + "x" : std::string()) +
                             (length >= 1 ? std::to_string(length) : std::string("SAMPLES"));
    return InvalidArgument("input data: input '" + input.name + "' (" + ShapeText(input) +
                           ") needs bound dims to fit .wav files to; bind it with " + bind);
  }
  if (n > kMaxSampleElements / length) {
    return InvalidArgument("input data: input '" + input.name + "' (" + ShapeText(input) + ") takes more than " +
                           std::to_string(kMaxSampleElements) + " values per sample");
  }
  const auto count = static_cast<int64_t>(listing.wavs.size());
  if (count < n) {
    return InvalidArgument("input data: '" + dir + "' holds " + std::to_string(count) + " .wav file(s); input '" +
                           input.name + "' takes " + std::to_string(n) + " per sample (batch dim)");
  }
  InputData data;
  data.kind = "audio";
  const int64_t sample_count = count / n;
  std::vector<std::string> used(listing.wavs.begin(), listing.wavs.begin() + sample_count * n);
  int padded = 0, truncated = 0;
  for (int64_t s = 0; s < sample_count; ++s) {
    Tensor tensor(DType::kF32, input.shape);
    for (int64_t i = 0; i < n; ++i) {
      const std::string path = (fs::path(dir) / used[static_cast<size_t>(s * n + i)]).string();
      SF_INFO info{};
      std::unique_ptr<SNDFILE, SndFileClose> file(sf_open(path.c_str(), SFM_READ, &info));
      if (!file) return InvalidArgument("input data: cannot decode '" + path + "': " + sf_strerror(nullptr));
      if (info.channels != 1) {
        return InvalidArgument("input data: '" + path + "' has " + std::to_string(info.channels) +
                               " channels; audio inputs take mono files");
      }
      if (info.samplerate != sample_rate) {
        return InvalidArgument("input data: '" + path + "' is " + std::to_string(info.samplerate) + " Hz, expected " +
                               std::to_string(sample_rate) + " Hz (files are not resampled)");
      }
      float* out = tensor.data<float>() + i * length;
      const sf_count_t read = sf_readf_float(file.get(), out, length);
      if (read < 0 || sf_error(file.get()) != SF_ERR_NO_ERROR) {
        return InvalidArgument("input data: cannot read '" + path + "': " + sf_strerror(file.get()));
      }
      if (read < length) ++padded;  // the tensor is zero-initialised
      if (info.frames > length) ++truncated;
    }
    data.samples.push_back({{input.name, std::move(tensor)}});
  }
  data.preprocess = "sample_rate=" + std::to_string(sample_rate) + ",samples=" + std::to_string(length) +
                    ",padded=" + std::to_string(padded) + ",truncated=" + std::to_string(truncated);
  if (padded > 0) {
    data.notes.push_back(std::to_string(padded) + (padded == 1 ? " file" : " files") + " padded with zeros to " +
                         std::to_string(length) + " samples");
  }
  if (truncated > 0) {
    data.notes.push_back(std::to_string(truncated) + (truncated == 1 ? " file" : " files") + " truncated to " +
                         std::to_string(length) + " samples");
  }
  if (const int64_t left_over = count - sample_count * n; left_over > 0) {
    data.notes.push_back(std::to_string(left_over) + " .wav file(s) left out: " + std::to_string(count) +
                         " files do not fill batches of " + std::to_string(n));
  }
  NoteIgnored(data, listing.ignored);
  SetFiles(data, std::move(used));
  return data;
}

}  // namespace

Result<InputData> LoadInputData(const std::string& dir, const std::vector<ValueDesc>& inputs,
                                const InputDataOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound("input data: '" + dir + "' is not a folder");
  ASSIGN_OR_RETURN(const Listing listing, ListFolder(dir));
  // Loose .npy files win, as LoadCalibrationData lets them win over sub-folders.
  if (listing.has_npy || (listing.images.empty() && listing.wavs.empty() && listing.has_npy_subfolder)) {
    InputData data;
    data.kind = "npy";
    ASSIGN_OR_RETURN(data.samples, LoadCalibrationData(dir, inputs));
    SetFiles(data, NpyFiles(dir, listing.has_npy, inputs));
    return data;
  }
  if (!listing.images.empty() && !listing.wavs.empty()) {
    return InvalidArgument("input data: '" + dir + "' mixes images (" + std::to_string(listing.images.size()) +
                           ", e.g. '" + listing.images.front() + "') and .wav files (" +
                           std::to_string(listing.wavs.size()) + ", e.g. '" + listing.wavs.front() +
                           "'); give one kind per folder");
  }
  if (!listing.images.empty()) return LoadImages(dir, listing, inputs, options.preprocess);
  if (!listing.wavs.empty()) return LoadAudio(dir, listing, inputs, options.sample_rate);
  return InvalidArgument("input data: '" + dir + "' holds no usable file: give .npy files (one per input, or " +
                         "sample sub-folders of them), images (" + kImageExtensions + ") or .wav files");
}

}  // namespace chipfit
