// Real model inputs from a --data folder: .npy samples, images (PNG/JPEG/BMP through a Preprocess) or mono .wav.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/quant/preprocess.h"
#include "core/status.h"
#include "core/tensor/tensor.h"

namespace chipfit {

struct InputDataOptions {
  Preprocess preprocess;    // images only
  int sample_rate = 16000;  // .wav only: every file must have this rate (never resampled)
};

struct InputData {
  std::vector<std::map<std::string, Tensor>> samples;  // one map per sample, input name → tensor
  std::string kind;                                    // "npy" | "images" | "audio"
  std::vector<std::string> files;                      // the files used, in order, relative to DIR ('/'-separated)
  // SHA-256 (hex) of the file list text (each relative path + '\n'), so two runs can tell they used the same files.
  std::string files_sha256;
  // Preprocess::ToString() as resolved against the input ("resize=224x224,...,layout=nchw") for images; "" for
  // npy; for audio "sample_rate=16000,samples=16000,padded=3,truncated=1" (counts of files fitted to the length).
  std::string preprocess;
  std::vector<std::string> notes;  // e.g. "3 files padded with zeros to 16000 samples"
};

// Reads DIR by what it holds (hidden files skipped; file names sorted by their bytes):
//  - .npy files, or sub-folders of .npy files: exactly LoadCalibrationData (kind "npy").
//  - images (.png .jpg .jpeg .bmp, any case): the model must have exactly one f32 input of rank 4, with 1 or 3
//    channels (layout from the spec or the shape) and a bound batch dim N; H×W from resize= or the bound shape.
//    Each sample takes N consecutive images; images that do not fill a last batch are left out (with a note).
//  - .wav files: the model must have exactly one f32 input [samples] or [N, samples] with bound dims; each file
//    mono at options.sample_rate; shorter files are zero-padded at the end, longer ones keep their start. Values
//    in [-1, 1] as libsndfile reads them (16-bit PCM: s / 32768). N consecutive files make a sample.
// Errors: NotFound for a missing folder; InvalidArgument for a folder with no usable file, one mixing images and
// .wav, an input that does not fit the kind, or a file that cannot be decoded (naming the file and the decoder's
// reason). Other files in an image or .wav folder are ignored, with a note.
Result<InputData> LoadInputData(const std::string& dir, const std::vector<ValueDesc>& inputs,
                                const InputDataOptions& options);

}  // namespace chipfit
