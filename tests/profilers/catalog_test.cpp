// The hardware catalog: the shipped files load and are sourced; bad files fail naming file and key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "profilers/projection/catalog.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kShippedIds = {"t4",        "l4",           "a10",           "a100-sxm",
                                           "h100-sxm",  "h100-pcie",    "inferentia2",   "tpu-v5e",
                                           "gaudi2",    "xeon-8380",    "xeon-8480plus", "xeon-8580",
                                           "epyc-9654", "apple-m4-gpu", "apple-m4-ane",  "snapdragon-x-elite-npu"};

// A small valid device; each bad-input test breaks one thing in it.
const char* const kGood = R"(id: toy
name: Toy GPU
vendor: Nobody
kind: gpu
compute_units: 4
clock_ghz: 1.5
peak_gflops:
  fp32: 1000
  fp16: 4000
memory_bandwidth_gbs: 100
memory_gb: 8
tdp_w: 50
idle_w: 5
sources:
  compute_units: {source: "toy datasheet", date: "2024-01"}
  clock_ghz: {source: "toy datasheet", date: "2024-01"}
  peak_gflops.fp32: {source: "toy datasheet", date: "2024-01"}
  peak_gflops.fp16: {source: "toy datasheet", date: "2024-01"}
  memory_bandwidth_gbs: {source: "toy datasheet", date: "2024-01"}
  memory_gb: {source: "toy datasheet", date: "2024-01"}
  tdp_w: {source: "toy datasheet", date: "2024-01"}
  idle_w: {source: "estimate: a tenth of tdp", date: "2024-01"}
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The error of parsing `text` as toy.yaml; fails the test when it parses.
std::string ErrorOf(const std::string& text) {
  auto spec = ParseHardwareYaml(text, "toy.yaml");
  EXPECT_FALSE(spec.ok()) << "parsed:\n" << text;
  return spec.ok() ? "" : spec.status().message();
}

// A fresh directory per test, removed afterwards.
class CatalogDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("chipfit_catalog_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  fs::path dir_;
};

TEST(CatalogTest, ShippedCatalogLoads) {
  EXPECT_EQ(fs::weakly_canonical(DefaultHardwareDir()),
            fs::weakly_canonical(fs::path(CHIPFIT_SOURCE_DIR) / "resources" / "hardware"));
  auto catalog = LoadHardwareCatalog(DefaultHardwareDir());
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  ASSERT_GE(catalog->size(), 14u);
  std::set<std::string> ids;
  for (const HardwareSpec& spec : *catalog) {
    ids.insert(spec.id);
    // One file per device, named after it, so a user finds the one to copy.
    EXPECT_EQ(fs::path(spec.file).filename().string(), spec.id + ".yaml");
  }
  for (const std::string& id : kShippedIds) EXPECT_TRUE(ids.count(id)) << id;
  for (size_t i = 1; i < catalog->size(); ++i) EXPECT_LT((*catalog)[i - 1].id, (*catalog)[i].id);
}

// The loader enforces it too; this says it of the shipped files in one place, figure by figure.
TEST(CatalogTest, EveryShippedFigureHasASource) {
  auto catalog = LoadHardwareCatalog(DefaultHardwareDir());
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  for (const HardwareSpec& spec : *catalog) {
    std::vector<std::string> keys = {"compute_units", "clock_ghz", "memory_bandwidth_gbs",
                                     "memory_gb",     "tdp_w",     "idle_w"};
    for (const auto& [precision, gflops] : spec.peak_gflops) {
      keys.push_back("peak_gflops." + std::string(PrecisionName(precision)));
    }
    if (spec.on_chip_memory_mb) keys.push_back("on_chip_memory_mb");
    if (spec.matrix_tile) keys.push_back("matrix_tile");
    if (spec.price_per_hour_usd) keys.push_back("price_per_hour_usd");
    for (const std::string& key : keys) {
      ASSERT_TRUE(spec.sources.count(key)) << spec.id << ": " << key;
      EXPECT_FALSE(spec.sources.at(key).source.empty()) << spec.id << ": " << key;
      EXPECT_FALSE(spec.sources.at(key).date.empty()) << spec.id << ": " << key;
    }
  }
}

TEST(CatalogTest, ShippedFiguresAreDense) {
  auto catalog = LoadHardwareCatalog(DefaultHardwareDir());
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  std::map<std::string, HardwareSpec> by_id;
  for (const HardwareSpec& spec : *catalog) by_id[spec.id] = spec;
  const HardwareSpec& t4 = by_id.at("t4");
  EXPECT_FALSE(t4.Supports(Precision::kBf16));  // Turing has neither
  EXPECT_FALSE(t4.Supports(Precision::kTf32));
  EXPECT_TRUE(t4.Supports(Precision::kFp16));
  // NVIDIA's datasheet headline for H100 SXM fp16 is 1979 TFLOPS with 2:4 sparsity; dense is half.
  const HardwareSpec& h100 = by_id.at("h100-sxm");
  ASSERT_TRUE(h100.Supports(Precision::kFp16));
  EXPECT_LT(h100.peak_gflops.at(Precision::kFp16), 1000e3);
  EXPECT_GT(h100.peak_gflops.at(Precision::kFp16), 900e3);
  EXPECT_LT(by_id.at("a100-sxm").peak_gflops.at(Precision::kFp16), 400e3);  // 312 dense, 624 sparse
  EXPECT_LT(by_id.at("l4").peak_gflops.at(Precision::kFp16), 130e3);        // 121 dense, 242 sparse
  for (const auto& [id, spec] : by_id) {
    // tf32 is a tensor-core mode from Ampere on (and the accelerators that copied it): never on a CPU.
    if (spec.kind == "cpu") {
      EXPECT_FALSE(spec.Supports(Precision::kTf32)) << id;
    }
    EXPECT_LT(spec.idle_w, spec.tdp_w) << id;
  }
}

TEST(CatalogTest, RoundTripsThroughYaml) {
  auto catalog = LoadHardwareCatalog(DefaultHardwareDir());
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  for (const HardwareSpec& spec : *catalog) {
    const std::string yaml = HardwareSpecToYaml(spec);
    auto back = ParseHardwareYaml(yaml, spec.file);
    ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << yaml;
    EXPECT_EQ(*back, spec) << yaml;
  }
  // One built in code, with awkward text and numbers that print long.
  HardwareSpec odd;
  odd.id = "odd-1.0+";
  odd.name = "Odd: \"quoted\" # not a comment";
  odd.kind = "npu";
  odd.compute_units = 3;
  odd.clock_ghz = 1.0 / 3.0;
  odd.peak_gflops = {{Precision::kInt8, 1e7 / 3}, {Precision::kBf16, 0.1}};
  odd.memory_bandwidth_gbs = 68.25;
  odd.memory_gb = 2;
  odd.matrix_tile = std::array<int, 3>{8, 128, 128};
  odd.tdp_w = 5;
  odd.idle_w = 0;
  odd.launch_overhead = "npu";
  for (const char* key : {"compute_units", "clock_ghz", "peak_gflops.int8", "peak_gflops.bf16", "memory_bandwidth_gbs",
                          "memory_gb", "matrix_tile", "tdp_w", "idle_w"}) {
    odd.sources[key] = {"line one\nline two: é", ""};
  }
  odd.notes = {"- a dash", "yes"};
  auto back = ParseHardwareYaml(HardwareSpecToYaml(odd), "");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << HardwareSpecToYaml(odd);
  EXPECT_EQ(*back, odd) << HardwareSpecToYaml(odd);
}

TEST(CatalogTest, TheToyParses) {
  auto spec = ParseHardwareYaml(kGood, "toy.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->id, "toy");
  EXPECT_EQ(spec->file, "toy.yaml");
  EXPECT_EQ(spec->launch_overhead, "gpu");  // defaults to the kind
  EXPECT_TRUE(spec->Supports(Precision::kFp16));
  EXPECT_FALSE(spec->Supports(Precision::kInt8));
  EXPECT_FALSE(spec->on_chip_memory_mb.has_value());
  EXPECT_FALSE(spec->price_per_hour_usd.has_value());
}

TEST(CatalogTest, AFigureWithoutASourceIsAnError) {
  const std::string error =
      ErrorOf(Replace(kGood, "  peak_gflops.fp16: {source: \"toy datasheet\", date: \"2024-01\"}\n", ""));
  EXPECT_NE(error.find("toy.yaml"), std::string::npos) << error;
  EXPECT_NE(error.find("peak_gflops.fp16"), std::string::npos) << error;
  EXPECT_NE(error.find("sources"), std::string::npos) << error;
  // An optional figure needs one as much as a required one does.
  const std::string price = ErrorOf(std::string(kGood) + "price_per_hour_usd: 1.5\n");
  EXPECT_NE(price.find("toy.yaml: key price_per_hour_usd"), std::string::npos) << price;
  // An empty source is no source.
  const std::string empty = ErrorOf(Replace(kGood, "{source: \"toy datasheet\", date: \"2024-01\"}\n  clock_ghz",
                                            "{source: \"\", date: \"2024-01\"}\n  clock_ghz"));
  EXPECT_NE(empty.find("toy.yaml: key sources.compute_units.source"), std::string::npos) << empty;
}

TEST(CatalogTest, ANegativeBandwidthIsAnError) {
  const std::string error = ErrorOf(Replace(kGood, "memory_bandwidth_gbs: 100", "memory_bandwidth_gbs: -100"));
  EXPECT_NE(error.find("toy.yaml: key memory_bandwidth_gbs: must be a positive number"), std::string::npos) << error;
  EXPECT_NE(error.find("(line 10)"), std::string::npos) << error;
  const std::string text = ErrorOf(Replace(kGood, "memory_bandwidth_gbs: 100", "memory_bandwidth_gbs: fast"));
  EXPECT_NE(text.find("toy.yaml: key memory_bandwidth_gbs: must be a number, not 'fast'"), std::string::npos) << text;
  const std::string units = ErrorOf(Replace(kGood, "compute_units: 4", "compute_units: 4.5"));
  EXPECT_NE(units.find("toy.yaml: key compute_units: must be a positive whole number"), std::string::npos) << units;
}

TEST(CatalogTest, AnUnknownPrecisionIsAnError) {
  const std::string error = ErrorOf(Replace(kGood, "  fp16: 4000\n", "  fp16: 4000\n  fp64: 500\n"));
  EXPECT_NE(error.find("toy.yaml: key peak_gflops.fp64: unknown precision"), std::string::npos) << error;
  const std::string none = ErrorOf(Replace(kGood, "  fp32: 1000\n  fp16: 4000\n", "  {}\n"));
  EXPECT_NE(none.find("toy.yaml: key peak_gflops"), std::string::npos) << none;
}

TEST(CatalogTest, AnUnknownKeyIsAnError) {
  const std::string error = ErrorOf(std::string(kGood) + "tdp: 60\nmemory_bw: 3\n");
  EXPECT_NE(error.find("toy.yaml: unknown keys tdp (line 23), memory_bw (line 24)"), std::string::npos) << error;
  const std::string kind = ErrorOf(Replace(kGood, "kind: gpu", "kind: fpga"));
  EXPECT_NE(kind.find("toy.yaml: key kind: 'fpga' is not one of cpu, gpu, npu, accelerator"), std::string::npos)
      << kind;
  const std::string launch = ErrorOf(std::string(kGood) + "launch_overhead: slow\n");
  EXPECT_NE(launch.find("toy.yaml: key launch_overhead"), std::string::npos) << launch;
  const std::string missing = ErrorOf(Replace(kGood, "tdp_w: 50\n", ""));
  EXPECT_NE(missing.find("toy.yaml: key tdp_w: missing"), std::string::npos) << missing;
  const std::string id = ErrorOf(Replace(kGood, "id: toy", "id: Toy_GPU"));
  EXPECT_NE(id.find("toy.yaml: key id: 'Toy_GPU' must be lowercase"), std::string::npos) << id;
  const std::string source = ErrorOf(std::string(kGood) + "  tdpw: {source: \"x\", date: \"y\"}\n");
  EXPECT_NE(source.find("toy.yaml: key sources.tdpw: names no figure"), std::string::npos) << source;
  const std::string stale = ErrorOf(std::string(kGood) + "  peak_gflops.int8: {source: \"x\", date: \"y\"}\n");
  EXPECT_NE(stale.find("toy.yaml: key sources.peak_gflops.int8: backs a figure this file does not give"),
            std::string::npos)
      << stale;
}

TEST(CatalogTest, IdlePowerMustBeBelowTdp) {
  const std::string error = ErrorOf(Replace(kGood, "idle_w: 5", "idle_w: 50"));
  EXPECT_NE(error.find("toy.yaml: key idle_w: must be at least 0 and below tdp_w (50), not 50"), std::string::npos)
      << error;
  const std::string negative = ErrorOf(Replace(kGood, "idle_w: 5", "idle_w: -1"));
  EXPECT_NE(negative.find("toy.yaml: key idle_w"), std::string::npos) << negative;
  auto zero = ParseHardwareYaml(Replace(kGood, "idle_w: 5", "idle_w: 0"), "toy.yaml");
  EXPECT_TRUE(zero.ok()) << zero.status().ToString();  // a power-gated unit idles at nothing
}

TEST(CatalogTest, MalformedYamlNamesFileAndLine) {
  auto spec = ParseHardwareYaml(Replace(kGood, "  fp16: 4000\n", "  fp16: [4000\n"), "toy.yaml");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), StatusCode::kParseError);
  const std::string error = spec.status().message();
  EXPECT_EQ(error.rfind("toy.yaml: line ", 0), 0u) << error;
  EXPECT_NE(error.find("malformed YAML"), std::string::npos) << error;
  const std::string list = ErrorOf("- just\n- a list\n");
  EXPECT_NE(list.find("toy.yaml: expected one device as a mapping"), std::string::npos) << list;
  const std::string twice = ErrorOf(std::string(kGood) + "tdp_w: 60\n");
  EXPECT_NE(twice.find("toy.yaml: key tdp_w: given twice"), std::string::npos) << twice;
}

TEST_F(CatalogDirTest, DuplicateIdsNameBothFiles) {
  Write("a.yaml", kGood);
  Write("b.yaml", kGood);
  auto catalog = LoadHardwareCatalog(dir_);
  ASSERT_FALSE(catalog.ok());
  const std::string error = catalog.status().message();
  EXPECT_NE(error.find("'toy'"), std::string::npos) << error;
  EXPECT_NE(error.find((dir_ / "a.yaml").string()), std::string::npos) << error;
  EXPECT_NE(error.find((dir_ / "b.yaml").string()), std::string::npos) << error;
}

TEST_F(CatalogDirTest, LoadsEveryYamlSortedById) {
  Write("z.yaml", kGood);
  Write("a.yaml", Replace(kGood, "id: toy", "id: zzz"));
  Write("README.md", "not a device");
  auto catalog = LoadHardwareCatalog(dir_);
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  ASSERT_EQ(catalog->size(), 2u);
  EXPECT_EQ((*catalog)[0].id, "toy");
  EXPECT_EQ((*catalog)[0].file, (dir_ / "z.yaml").string());
  EXPECT_EQ((*catalog)[1].id, "zzz");
  // A bad file in the directory fails the whole catalog, naming that file.
  Write("broken.yaml", Replace(kGood, "memory_gb: 8", "memory_gb: 0"));
  auto broken = LoadHardwareCatalog(dir_);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find((dir_ / "broken.yaml").string() + ": key memory_gb"), std::string::npos)
      << broken.status().message();
}

TEST_F(CatalogDirTest, MissingFileOrDirectoryIsNamed) {
  auto file = LoadHardwareFile(dir_ / "nope.yaml");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
  EXPECT_NE(file.status().message().find((dir_ / "nope.yaml").string()), std::string::npos) << file.status().message();
  auto dir = LoadHardwareCatalog(dir_ / "nowhere");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find((dir_ / "nowhere").string()), std::string::npos) << dir.status().message();
  auto empty = LoadHardwareCatalog(dir_);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("no hardware files"), std::string::npos) << empty.status().message();
  auto good = LoadHardwareFile(Write("toy.yaml", kGood));
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->file, (dir_ / "toy.yaml").string());
}

}  // namespace
}  // namespace chipfit
