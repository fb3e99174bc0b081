// chipfit-make-text-images DIR [COUNT] [WIDTHxHEIGHT]: writes images of printed text (real content for
// --data with text detectors and recognisers; see resources/data/text_images.h).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "resources/data/text_images.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: %s DIR [COUNT] [WIDTHxHEIGHT]   (default: 8 images of 640x640)\n", argv[0]);
    return 2;
  }
  const int count = argc > 2 ? std::atoi(argv[2]) : 8;
  int width = 640, height = 640;
  if (argc > 3 && std::sscanf(argv[3], "%dx%d", &width, &height) != 2) width = 0;
  if (count < 1 || width < 16 || height < 16 || width > 8192 || height > 8192) {
    std::fprintf(stderr, "%s: COUNT must be at least 1 and the size WIDTHxHEIGHT between 16 and 8192\n", argv[0]);
    return 2;
  }
  const chipfit::Status status = chipfit::WriteTextImages(argv[1], count, width, height);
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], status.message().c_str());
    return 2;
  }
  std::printf("wrote %d text image(s) of %dx%d into %s\n", count, width, height, argv[1]);
  return 0;
}
