// The published validation set (profilers/projection/published.h): the CSV reader and its errors,
// features at any batch, the committed set's coverage and sources, and the committed efficiency
// being the one the set fits.
#include "profilers/projection/published.h"

#include <cmath>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

namespace chipfit {
namespace {

const char kHeader[] =
    "model,input,device,precision,batch,runtime,metric,value,devices,status,includes,source,table,date,notes\n";

TEST(PublishedSetTest, ReadsQuotedFieldsAndDerivesBatchTime) {
  const std::string text = std::string(kHeader) +
                           "resnet50,224x224,t4,int8,256,tensorrt,throughput_per_s,6000,2,ok,\"MLPerf, Offline\","
                           "https://x,\"table \"\"A\"\"\",2023-09,\n"
                           "bert_base,seq128,t4,fp16,1,tensorrt 8.4,latency_ms,1.95,,excluded: padding stripped,,"
                           "https://y,t,2022,\n";
  auto rows = ParsePublishedCsv(text, "p.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  const PublishedRow& r = (*rows)[0];
  EXPECT_EQ(r.includes, "MLPerf, Offline");
  EXPECT_EQ(r.table, "table \"A\"");
  EXPECT_EQ(r.precision, Precision::kInt8);
  EXPECT_TRUE(r.Used());
  // 6000/s over two devices: 3000/s each, so a batch of 256 takes 256/3000 s.
  EXPECT_NEAR(r.MeasuredBatchMs(), 256.0 * 1000 / 3000, 1e-9);
  EXPECT_FALSE((*rows)[1].Used());
  EXPECT_EQ((*rows)[1].line, 3);
  EXPECT_DOUBLE_EQ((*rows)[1].MeasuredBatchMs(), 1.95);
}

TEST(PublishedSetTest, BadRowsNameFileRowAndColumn) {
  auto expect_error = [](const std::string& row, const std::string& needle) {
    auto rows = ParsePublishedCsv(std::string(kHeader) + row, "bad.csv");
    ASSERT_FALSE(rows.ok()) << row;
    EXPECT_NE(rows.status().message().find(needle), std::string::npos) << rows.status().message();
    EXPECT_NE(rows.status().message().find("bad.csv"), std::string::npos) << rows.status().message();
  };
  expect_error("resnet50,224x224,t4,fp64,1,trt,latency_ms,1,1,ok,,https://x,t,2023,\n", "row 2: precision 'fp64'");
  expect_error("resnet50,224x224,t4,fp16,0,trt,latency_ms,1,1,ok,,https://x,t,2023,\n", "batch '0'");
  expect_error("resnet50,224x224,t4,fp16,1,trt,fps,1,1,ok,,https://x,t,2023,\n", "metric 'fps'");
  expect_error("resnet50,224x224,t4,fp16,1,trt,latency_ms,-2,1,ok,,https://x,t,2023,\n", "value '-2'");
  expect_error("resnet50,224x224,t4,fp16,1,trt,latency_ms,1,1,maybe,,https://x,t,2023,\n", "status 'maybe'");
  expect_error("resnet50,224x224,t4,fp16,1,trt,latency_ms,1,1,ok,,,t,2023,\n", "source '': is empty");
  expect_error("resnet50,224x224,t4,fp16,1,trt,latency_ms,1,1,ok,,\"https://x,t,2023,\n", "not closed");
  auto unknown = ParsePublishedCsv("model,input,colour\n", "bad.csv");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown column 'colour'"), std::string::npos);
}

TEST(PublishedSetTest, FeaturesExtrapolateExactlyInTheBatch) {
  const nlohmann::json j = {
      {"schema", "chipfit.features/1"},
      {"model", "m"},
      {"input", "seq8"},
      {"layers",
       {{"b1", {{"mm", "MatMul", 2 * 8 * 16 * 32, 4 * (8 * 32 + 32 * 16), 4 * 8 * 16, {1, 8, 16}}}},
        {"b2", {{"mm", "MatMul", 2 * 16 * 16 * 32, 4 * (16 * 32 + 32 * 16), 4 * 16 * 16, {2, 8, 16}}}}}}};
  auto a = ParseArchitectureFeatures(j, "f.json");
  ASSERT_TRUE(a.ok()) << a.status().message();
  const auto f = a->AtBatch(5);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(f[0].flops, 2.0 * 40 * 16 * 32);
  EXPECT_DOUBLE_EQ(f[0].bytes, 4.0 * (40 * 32 + 32 * 16) + 4.0 * 40 * 16);  // the weight is read once
  EXPECT_DOUBLE_EQ(f[0].m, 40);
  EXPECT_DOUBLE_EQ(f[0].k, 32);
  nlohmann::json renamed = j;
  renamed["layers"]["b2"][0][0] = "other";
  EXPECT_FALSE(ParseArchitectureFeatures(renamed, "f.json").ok());
}

TEST(PublishedSetTest, CommittedSetCoversWhatTheValidationNeeds) {
  auto rows = LoadPublishedSet(DefaultValidationDir());
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  auto catalog = LoadHardwareCatalog(DefaultHardwareDir());
  ASSERT_TRUE(catalog.ok());
  std::set<std::string> devices, models, catalog_ids;
  for (const auto& spec : *catalog) catalog_ids.insert(spec.id);
  int used = 0;
  for (const auto& r : *rows) {
    EXPECT_TRUE(catalog_ids.contains(r.device)) << r.file << ":" << r.line;
    EXPECT_EQ(r.source.rfind("http", 0), 0u) << r.file << ":" << r.line << " cites no address";
    EXPECT_FALSE(r.date.empty()) << r.file << ":" << r.line;
    const auto features = DefaultValidationDir() / "features" / (r.model + "-" + r.input + ".json");
    EXPECT_TRUE(std::filesystem::exists(features)) << features;
    if (!r.Used()) continue;
    ++used;
    devices.insert(r.device);
    models.insert(r.model);
  }
  EXPECT_GE(used, 60);
  EXPECT_GE(devices.size(), 8u);
  EXPECT_GE(models.size(), 6u);
}

// The efficiency `project` reads is what the committed set fits: a change to the set, the features
// or the model without `project --validate-published --write-efficiency` fails here.
TEST(PublishedSetTest, CommittedEfficiencyIsTheFitOfTheCommittedSet) {
  auto catalog = LoadHardwareCatalog(DefaultHardwareDir());
  ASSERT_TRUE(catalog.ok());
  auto validation = ValidatePublished(DefaultValidationDir(), *catalog);
  ASSERT_TRUE(validation.ok()) << validation.status().message();
  auto committed = LoadPublishedEfficiency(DefaultEfficiencyFile());
  ASSERT_TRUE(committed.ok()) << committed.status().message();
  ASSERT_EQ(committed->kinds.size(), validation->efficiency.kinds.size());
  for (const auto& [kind, fresh] : validation->efficiency.kinds) {
    const KindEfficiency& k = committed->kinds.at(kind);
    for (const auto& [group, factor] : fresh.matrix) EXPECT_NEAR(k.matrix.at(group), factor, 1e-6 * factor) << kind;
    EXPECT_NEAR(k.memory, fresh.memory, 1e-6 * fresh.memory) << kind;
    EXPECT_EQ(k.rows, fresh.rows) << kind;
    EXPECT_EQ(k.lodo_log_errors.size(), fresh.lodo_log_errors.size()) << kind;
  }
  // What the validation must show whatever the set: every row scored or excluded with a reason, the
  // fitted model ahead of both baselines overall, and each row's band around its projection.
  const auto& doc = validation->document;
  const auto& s = doc["summary"];
  EXPECT_LT(s["median_abs_error"].get<double>(), s["roofline_median_abs_error"].get<double>());
  EXPECT_LT(s["median_abs_error"].get<double>(), s["fixed70_median_abs_error"].get<double>());
  for (const auto& r : doc["rows"]) {
    const double projected = r["projected"].get<double>();
    EXPECT_LE(r["p10"].get<double>(), projected * (1 + 1e-9)) << r["row"];
    EXPECT_GE(r["p90"].get<double>(), projected * (1 - 1e-9)) << r["row"];
  }
  for (const auto& e : doc["excluded"]) EXPECT_EQ(e["why"].get<std::string>().rfind("excluded: ", 0), 0u);
}

TEST(PublishedSetTest, RuntimeClasses) {
  EXPECT_EQ(RuntimeClassOf("tensorrt 8.4.3"), RuntimeClass::kCompiled);
  EXPECT_EQ(RuntimeClassOf("openvino 2024.3"), RuntimeClass::kCompiled);
  EXPECT_EQ(RuntimeClassOf("pytorch"), RuntimeClass::kEager);
  EXPECT_EQ(RuntimeClassOf("tensorflow"), RuntimeClass::kEager);
  EXPECT_EQ(RuntimeClassOf("triton"), RuntimeClass::kServed);
}

}  // namespace
}  // namespace chipfit
