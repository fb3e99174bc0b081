// --data folders of images and .wav files: ParsePreprocess, resize/channels/normalisation/layout, audio fitting,
// and every bad input, on files the tests write themselves (stb_image_write, libsndfile).
#include <gtest/gtest.h>
#include <sndfile.h>
#include <stb_image_write.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "core/quant/calibration_data.h"
#include "core/quant/input_data.h"
#include "core/quant/preprocess.h"
#include "core/sha256.h"
#include "core/tensor/npy.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;

// ---- ParsePreprocess ----

Preprocess Parse(const std::string& text) {
  auto p = ParsePreprocess(text);
  EXPECT_TRUE(p.ok()) << text << ": " << p.status().ToString();
  return p.ok() ? *p : Preprocess{};
}

// The message of ParsePreprocess's error for `text` (an InvalidArgument), or "" with a failure.
std::string ParseError(const std::string& text) {
  auto p = ParsePreprocess(text);
  EXPECT_FALSE(p.ok()) << text;
  if (p.ok()) return "";
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << text;
  return p.status().message();
}

::testing::AssertionResult Has(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << haystack << "' lacks '" << needle << "'";
}
#define EXPECT_HAS(haystack, needle) EXPECT_TRUE(Has(haystack, needle))

TEST(Preprocess, EmptyTextGivesTheDefaults) {
  const Preprocess p = Parse("");
  EXPECT_FALSE(p.resize.has_value());
  EXPECT_FALSE(p.keep_aspect);
  EXPECT_EQ(p.channels, "rgb");
  EXPECT_DOUBLE_EQ(p.scale, 1.0 / 255.0);
  EXPECT_EQ(p.mean, std::vector<double>{0.0});
  EXPECT_EQ(p.std, std::vector<double>{1.0});
  EXPECT_EQ(p.layout, "");
  // Values still to come from the input (resize, layout) are left out.
  EXPECT_EQ(p.ToString(), "channels=rgb,scale=0.00392157,mean=0,std=1");
  EXPECT_EQ(Parse(" , ").ToString(), p.ToString());
}

TEST(Preprocess, EveryKey) {
  const Preprocess p =
      Parse("resize=640x480,channels=bgr,scale=0.00392157,mean=0.485/0.456/0.406,std=0.229/0.224/0.225,layout=nhwc");
  ASSERT_TRUE(p.resize.has_value());
  EXPECT_EQ(p.resize->first, 640);
  EXPECT_EQ(p.resize->second, 480);
  EXPECT_FALSE(p.keep_aspect);
  EXPECT_EQ(p.channels, "bgr");
  EXPECT_DOUBLE_EQ(p.scale, 0.00392157);
  EXPECT_EQ(p.mean, (std::vector<double>{0.485, 0.456, 0.406}));
  EXPECT_EQ(p.std, (std::vector<double>{0.229, 0.224, 0.225}));
  EXPECT_EQ(p.layout, "nhwc");
  EXPECT_EQ(p.ToString(),
            "resize=640x480,channels=bgr,scale=0.00392157,mean=0.485/0.456/0.406,std=0.229/0.224/0.225,layout=nhwc");
  // The canonical text reads back to the same values.
  EXPECT_EQ(Parse(p.ToString()).ToString(), p.ToString());

  EXPECT_EQ(Parse("channels=gray").channels, "gray");
  EXPECT_EQ(Parse("channels=RGB").channels, "rgb");
  EXPECT_EQ(Parse("layout=nchw").layout, "nchw");
  EXPECT_EQ(Parse("scale=1").scale, 1.0);
  EXPECT_EQ(Parse("mean=127.5").mean, std::vector<double>{127.5});
  EXPECT_EQ(Parse("std= 2 , mean = -1e2").std, std::vector<double>{2.0});
  EXPECT_EQ(Parse("std= 2 , mean = -1e2").mean, std::vector<double>{-100.0});
  EXPECT_EQ(Parse("mean=+1").mean, std::vector<double>{1.0});
}

TEST(Preprocess, KeepAspect) {
  const Preprocess bare = Parse("resize=keep-aspect");
  EXPECT_TRUE(bare.keep_aspect);
  EXPECT_FALSE(bare.resize.has_value());
  EXPECT_EQ(bare.ToString(), "resize=keep-aspect,channels=rgb,scale=0.00392157,mean=0,std=1");
  const Preprocess sized = Parse("resize=keep-aspect:320x640");
  EXPECT_TRUE(sized.keep_aspect);
  ASSERT_TRUE(sized.resize.has_value());
  EXPECT_EQ(sized.resize->first, 320);
  EXPECT_EQ(sized.resize->second, 640);
  EXPECT_HAS(sized.ToString(), "resize=keep-aspect:320x640,");
  EXPECT_EQ(Parse(sized.ToString()).ToString(), sized.ToString());
}

TEST(Preprocess, ErrorsNameTheKeyAndValue) {
  // Unknown keys, with the nearest known one.
  EXPECT_HAS(ParseError("maen=0.5"), "unknown key 'maen'");
  EXPECT_HAS(ParseError("maen=0.5"), "did you mean 'mean'?");
  EXPECT_HAS(ParseError("resise=2x2"), "did you mean 'resize'?");
  EXPECT_HAS(ParseError("chanels=rgb"), "did you mean 'channels'?");
  EXPECT_HAS(ParseError("stdev=1"), "did you mean 'std'?");
  EXPECT_HAS(ParseError("colour=rgb"), "keys: resize, channels, scale, mean, std, layout");
  EXPECT_HAS(ParseError("mean"), "'mean' is not key=value");
  EXPECT_HAS(ParseError("mean=1,mean=2"), "'mean' is given twice");
  // Bad numbers.
  EXPECT_HAS(ParseError("scale=abc"), "scale=abc");
  EXPECT_HAS(ParseError("scale=1/255"), "scale=1/255");
  EXPECT_HAS(ParseError("scale=nan"), "scale=nan");
  EXPECT_HAS(ParseError("scale=inf"), "not a finite number");
  EXPECT_HAS(ParseError("scale=0"), "scale=0: must be greater than 0");
  EXPECT_HAS(ParseError("scale="), "scale=");
  EXPECT_HAS(ParseError("mean=0.5/x/0.5"), "mean=0.5/x/0.5: 'x' is not a finite number");
  EXPECT_HAS(ParseError("mean=1.5e"), "mean=1.5e");
  // std of 0 (and below).
  EXPECT_HAS(ParseError("std=0.2/0/0.2"), "std=0.2/0/0.2: 0 is not > 0");
  EXPECT_HAS(ParseError("std=0"), "std=0");
  EXPECT_HAS(ParseError("std=-1"), "std=-1: -1 is not > 0");
  // Counts other than 1 or 3.
  EXPECT_HAS(ParseError("mean=1/2"), "mean=1/2: 2 values");
  EXPECT_HAS(ParseError("std=1/2/3/4"), "std=1/2/3/4: 4 values");
  // resize not HxW.
  for (const std::string bad : {"640", "640x", "x640", "axb", "0x10", "10x0", "-1x10", "1x2x3", "65537x1",
                                "99999999999999999999x1", "keep-aspect:", "keep-aspectx", "keep-aspect:2"}) {
    EXPECT_HAS(ParseError("resize=" + bad), "resize=" + bad);
  }
  EXPECT_HAS(ParseError("resize=640"), "expected HxW");
  EXPECT_HAS(ParseError("resize=0x10"), "between 1 and 65536");
  // Enumerations.
  EXPECT_HAS(ParseError("channels=yuv"), "channels=yuv: expected rgb, bgr or gray");
  EXPECT_HAS(ParseError("layout=chw"), "layout=chw: expected nchw or nhwc");
}

// ---- files the tests write ----

class InputDataTest : public ::testing::Test {
 protected:
  // One folder per test and process: CTest runs the tests of this file in parallel processes.
  fs::path dir_ = fs::temp_directory_path() / ("chipfit_input_data_test_" + std::to_string(getpid()) + "_" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());

  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static ValueDesc F32Input(const std::string& name, Shape shape) {
    return {name, DType::kF32, true, shape, std::vector<std::string>(shape.size())};
  }

  Result<InputData> Load(const std::vector<ValueDesc>& inputs, const std::string& spec = "", int rate = 16000) {
    InputDataOptions options;
    auto p = ParsePreprocess(spec);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (p.ok()) options.preprocess = *p;
    options.sample_rate = rate;
    return LoadInputData(dir_.string(), inputs, options);
  }

  // The error of Load: an InvalidArgument message, or "" with a failure.
  std::string LoadError(const std::vector<ValueDesc>& inputs, const std::string& spec = "", int rate = 16000) {
    auto data = Load(inputs, spec, rate);
    EXPECT_FALSE(data.ok());
    if (data.ok()) return "";
    EXPECT_EQ(data.status().code(), StatusCode::kInvalidArgument) << data.status().message();
    return data.status().message();
  }
};

// RGB pixels, row-major.
struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> rgb;
  std::array<int, 3> At(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

Image Solid(int w, int h, std::array<int, 3> colour) {
  Image image{w, h, {}};
  for (int i = 0; i < w * h; ++i) {
    for (int c : colour) image.rgb.push_back(static_cast<uint8_t>(c));
  }
  return image;
}

// 4×4: R = 16·x, G = 16·y, B = 100, with a white 2×2 rectangle at x 2–3, y 0–1.
Image GradientWithRectangle() {
  Image image{4, 4, {}};
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) {
      const bool white = x >= 2 && y <= 1;
      image.rgb.push_back(static_cast<uint8_t>(white ? 255 : 16 * x));
      image.rgb.push_back(static_cast<uint8_t>(white ? 255 : 16 * y));
      image.rgb.push_back(static_cast<uint8_t>(white ? 255 : 100));
    }
  }
  return image;
}

void WritePng(const fs::path& path, const Image& image) {
  ASSERT_NE(stbi_write_png(path.c_str(), image.w, image.h, 3, image.rgb.data(), image.w * 3), 0) << path;
}
void WriteBmp(const fs::path& path, const Image& image) {
  ASSERT_NE(stbi_write_bmp(path.c_str(), image.w, image.h, 3, image.rgb.data()), 0) << path;
}
void WriteJpg(const fs::path& path, const Image& image) {
  ASSERT_NE(stbi_write_jpg(path.c_str(), image.w, image.h, 3, image.rgb.data(), 100), 0) << path;
}

void WriteWav(const fs::path& path, const std::vector<int16_t>& frames, int rate = 16000, int channels = 1) {
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
  SNDFILE* file = sf_open(path.c_str(), SFM_WRITE, &info);
  ASSERT_NE(file, nullptr) << sf_strerror(nullptr);
  EXPECT_EQ(sf_writef_short(file, frames.data(), static_cast<sf_count_t>(frames.size()) / channels),
            static_cast<sf_count_t>(frames.size()) / channels);
  sf_close(file);
}

// `count` samples of a 440 Hz sine at half scale, 16 kHz.
std::vector<int16_t> Tone(size_t count) {
  std::vector<int16_t> frames(count);
  for (size_t i = 0; i < count; ++i) {
    const double t = static_cast<double>(i) / 16000.0;
    frames[i] = static_cast<int16_t>(std::lround(16383.0 * std::sin(2.0 * std::numbers::pi * 440.0 * t)));
  }
  return frames;
}

// ---- images ----

TEST_F(InputDataTest, PngAtTheInputSizeIsPixelTimesScaleInNchw) {
  const Image image = GradientWithRectangle();
  WritePng(dir_ / "a.png", image);
  auto data = Load({F32Input("images", {1, 3, 4, 4})});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->kind, "images");
  EXPECT_EQ(data->files, std::vector<std::string>{"a.png"});
  EXPECT_EQ(data->files_sha256, Sha256Hex("a.png\n"));
  EXPECT_EQ(data->preprocess, "resize=4x4,channels=rgb,scale=0.00392157,mean=0/0/0,std=1/1/1,layout=nchw");
  EXPECT_TRUE(data->notes.empty());
  ASSERT_EQ(data->samples.size(), 1u);
  const Tensor& t = data->samples[0].at("images");
  ASSERT_EQ(t.shape(), (Shape{1, 3, 4, 4}));
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 4; ++y) {
      for (int x = 0; x < 4; ++x) {
        EXPECT_FLOAT_EQ(t.data<float>()[(c * 4 + y) * 4 + x], image.At(x, y)[c] / 255.0f) << c << y << x;
      }
    }
  }
  EXPECT_FLOAT_EQ(t.data<float>()[2], 1.0f);                      // R in the white rectangle
  EXPECT_FLOAT_EQ(t.data<float>()[16 + 3 * 4 + 1], 48 / 255.0f);  // G at x 1, y 3
}

TEST_F(InputDataTest, BgrMeanStdInNhwcFromTheShape) {
  WriteBmp(dir_ / "a.bmp", GradientWithRectangle());
  // [N,H,W,C] with C = 3 last: nhwc without being told.
  auto data = Load({F32Input("x", {1, 4, 4, 3})}, "channels=bgr,scale=1,mean=1/2/3,std=2/4/8");
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->preprocess, "resize=4x4,channels=bgr,scale=1,mean=1/2/3,std=2/4/8,layout=nhwc");
  const Tensor& t = data->samples[0].at("x");
  ASSERT_EQ(t.shape(), (Shape{1, 4, 4, 3}));
  const float* v = t.data<float>();
  // White (255, 255, 255) at x 3, y 0: ((255 − mean) / std) per channel.
  EXPECT_FLOAT_EQ(v[(0 * 4 + 3) * 3 + 0], 127.0f);
  EXPECT_FLOAT_EQ(v[(0 * 4 + 3) * 3 + 1], 63.25f);
  EXPECT_FLOAT_EQ(v[(0 * 4 + 3) * 3 + 2], 31.5f);
  // RGB (16, 32, 100) at x 1, y 2; BGR order puts B first: (100−1)/2, (32−2)/4, (16−3)/8.
  EXPECT_FLOAT_EQ(v[(2 * 4 + 1) * 3 + 0], 49.5f);
  EXPECT_FLOAT_EQ(v[(2 * 4 + 1) * 3 + 1], 7.5f);
  EXPECT_FLOAT_EQ(v[(2 * 4 + 1) * 3 + 2], 1.625f);

  // The same image in nchw by layout=: planes B, G, R.
  auto planar = Load({F32Input("x", {1, 3, 4, 4})}, "channels=bgr,scale=1,mean=1/2/3,std=2/4/8,layout=nchw");
  ASSERT_TRUE(planar.ok()) << planar.status().ToString();
  const float* p = planar->samples[0].at("x").data<float>();
  EXPECT_FLOAT_EQ(p[0 * 16 + 2 * 4 + 1], 49.5f);
  EXPECT_FLOAT_EQ(p[1 * 16 + 2 * 4 + 1], 7.5f);
  EXPECT_FLOAT_EQ(p[2 * 16 + 2 * 4 + 1], 1.625f);
  // RGB order: R first, (16 − 1) / 2.
  auto rgb = Load({F32Input("x", {1, 3, 4, 4})}, "scale=1,mean=1/2/3,std=2/4/8");
  ASSERT_TRUE(rgb.ok()) << rgb.status().ToString();
  EXPECT_FLOAT_EQ(rgb->samples[0].at("x").data<float>()[2 * 4 + 1], 7.5f);
}

TEST_F(InputDataTest, ResizeIsBilinearWithHalfPixelCentres) {
  WritePng(dir_ / "a.png", GradientWithRectangle());
  // Unbound H×W: resize= gives them. Halving averages 2×2 blocks.
  auto down = Load({F32Input("x", {1, 3, -1, -1})}, "resize=2x2,scale=1");
  ASSERT_TRUE(down.ok()) << down.status().ToString();
  EXPECT_EQ(down->preprocess, "resize=2x2,channels=rgb,scale=1,mean=0/0/0,std=1/1/1,layout=nchw");
  const Tensor& t = down->samples[0].at("x");
  ASSERT_EQ(t.shape(), (Shape{1, 3, 2, 2}));
  const std::vector<float> expect = {
      8,   255, 8,   40,   // R: (0+16)/2; white; (0+16)/2; (32+48)/2
      8,   255, 40,  40,   // G: (0+16)/2; white; (32+48)/2; (32+48)/2
      100, 255, 100, 100,  // B
  };
  for (size_t i = 0; i < expect.size(); ++i) EXPECT_FLOAT_EQ(t.data<float>()[i], expect[i]) << i;

  // Doubling 2×1 (0, 200): source x = (i + 0.5) / 2 − 0.5 = −0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
  fs::remove(dir_ / "a.png");
  Image pair{2, 1, {0, 0, 0, 200, 200, 200}};
  WritePng(dir_ / "b.png", pair);
  auto up = Load({F32Input("x", {1, 1, 1, 4})}, "channels=gray,scale=1");
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  const float* u = up->samples[0].at("x").data<float>();
  EXPECT_EQ(std::vector<float>(u, u + 4), (std::vector<float>{0, 50, 150, 200}));
}

TEST_F(InputDataTest, KeepAspectLetterboxesCentredWithBlack) {
  // 4 wide × 2 high, white, into 4×4: rows 1–2 are the image, rows 0 and 3 the border.
  WritePng(dir_ / "wide.png", Solid(4, 2, {255, 255, 255}));
  auto data = Load({F32Input("x", {1, 3, 4, 4})}, "resize=keep-aspect,mean=0.5,std=0.5");
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->preprocess,
            "resize=keep-aspect:4x4,channels=rgb,scale=0.00392157,mean=0.5/0.5/0.5,std=0.5/0.5/0.5,layout=nchw");
  const float* v = data->samples[0].at("x").data<float>();
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 4; ++y) {
      for (int x = 0; x < 4; ++x) {
        // Black border: (0 − 0.5) / 0.5; white: (1 − 0.5) / 0.5.
        EXPECT_FLOAT_EQ(v[(c * 4 + y) * 4 + x], y == 0 || y == 3 ? -1.0f : 1.0f) << c << y << x;
      }
    }
  }

  // 2 wide × 4 high into H 4 × W 8, nhwc: columns 3–4 are the image, scaled ×1.
  fs::remove(dir_ / "wide.png");
  WritePng(dir_ / "tall.png", Solid(2, 4, {255, 0, 0}));
  auto tall = Load({F32Input("x", {1, 4, 8, 3})}, "resize=keep-aspect:4x8,scale=1");
  ASSERT_TRUE(tall.ok()) << tall.status().ToString();
  const float* t = tall->samples[0].at("x").data<float>();
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 8; ++x) {
      EXPECT_EQ(t[(y * 8 + x) * 3 + 0], x == 3 || x == 4 ? 255.0f : 0.0f) << y << x;
      EXPECT_EQ(t[(y * 8 + x) * 3 + 1], 0.0f);
    }
  }

  // Scaled down: 8 × 2 into 4 × 4 → 4 × 1 at row 1 ((4 − 1) / 2).
  fs::remove(dir_ / "tall.png");
  WritePng(dir_ / "strip.png", Solid(8, 2, {0, 0, 200}));
  auto strip = Load({F32Input("x", {1, 3, 4, 4})}, "resize=keep-aspect,scale=1");
  ASSERT_TRUE(strip.ok()) << strip.status().ToString();
  const float* s = strip->samples[0].at("x").data<float>();
  for (int y = 0; y < 4; ++y) EXPECT_EQ(s[2 * 16 + y * 4], y == 1 ? 200.0f : 0.0f) << y;
}

TEST_F(InputDataTest, GrayUsesStbLuma) {
  WritePng(dir_ / "a.png", Solid(2, 2, {100, 50, 200}));
  auto data = Load({F32Input("x", {1, 1, 2, 2})}, "channels=gray,scale=1");
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->preprocess, "resize=2x2,channels=gray,scale=1,mean=0,std=1,layout=nchw");
  // (77·100 + 150·50 + 29·200) >> 8 = 21000 >> 8 = 82.
  EXPECT_EQ(data->samples[0].at("x").data<float>()[3], 82.0f);
}

TEST_F(InputDataTest, BatchesTakeConsecutiveImagesSortedByName) {
  WritePng(dir_ / "b.png", Solid(2, 2, {20, 20, 20}));
  WritePng(dir_ / "a.PNG", Solid(2, 2, {10, 10, 10}));
  WriteBmp(dir_ / "c.Bmp", Solid(2, 2, {30, 30, 30}));
  WriteJpg(dir_ / "d.jpg", Solid(2, 2, {40, 40, 40}));
  WriteJpg(dir_ / "e.JPEG", Solid(2, 2, {50, 50, 50}));
  WritePng(dir_ / ".hidden.png", Solid(2, 2, {99, 99, 99}));
  std::ofstream(dir_ / "labels.txt") << "cat\n";
  auto data = Load({F32Input("x", {2, 3, 2, 2})}, "scale=1");
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->files, (std::vector<std::string>{"a.PNG", "b.png", "c.Bmp", "d.jpg"}));
  EXPECT_EQ(data->files_sha256, Sha256Hex("a.PNG\nb.png\nc.Bmp\nd.jpg\n"));
  ASSERT_EQ(data->samples.size(), 2u);
  const float expect[2][2] = {{10, 20}, {30, 40}};
  for (int s = 0; s < 2; ++s) {
    const Tensor& t = data->samples[static_cast<size_t>(s)].at("x");
    ASSERT_EQ(t.shape(), (Shape{2, 3, 2, 2}));
    for (int i = 0; i < 2; ++i) {
      // JPEG is lossy: a flat colour comes back within a step or two.
      EXPECT_NEAR(t.data<float>()[i * 12 + 5], expect[s][i], 2.0) << s << i;
    }
  }
  ASSERT_EQ(data->notes.size(), 2u);
  EXPECT_HAS(data->notes[0], "1 image(s) left out: 5 images do not fill batches of 2");
  EXPECT_HAS(data->notes[1], "1 file ignored");

  EXPECT_HAS(LoadError({F32Input("x", {8, 3, 2, 2})}), "holds 5 image(s); input 'x' takes 8 per sample");
}

TEST_F(InputDataTest, ImageInputErrors) {
  WritePng(dir_ / "a.png", Solid(2, 2, {1, 2, 3}));
  EXPECT_HAS(LoadError({F32Input("img", {1, 3, 2, 2}), F32Input("scale", {1})}),
             "images need one 4-D image input ([N,C,H,W] or [N,H,W,C]); the model has 2 inputs: 'img' (f32, "
             "1x3x2x2), 'scale' (f32, 1)");
  EXPECT_HAS(LoadError({F32Input("seq", {1, 3, 2})}), "images need one 4-D image input");
  EXPECT_HAS(LoadError({}), "the model has 0 inputs: none");
  ValueDesc u8 = F32Input("img", {1, 3, 2, 2});
  u8.dtype = DType::kU8;
  EXPECT_HAS(LoadError({u8}), "input 'img' is u8; images are read only into f32 inputs");
  EXPECT_HAS(LoadError({F32Input("img", {1, 3, -1, -1})}),
             "has no bound HxW to resize images to; bind it with --shape img=1x3xHxW or give resize=HxW");
  EXPECT_HAS(LoadError({F32Input("img", {1, -1, -1, 3})}), "--shape img=1xHxWx3");
  EXPECT_HAS(LoadError({F32Input("img", {-1, 3, 2, 2})}), "has no bound batch dim; bind it with --shape img=1x3x2x2");
  EXPECT_HAS(LoadError({F32Input("img", {1, 3, 2, 2})}, "resize=4x4"), "resize=4x4 does not fit input 'img' (1x3x2x2)");
  EXPECT_HAS(LoadError({F32Input("img", {1, 8, 8, 8})}), "neither dim 1 nor dim 3 is 1 or 3; give layout=nchw or nhwc");
  EXPECT_HAS(LoadError({F32Input("img", {1, 8, 8, 8})}, "layout=nchw"), "has 8 channels; images give 1 or 3");
  EXPECT_HAS(LoadError({F32Input("img", {1, 1, 2, 2})}), "has 1 channel but channels=rgb; give channels=gray");
  EXPECT_HAS(LoadError({F32Input("img", {1, 3, 2, 2})}, "channels=gray"), "has 3 channels but channels=gray");
  EXPECT_HAS(LoadError({F32Input("img", {1, 1, 2, 2})}, "channels=gray,mean=1/2/3"),
             "mean has 3 values, input 'img' has 1 channel");
  EXPECT_HAS(LoadError({F32Input("img", {1, 3, 100000, 100000})}), "values per sample, more than");
  // An unknown dtype and an unknown channel count are read as f32 and as the spec's channels.
  ValueDesc loose{"img", DType::kUndefined, true, {1, -1, 2, 2}, {}};
  auto data = Load({loose}, "layout=nchw");
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->samples[0].at("img").shape(), (Shape{1, 3, 2, 2}));
}

TEST_F(InputDataTest, UndecodableImagesNameTheFile) {
  const std::vector<ValueDesc> inputs = {F32Input("x", {1, 3, 4, 4})};
  // A PNG cut in half.
  WritePng(dir_ / "cut.png", GradientWithRectangle());
  const auto size = fs::file_size(dir_ / "cut.png");
  fs::resize_file(dir_ / "cut.png", size / 2);
  std::string message = LoadError(inputs);
  EXPECT_HAS(message, "cannot decode image '" + (dir_ / "cut.png").string() + "': ");
  EXPECT_GT(message.size(), message.find("': ") + 3) << message;  // stb's reason follows
  fs::remove(dir_ / "cut.png");
  // Text named .png and .jpg.
  std::ofstream(dir_ / "notes.png") << "this is not an image\n";
  message = LoadError(inputs);
  EXPECT_HAS(message, "cannot decode image '" + (dir_ / "notes.png").string() + "': ");
  EXPECT_GT(message.size(), message.find("': ") + 3) << message;
  fs::rename(dir_ / "notes.png", dir_ / "notes.jpg");
  EXPECT_HAS(LoadError(inputs), "notes.jpg");
  // An empty file.
  fs::remove(dir_ / "notes.jpg");
  std::ofstream(dir_ / "empty.bmp").close();
  EXPECT_HAS(LoadError(inputs), "empty.bmp");
}

TEST_F(InputDataTest, EveryTruncationIsAnErrorNamingTheFileOrDecodes) {
  // stb reads zeros past a PNG's end and names the zero chunk type in its reason (an empty or cut-short text): the
  // message must still say what went wrong. JPEG, BMP and WAV may decode a cut file (a partial image, fewer
  // samples); either way nothing crashes and an error names the file.
  WritePng(dir_ / "a.png", GradientWithRectangle());
  WriteJpg(dir_ / "b.jpg", GradientWithRectangle());
  WriteBmp(dir_ / "c.bmp", GradientWithRectangle());
  WriteWav(dir_ / "d.wav", Tone(64));
  const std::vector<std::pair<std::string, std::vector<ValueDesc>>> cases = {
      {"a.png", {F32Input("x", {1, 3, 4, 4})}},
      {"b.jpg", {F32Input("x", {1, 3, 4, 4})}},
      {"c.bmp", {F32Input("x", {1, 3, 4, 4})}},
      {"d.wav", {F32Input("x", {64})}},
  };
  std::map<std::string, std::string> files;  // one file at a time in the folder: each is its own kind
  for (const auto& [name, inputs] : cases) {
    std::ifstream in(dir_ / name, std::ios::binary);
    files[name].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    in.close();
    fs::remove(dir_ / name);
  }
  for (const auto& [name, inputs] : cases) {
    const std::string& bytes = files[name];
    for (size_t size = 0; size < bytes.size(); ++size) {
      std::ofstream(dir_ / name, std::ios::binary) << bytes.substr(0, size);
      auto data = Load(inputs);
      if (name == "a.png" && size + 12 < bytes.size()) {  // stb needs no IEND (the last 12 bytes) after the pixels
        EXPECT_FALSE(data.ok()) << size;
      }
      if (!data.ok()) {
        const std::string message = data.status().message();
        EXPECT_HAS(message, "'" + (dir_ / name).string() + "': ");
        EXPECT_GE(message.size(), message.find("': ") + 3 + 5) << message;  // a reason follows
        EXPECT_TRUE(std::all_of(message.begin(), message.end(), [](char c) { return c >= 0x20 && c < 0x7f; }))
            << message;
      }
    }
    fs::remove(dir_ / name);
  }
}

// ---- audio ----

TEST_F(InputDataTest, ToneWavSampleBySample) {
  const std::vector<int16_t> tone = Tone(16000);
  WriteWav(dir_ / "tone.wav", tone);
  auto data = Load({F32Input("audio", {16000})});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->kind, "audio");
  EXPECT_EQ(data->files, std::vector<std::string>{"tone.wav"});
  EXPECT_EQ(data->files_sha256, Sha256Hex("tone.wav\n"));
  EXPECT_EQ(data->preprocess, "sample_rate=16000,samples=16000,padded=0,truncated=0");
  EXPECT_TRUE(data->notes.empty());
  ASSERT_EQ(data->samples.size(), 1u);
  const Tensor& t = data->samples[0].at("audio");
  ASSERT_EQ(t.shape(), (Shape{16000}));
  for (size_t i = 0; i < tone.size(); ++i) {
    // libsndfile reads 16-bit PCM as s / 32768.
    ASSERT_EQ(t.data<float>()[i], static_cast<float>(tone[i]) / 32768.0f) << i;
  }
  EXPECT_NEAR(t.data<float>()[9], 0.5 * std::sin(2.0 * std::numbers::pi * 440.0 * 9.0 / 16000.0), 1e-4);
}

TEST_F(InputDataTest, WavFilesArePaddedOrTruncatedAndBatched) {
  const std::vector<int16_t> tone = Tone(20000);
  WriteWav(dir_ / "a_short.wav", std::vector<int16_t>(tone.begin(), tone.begin() + 4000));
  WriteWav(dir_ / "b_exact.WAV", std::vector<int16_t>(tone.begin(), tone.begin() + 8000));
  WriteWav(dir_ / "c_long.wav", tone);
  auto data = Load({F32Input("pcm", {1, 8000})});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->files, (std::vector<std::string>{"a_short.wav", "b_exact.WAV", "c_long.wav"}));
  EXPECT_EQ(data->preprocess, "sample_rate=16000,samples=8000,padded=1,truncated=1");
  EXPECT_EQ(data->notes,
            (std::vector<std::string>{"1 file padded with zeros to 8000 samples", "1 file truncated to 8000 samples"}));
  ASSERT_EQ(data->samples.size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    const Tensor& t = data->samples[s].at("pcm");
    ASSERT_EQ(t.shape(), (Shape{1, 8000}));
    for (size_t i = 0; i < 8000; ++i) {
      const float expect = s == 0 && i >= 4000 ? 0.0f : static_cast<float>(tone[i]) / 32768.0f;
      ASSERT_EQ(t.data<float>()[i], expect) << s << " " << i;
    }
  }
  // Two files per sample: one sample, the third file left out.
  auto batched = Load({F32Input("pcm", {2, 8000})});
  ASSERT_TRUE(batched.ok()) << batched.status().ToString();
  ASSERT_EQ(batched->samples.size(), 1u);
  EXPECT_EQ(batched->files, (std::vector<std::string>{"a_short.wav", "b_exact.WAV"}));
  EXPECT_EQ(batched->samples[0].at("pcm").data<float>()[8000 + 7999], static_cast<float>(tone[7999]) / 32768.0f);
  EXPECT_HAS(batched->notes.back(), "1 .wav file(s) left out");
  EXPECT_HAS(LoadError({F32Input("pcm", {4, 8000})}), "holds 3 .wav file(s); input 'pcm' takes 4 per sample");
}

TEST_F(InputDataTest, WavErrorsNameTheFile) {
  WriteWav(dir_ / "ok.wav", Tone(100));
  const std::vector<ValueDesc> inputs = {F32Input("pcm", {100})};
  ASSERT_TRUE(Load(inputs).ok());

  WriteWav(dir_ / "slow.wav", Tone(100), 8000);
  EXPECT_HAS(LoadError(inputs), "'" + (dir_ / "slow.wav").string() + "' is 8000 Hz, expected 16000 Hz");
  EXPECT_HAS(LoadError(inputs, "", 8000), "'" + (dir_ / "ok.wav").string() + "' is 16000 Hz, expected 8000 Hz");
  fs::remove(dir_ / "slow.wav");

  WriteWav(dir_ / "stereo.wav", Tone(200), 16000, 2);
  EXPECT_HAS(LoadError(inputs), "'" + (dir_ / "stereo.wav").string() + "' has 2 channels");
  fs::remove(dir_ / "stereo.wav");

  std::ofstream(dir_ / "text.wav") << "RIFF? no, just text\n";
  std::string message = LoadError(inputs);
  EXPECT_HAS(message, "cannot decode '" + (dir_ / "text.wav").string() + "': ");
  EXPECT_GT(message.size(), message.find("': ") + 3) << message;  // sf_strerror's reason follows
  fs::remove(dir_ / "text.wav");

  EXPECT_HAS(LoadError({F32Input("pcm", {-1})}),
             "needs bound dims to fit .wav files to; bind it with --shape pcm=SAMPLES");
  EXPECT_HAS(LoadError({F32Input("pcm", {-1, 100})}), "--shape pcm=1x100");
  EXPECT_HAS(LoadError({F32Input("pcm", {1, 1, 100})}), ".wav files need one input of rank 1 ([samples]) or 2");
  EXPECT_HAS(LoadError({F32Input("a", {100}), F32Input("b", {100})}), "the model has 2 inputs: 'a' (f32, 100), 'b'");
  ValueDesc i16 = F32Input("pcm", {100});
  i16.dtype = DType::kI16;
  EXPECT_HAS(LoadError({i16}), "input 'pcm' is i16; .wav files are read only into f32 inputs");
  EXPECT_HAS(LoadError(inputs, "", 0), "sample rate 0 is not > 0");
}

// ---- folders ----

TEST_F(InputDataTest, EmptyMixedAndMissingFolders) {
  const std::vector<ValueDesc> inputs = {F32Input("x", {1, 3, 2, 2})};
  std::ofstream(dir_ / "readme.md") << "data\n";
  fs::create_directories(dir_ / "empty_sub");
  std::string message = LoadError(inputs);
  EXPECT_HAS(message, "'" + dir_.string() + "' holds no usable file");
  EXPECT_HAS(message, ".npy");
  EXPECT_HAS(message, ".png .jpg .jpeg .bmp");
  EXPECT_HAS(message, ".wav");

  WritePng(dir_ / "a.png", Solid(2, 2, {0, 0, 0}));
  WriteWav(dir_ / "b.wav", Tone(10));
  message = LoadError(inputs);
  EXPECT_HAS(message, "mixes images (1, e.g. 'a.png') and .wav files (1, e.g. 'b.wav')");

  auto missing = LoadInputData((dir_ / "nope").string(), inputs, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_HAS(missing.status().message(), "nope");
}

TEST_F(InputDataTest, NpyFoldersBehaveAsLoadCalibrationData) {
  const std::vector<ValueDesc> inputs = {F32Input("images:0", {1, 2}), {"mask", DType::kI64, true, {2}, {""}}};
  Tensor image(DType::kF32, {1, 2});
  image.data<float>()[1] = 7.0f;
  // A loose .npy set wins over images next to it.
  ASSERT_TRUE(WriteNpy(dir_ / "images_0.npy", image).ok());
  ASSERT_TRUE(WriteNpy(dir_ / "mask.npy", Tensor(DType::kI64, {2})).ok());
  WritePng(dir_ / "ignored.png", Solid(2, 2, {0, 0, 0}));
  auto flat = Load(inputs);
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  EXPECT_EQ(flat->kind, "npy");
  EXPECT_EQ(flat->preprocess, "");
  EXPECT_EQ(flat->files, (std::vector<std::string>{"images_0.npy", "mask.npy"}));
  EXPECT_EQ(flat->files_sha256, Sha256Hex("images_0.npy\nmask.npy\n"));
  ASSERT_EQ(flat->samples.size(), 1u);
  EXPECT_EQ(flat->samples[0].at("images:0").data<float>()[1], 7.0f);

  // Sample sub-folders, sorted by name.
  fs::remove_all(dir_);
  for (const std::string sub : {"s2", "s1"}) {
    fs::create_directories(dir_ / sub);
    ASSERT_TRUE(WriteNpy(dir_ / sub / "images_0.npy", image).ok());
    ASSERT_TRUE(WriteNpy(dir_ / sub / "mask.npy", Tensor(DType::kI64, {2})).ok());
  }
  auto nested = Load(inputs);
  ASSERT_TRUE(nested.ok()) << nested.status().ToString();
  EXPECT_EQ(nested->kind, "npy");
  EXPECT_EQ(nested->samples.size(), 2u);
  EXPECT_EQ(nested->files,
            (std::vector<std::string>{"s1/images_0.npy", "s1/mask.npy", "s2/images_0.npy", "s2/mask.npy"}));

  // LoadCalibrationData's errors come through unchanged.
  fs::remove(dir_ / "s2" / "mask.npy");
  auto broken = Load(inputs);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().message(), LoadCalibrationData(dir_.string(), inputs).status().message());
}

}  // namespace
}  // namespace chipfit
