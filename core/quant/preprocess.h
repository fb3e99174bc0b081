// The image preprocessing spec of --data folders ("resize=640x640,channels=bgr,..."): parsing and its canonical text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace chipfit {

// How an 8-bit image becomes one image of a 4-D f32 input: resize to H×W (bilinear, pixel centres aligned as
// OpenCV's INTER_LINEAR and ONNX Resize's half_pixel do, no antialiasing), channel order, then per channel
// value = (pixel · scale − mean[c]) / std[c].
struct Preprocess {
  std::optional<std::pair<int64_t, int64_t>> resize;  // H, W; nullopt = the bound input's H×W
  // Letterbox into H×W: scaled to fit with the aspect ratio kept, centred (as YOLO-style letterboxing is),
  // the border black (pixel 0 before scale/mean/std) so that it reads as an image border.
  bool keep_aspect = false;
  std::string channels = "rgb";  // rgb | bgr | gray (gray: stb_image's luma, (77 R + 150 G + 29 B) / 256)
  double scale = 1.0 / 255.0;
  std::vector<double> mean{0.0};  // one value or one per channel
  std::vector<double> std{1.0};
  std::string layout;  // "" = from the input shape (the dim that is 1 or 3 is channels), else nchw | nhwc
  // Canonical text, every key in a fixed order, numbers as %g:
  // "resize=640x640,channels=rgb,scale=0.00392157,mean=0/0/0,std=1/1/1,layout=nchw". A letterbox prints as
  // "resize=keep-aspect:640x640" (or "resize=keep-aspect" with no size yet); a value still to be taken from the
  // input (resize, layout) is left out. ParsePreprocess reads it back.
  std::string ToString() const;
};

// Parses comma-separated key=value pairs, every key optional ("" gives the defaults):
//   resize=HxW | keep-aspect | keep-aspect:HxW   channels=rgb|bgr|gray   scale=X   mean=X[/X/X]   std=X[/X/X]
//   layout=nchw|nhwc
// Errors are InvalidArgument naming the key and value: unknown key (with the nearest known one), a key given
// twice, a bad or non-finite number, scale ≤ 0, a std ≤ 0, mean/std with other than 1 or 3 values, resize not
// HxW (1 ≤ H, W ≤ 65536), an unknown channels or layout value.
Result<Preprocess> ParsePreprocess(const std::string& text);

}  // namespace chipfit
