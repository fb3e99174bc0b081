// Real inputs through the CLI as a user gives them: a folder of images of printed text for PP-OCRv4's
// text detector (map IoU per target, and no target under the accuracy guard recommended), a folder of
// .wav recordings for an audio model, and the bad folders a user meets, each exit 2 naming the file.
#include <gtest/gtest.h>
#include <sndfile.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "resources/data/text_images.h"
#include "tests/app/run_shell.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::Outcome;

Outcome Chipfit(const std::string& args) { return testing::RunShell(std::string(CHIPFIT_CLI) + " " + args + " 2>&1"); }

fs::path ModelCache() {
  const char* env = std::getenv("CHIPFIT_MODEL_CACHE");
  return env ? fs::path(env) : fs::path(CHIPFIT_SOURCE_DIR) / ".cache/models";
}

class RealInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("chipfit_real_inputs_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  json ReadJson(const fs::path& path) {
    std::ifstream in(path);
    return json::parse(in, nullptr, false);
  }

  fs::path dir_;
};

// PP-OCRv4 det on images of printed text (at 1x3x160x160 to keep the test short): the run says which
// files and preprocessing it used, every target reports the map IoU of its probability map against
// cpu:fp32, and the recommendation never ranks a target under the accuracy guard.
TEST_F(RealInputsTest, TextImagesGiveTheDetectorAMapIoUAndTheGuardHolds) {
  const fs::path det = ModelCache() / "ppocrv4_det.onnx";
  if (!fs::exists(det)) GTEST_SKIP() << det << " is missing: run scripts/fetch-models.sh";
  ASSERT_TRUE(WriteTextImages(dir_ / "images", 4, 160, 160).ok());
  const fs::path out = dir_ / "det.json";
  const Outcome o = Chipfit("profile " + det.string() + " --shape x=1x3x160x160 --targets cpu:fp32,cpu:int8 --data " +
                            (dir_ / "images").string() +
                            " --preprocess channels=bgr,mean=0.485/0.456/0.406,std=0.229/0.224/0.225"
                            " --reference cpu:fp32 --min-time 0 --iterations 3 --warmup 1 --no-store --json " +
                            out.string());
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("inputs: 4 images file(s)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("map IoU at 0.3"), std::string::npos) << o.out;
  const json run = ReadJson(out);
  ASSERT_TRUE(run.is_object());
  EXPECT_EQ(run["inputs"]["kind"], "images");
  EXPECT_EQ(run["inputs"]["files"], 4);
  EXPECT_EQ(run["inputs"]["files_sha256"].get<std::string>().size(), 64u);
  EXPECT_NE(run["inputs"]["preprocess"].get<std::string>().find("channels=bgr"), std::string::npos);
  std::map<std::string, double> iou;
  for (const json& t : run["targets"]) {
    ASSERT_EQ(t["status"], "ok") << t.dump();
    const json& tasks = t["accuracy"]["tasks"];
    ASSERT_EQ(tasks.size(), 1u) << t["accuracy"].dump();
    EXPECT_EQ(tasks[0]["task"], "map");
    EXPECT_EQ(tasks[0]["metric"], "map IoU at 0.3");
    EXPECT_EQ(tasks[0]["items"], 4);
    iou[t["target"]] = tasks[0]["agreement"].get<double>();
    EXPECT_FALSE(t["accuracy"]["random_calibration"].get<bool>()) << "int8 calibrates on the images";
  }
  EXPECT_DOUBLE_EQ(iou["cpu:fp32"], 1.0);  // the reference itself
  EXPECT_GT(iou["cpu:int8"], 0.0);
  for (const json& name : run["recommendation"]["ranked"]) {
    EXPECT_GE(iou[name.get<std::string>()], 0.99) << name << " is under the guard but ranked";
  }
}

// A one-input audio model ([1, 16000] → mean power) on .wav files of a tone: the loader's figures
// reach the JSON; a file at another rate is an error naming it and both rates, never resampled.
TEST_F(RealInputsTest, WavFilesFeedAnAudioModelAndAnotherRateIsRefused) {
  onnx::ModelProto m = testing::NewModel("audio");
  onnx::GraphProto* g = m.mutable_graph();
  testing::AddValue(g->mutable_input(), "audio", {1, 16000});
  testing::AddValue(g->mutable_output(), "power", {1, 1});
  testing::AddNode(g, "Mul", {"audio", "audio"}, {"squared"}, "square");
  testing::SetIntAttr(testing::AddNode(g, "ReduceMean", {"squared"}, {"power"}, "mean"), "keepdims", 1);
  const fs::path model = dir_ / "audio.onnx";
  {
    std::ofstream file(model, std::ios::binary);
    ASSERT_TRUE(m.SerializeToOstream(&file));
  }
  auto write_wav = [](const fs::path& path, int rate, int frames, double hz) {
    SF_INFO info{};
    info.samplerate = rate;
    info.channels = 1;
    info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
    SNDFILE* f = sf_open(path.string().c_str(), SFM_WRITE, &info);
    ASSERT_NE(f, nullptr) << sf_strerror(nullptr);
    std::vector<float> tone(static_cast<size_t>(frames));
    for (int i = 0; i < frames; ++i) tone[static_cast<size_t>(i)] = 0.5f * std::sin(2 * M_PI * hz * i / rate);
    sf_writef_float(f, tone.data(), frames);
    sf_close(f);
  };
  fs::create_directories(dir_ / "wav");
  write_wav(dir_ / "wav" / "a.wav", 16000, 16000, 440);
  write_wav(dir_ / "wav" / "b.wav", 16000, 12000, 880);  // shorter: padded with zeros, and said
  const fs::path out = dir_ / "audio.json";
  const Outcome o = Chipfit("profile " + model.string() + " --targets cpu:fp32 --data " + (dir_ / "wav").string() +
                            " --min-time 0 --iterations 3 --warmup 1 --no-store --json " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const json run = ReadJson(out);
  EXPECT_EQ(run["inputs"]["kind"], "audio");
  EXPECT_EQ(run["inputs"]["files"], 2);
  EXPECT_EQ(run["inputs"]["samples"], 2);
  EXPECT_NE(run["inputs"]["notes"].dump().find("padded"), std::string::npos) << run["inputs"].dump();

  write_wav(dir_ / "wav" / "c.wav", 44100, 44100, 440);
  const Outcome rate =
      Chipfit("profile " + model.string() + " --targets cpu:fp32 --data " + (dir_ / "wav").string() + " --no-store");
  EXPECT_EQ(rate.exit_code, 2) << rate.out;
  EXPECT_NE(rate.out.find("c.wav"), std::string::npos) << rate.out;
  EXPECT_NE(rate.out.find("44100"), std::string::npos) << rate.out;
  EXPECT_NE(rate.out.find("16000"), std::string::npos) << rate.out;
}

// What a user gets wrong: a folder with nothing usable, an image that is not one, a misspelt
// preprocessing key. Each is exit 2 before any target runs, naming the folder, file or key.
TEST_F(RealInputsTest, BadFoldersAndPreprocessingAreExitTwoNamingTheCulprit) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  fs::create_directories(dir_ / "empty");
  std::ofstream(dir_ / "empty" / "README.txt") << "no data here";
  Outcome o = Chipfit("profile " + cnn + " --targets cpu:fp32 --no-store --data " + (dir_ / "empty").string());
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find((dir_ / "empty").string()), std::string::npos) << o.out;

  fs::create_directories(dir_ / "broken");
  std::ofstream(dir_ / "broken" / "photo.png") << "this is text, not a PNG";
  o = Chipfit("profile " + cnn + " --targets cpu:fp32 --no-store --data " + (dir_ / "broken").string());
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("photo.png"), std::string::npos) << o.out;

  ASSERT_TRUE(WriteTextImages(dir_ / "images", 1, 32, 32).ok());
  o = Chipfit("profile " + cnn + " --targets cpu:fp32 --no-store --data " + (dir_ / "images").string() +
              " --preprocess colour=bgr");
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("colour"), std::string::npos) << o.out;
  o = Chipfit("profile " + cnn + " --targets cpu:fp32 --no-store --task probabilities=segmentation");
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("probabilities=segmentation"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace chipfit
