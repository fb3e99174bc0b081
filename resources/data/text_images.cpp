// Text images of text_images.h: stb_easy_font gives each glyph as axis-aligned quads, filled here.
#include "resources/data/text_images.h"

#include <stb_easy_font.h>
#include <stb_image_write.h>

#include <algorithm>
#include <array>
#include <random>

namespace chipfit {
namespace {

constexpr std::array<const char*, 24> kWords = {
    "INVOICE", "TOTAL",  "2026-11-25", "chipfit", "Profile", "latency", "0.524 ms", "Order No. 4471",
    "Berlin",  "Tokyo",  "ACCURACY",   "bf16",    "int8",    "SQNR",    "Paper",    "receipt 19.99",
    "EXIT",    "Gate 7", "model.onnx", "Hello",   "Welcome", "Page 3",  "NOTICE",   "42"};

void Fill(TextImage& image, int x0, int y0, int x1, int y1, const std::array<uint8_t, 3>& ink) {
  x0 = std::clamp(x0, 0, image.width);
  x1 = std::clamp(x1, 0, image.width);
  y0 = std::clamp(y0, 0, image.height);
  y1 = std::clamp(y1, 0, image.height);
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) {
      std::copy(ink.begin(), ink.end(), image.rgb.begin() + (static_cast<ptrdiff_t>(y) * image.width + x) * 3);
    }
  }
}

}  // namespace

TextImage RenderTextImage(int width, int height, const std::vector<std::string>& lines, int scale, uint32_t seed) {
  TextImage image{width, height, std::vector<uint8_t>(static_cast<size_t>(width) * height * 3)};
  std::mt19937 rng(seed);
  // Paper: light, with a gentle gradient, so the background is not one flat value.
  const int base = 215 + static_cast<int>(rng() % 30);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const int shade = std::clamp(base - (x + y) * 20 / (width + height), 0, 255);
      uint8_t* p = &image.rgb[(static_cast<size_t>(y) * width + x) * 3];
      p[0] = static_cast<uint8_t>(shade);
      p[1] = static_cast<uint8_t>(std::clamp(shade - 4, 0, 255));
      p[2] = static_cast<uint8_t>(std::clamp(shade - 12, 0, 255));
    }
  }
  // stb_easy_font: 4 vertices (x, y, z floats + 4 colour bytes) per quad; about 270 bytes per glyph.
  std::vector<char> quads(64 * 1024);
  int y = height / 12 + static_cast<int>(rng() % 8);
  for (const std::string& line : lines) {
    const int s = std::max(1, scale + static_cast<int>(rng() % 3) - 1);
    const int x = width / 16 + static_cast<int>(rng() % std::max(1, width / 8));
    const std::array<uint8_t, 3> ink = {static_cast<uint8_t>(rng() % 50), static_cast<uint8_t>(rng() % 50),
                                        static_cast<uint8_t>(rng() % 70)};
    std::string text = line;
    const int n = stb_easy_font_print(0, 0, text.data(), nullptr, quads.data(), static_cast<int>(quads.size()));
    for (int q = 0; q < n; ++q) {
      const auto* v = reinterpret_cast<const float*>(quads.data() + static_cast<size_t>(q) * 64);
      // Vertex 0 and 2 are opposite corners (x, y at float offsets 0, 1 and 8, 9).
      Fill(image, x + static_cast<int>(v[0] * s), y + static_cast<int>(v[1] * s), x + static_cast<int>(v[8] * s),
           y + static_cast<int>(v[9] * s), ink);
    }
    y += 12 * s + static_cast<int>(rng() % (4 * s + 1));
    if (y > height - 8 * s) break;
  }
  return image;
}

Status WriteTextImages(const std::filesystem::path& dir, int count, int width, int height) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError("cannot create '" + dir.string() + "': " + ec.message());
  for (int i = 0; i < count; ++i) {
    std::mt19937 rng(static_cast<uint32_t>(i) * 7919u + 1u);
    std::vector<std::string> lines;
    const int n = 3 + static_cast<int>(rng() % 4);
    for (int l = 0; l < n; ++l) {
      std::string line = kWords[rng() % kWords.size()];
      if (rng() % 2) line += std::string(" ") + kWords[rng() % kWords.size()];
      lines.push_back(line);
    }
    const int scale = std::max(2, height / 120) + static_cast<int>(rng() % 3);
    const TextImage image = RenderTextImage(width, height, lines, scale, static_cast<uint32_t>(i) + 100u);
    char name[32];
    std::snprintf(name, sizeof name, "text_%02d.png", i);
    const std::filesystem::path path = dir / name;
    if (stbi_write_png(path.string().c_str(), width, height, 3, image.rgb.data(), width * 3) == 0) {
      return IoError("cannot write '" + path.string() + "'");
    }
  }
  return Status::Ok();
}

}  // namespace chipfit
