// Images of printed text, made by the project: real content (glyph strokes on paper) for the text
// detector and recogniser checks, where random inputs show nothing a user would read off the output.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"

namespace chipfit {

struct TextImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // width × height × 3, row-major
};

// Lines of text in dark ink on light, slightly uneven paper: stb_easy_font's strokes scaled by
// `scale` pixels per font unit, each line at a deterministic place and size drawn from `seed`.
TextImage RenderTextImage(int width, int height, const std::vector<std::string>& lines, int scale, uint32_t seed);

// `count` such images (text_00.png, text_01.png …) of width × height in `dir`, each with other words;
// the same arguments always write the same bytes.
Status WriteTextImages(const std::filesystem::path& dir, int count, int width, int height);

}  // namespace chipfit
