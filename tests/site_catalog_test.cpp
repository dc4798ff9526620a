// Site catalogs (docs/site.md): merging, validation with file:line, the directory reader
// and the reloading watcher. Expected values come from the files written here.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <atomic>
#include <fstream>
#include <thread>
#include <string>
#include <vector>

#include "test_util.h"
#include "trainfit/admission/catalog_dir.h"
#include "trainfit/catalog.h"

namespace trainfit {
namespace {

// Every test leaves the built-in catalogs in place for the other tests.
class SiteCatalog : public ::testing::Test {
 protected:
  void TearDown() override { install_builtin_catalogs(); }
};

const char kA40[] = R"({
  "_comment": "site GPUs",
  "gpus": [
    {"name": "a40", "description": "NVIDIA A40", "capacity_bytes": 48305799168,
     "device_names": ["NVIDIA A40"]},
    {"name": "v100-32gb", "aliases": ["v100"], "capacity_bytes": 34359738368},
    {"name": "h100-nvl", "capacity_bytes": 100663296000, "device_names": ["NVIDIA H100 NVL"]}
  ]
})";

const char kModel[] = R"({"models": [
  {"name": "acme-13b", "layers": 40, "hidden": 5120, "heads": 40, "kv_heads": 8,
   "ffn": 13824, "vocab": 64000}
]})";

bool has(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

std::vector<std::string> messages(const std::vector<Error>& problems) {
  std::vector<std::string> out;
  for (const Error& problem : problems) out.push_back(problem.message);
  return out;
}
bool has(const std::vector<Error>& problems, const std::string& text) { return has(messages(problems), text); }
std::string joined(const std::vector<Error>& problems) { return joined(messages(problems)); }

// The problem at this line about this field, if there is one.
const Error* problem_at(const std::vector<Error>& problems, int line, const std::string& field) {
  for (const Error& problem : problems) {
    if (problem.line == line && problem.field == field) return &problem;
  }
  return nullptr;
}

TEST_F(SiteCatalog, AddsGpusAndModels) {
  const size_t builtin_gpus = gpu_catalog().size(), builtin_models = model_catalog().size();
  ASSERT_FALSE(gpu_in_catalog("a40"));
  ASSERT_FALSE(find_model("acme-13b").ok());
  const CatalogSet set = merge_catalogs({{"gpus.d/10-site.json", kA40}}, {{"models.d/10-acme.json", kModel}});
  ASSERT_TRUE(set.problems.empty()) << joined(set.problems);
  EXPECT_EQ(set.gpus.size(), builtin_gpus + 3);
  EXPECT_EQ(set.models.size(), builtin_models + 1);
  EXPECT_TRUE(has(set.notes, "gpus.d/10-site.json:4: gpu 'a40' added")) << joined(set.notes);
  EXPECT_TRUE(has(set.notes, "gpus.d/10-site.json:6: gpu 'v100-32gb' added")) << joined(set.notes);
  EXPECT_TRUE(has(set.notes, "models.d/10-acme.json:2: model 'acme-13b' added")) << joined(set.notes);
  ASSERT_TRUE(install_catalogs(set));
  ASSERT_TRUE(gpu_in_catalog("a40"));
  EXPECT_EQ(gpu_in_catalog("a40")->capacity_bytes, 48305799168.0);
  EXPECT_EQ(gpu_in_catalog("v100")->capacity_bytes, 34359738368.0);                // by alias
  EXPECT_EQ(gpu_in_catalog("nvidia_h100_nvl")->capacity_bytes, 100663296000.0);    // Slurm AutoDetect type
  Result<const ModelPreset*> model = find_model("ACME-13B");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ((*model)->geometry.kv_heads, 8);
  EXPECT_EQ((*model)->geometry.ffn, 13824);
  // The estimate uses them: capacity from the file.
  const Breakdown b = testing::estimate_of("model=acme-13b,gpu=a40,num_gpus=8,zero_stage=3");
  EXPECT_DOUBLE_EQ(b.capacity, 48305799168.0);
}

// What a GPU is comes from its entry's "architecture", not from its name: a site's Hopper
// part gets Hopper's cuBLAS workspace (32 MiB, PyTorch CublasHandlePool.cpp for sm90; Transformer
// Engine 32 MiB more, TE module/base.py get_cublas_workspace_size_bytes), an entry without one
// the default (:4096:2:16:8 = 8.125 MiB; TE 4 MiB).
TEST_F(SiteCatalog, ArchitectureSaysWhatAGpuIs) {
  const CatalogSet set = merge_catalogs(
      {{"gpus.d/10-site.json", R"({"gpus": [
        {"name": "h800", "architecture": "hopper", "capacity_bytes": 85520809984},
        {"name": "h800-unsaid", "capacity_bytes": 85520809984}]})"}},
      {});
  ASSERT_TRUE(set.problems.empty()) << joined(set.problems);
  ASSERT_TRUE(install_catalogs(set));
  const double MiB = 1024.0 * 1024.0;
  EXPECT_EQ(testing::estimate_of("model=llama3-8b,gpu=h800,num_gpus=8,zero_stage=3").overheads.workspaces, 32 * MiB);
  EXPECT_EQ(testing::estimate_of("model=llama3-8b,gpu=h800-unsaid,num_gpus=8,zero_stage=3").overheads.workspaces,
            8.125 * MiB);
  EXPECT_EQ(testing::estimate_of("model=llama3-8b,gpu=h800,num_gpus=8,zero_stage=3,framework=megatron").overheads.workspaces,
            64 * MiB);  // Megatron's fused ops: Transformer Engine's own workspace too
  const CatalogSet bad = merge_catalogs({{"gpus.d/20-bad.json",
                                          R"({"gpus": [{"name": "x9", "architecture": "hoppr", "capacity_bytes": 85520809984}]})"}},
                                        {});
  ASSERT_EQ(bad.problems.size(), 1u) << joined(bad.problems);
  EXPECT_EQ(bad.problems[0].code, ErrorCode::kInvalidValue);
  EXPECT_EQ(bad.problems[0].field, "architecture");
  EXPECT_NE(bad.problems[0].message.find("architecture='hoppr' is not valid; accepted: "), std::string::npos) << bad.problems[0].message;
}

TEST_F(SiteCatalog, LaterFilesOverrideEarlierAndTheBuiltIn) {
  const double builtin = gpu_in_catalog("h100")->capacity_bytes;
  const CatalogSet set = merge_catalogs(
      {{"10-a.json", R"({"gpus": [{"name": "H100", "capacity_bytes": 80000000000}]})"},
       {"20-b.json", "{\"gpus\": [\n{\"name\": \"h100\", \"capacity_bytes\": 70000000000}]}"}},
      {});
  ASSERT_TRUE(set.problems.empty()) << joined(set.problems);
  EXPECT_TRUE(has(set.notes, "10-a.json:1: gpu 'H100' overrides the built-in entry")) << joined(set.notes);
  EXPECT_TRUE(has(set.notes, "20-b.json:2: gpu 'h100' overrides the entry at 10-a.json:1")) << joined(set.notes);
  ASSERT_TRUE(install_catalogs(set));
  EXPECT_EQ(gpu_in_catalog("h100")->capacity_bytes, 70000000000.0);
  EXPECT_EQ(gpu_catalog().size(), merge_catalogs({}, {}).gpus.size());  // replaced, not added
  install_builtin_catalogs();
  EXPECT_EQ(gpu_in_catalog("h100")->capacity_bytes, builtin);
}

struct BadCase {
  const char* text;
  const char* expected;  // a substring of the one problem, with file:line
  int line;              // the line of the text the mistake is on
  const char* field;     // the catalog field at fault ("" for the file as a whole)
  ErrorCode code;
};

class BadGpuFile : public SiteCatalog, public ::testing::WithParamInterface<BadCase> {};

TEST_P(BadGpuFile, NamesFileLineFieldValueAndAccepted) {
  const CatalogSet set = merge_catalogs({{"/etc/trainfit/gpus.d/50-bad.json", GetParam().text}}, {});
  ASSERT_EQ(set.problems.size(), 1u) << joined(set.problems);
  const Error& problem = set.problems[0];
  EXPECT_NE(problem.message.find(GetParam().expected), std::string::npos) << problem.message;
  EXPECT_EQ(problem.line, GetParam().line) << problem.message;
  EXPECT_EQ(problem.field, GetParam().field) << problem.message;
  EXPECT_EQ(problem.code, GetParam().code) << error_code_name(problem.code) << ": " << problem.message;
  EXPECT_FALSE(install_catalogs(set));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadGpuFile,
    ::testing::Values(
        BadCase{"{\"gpus\": [\n  {\"name\": \"a40\",\n   \"capacity_bytes\": 48}\n]}",
                "/etc/trainfit/gpus.d/50-bad.json:3: gpus[0] 'a40': capacity_bytes='48' is not valid; accepted: bytes", 3,
                "capacity_bytes", ErrorCode::kInvalidValue},
        BadCase{"{\"gpus\": [\n  {\"name\": \"a40\", \"capacity_bytes\": 48305799168},\n  {\"name\": \"x\", \"capacity_bytes\": 48305799168,\n"
                "   \"capacity_byte\": 1}\n]}",
                "50-bad.json:4: gpus[1] 'x': unknown field 'capacity_byte' (did you mean 'capacity_bytes'?)", 4, "capacity_byte",
                ErrorCode::kUnknownField},
        BadCase{"{\"gpus\": [\n  {\"name\": \"a 40\", \"capacity_bytes\": 48305799168}]}",
                "50-bad.json:2: gpus[0] 'a 40': name='a 40' is not valid; accepted: a name of 1 to 64", 2, "name",
                ErrorCode::kInvalidValue},
        BadCase{"{\"gpus\": [\n\n  {\"name\": \"a40\"}]}", "50-bad.json:3: gpus[0] 'a40': capacity_bytes is missing", 3, "capacity_bytes",
                ErrorCode::kMissing},
        BadCase{"{\"gpus\": [\n  {\"name\": \"a40\", \"capacity_bytes\": 48305799168,}\n]}", "50-bad.json:2: not valid JSON", 2, "", ErrorCode::kMalformed},
        BadCase{"{\"models\": []}", "50-bad.json:1: has no \"gpus\" array (it has 'models': it belongs in models.d/)", 1, "gpus",
                ErrorCode::kMissing},
        BadCase{"{\"gpus\": [\n {\"name\": \"a40\", \"capacity_bytes\": 48305799168,\n  \"aliases\": [\"h100-sxm\"]}]}",
                "50-bad.json:2: gpu 'a40': the spelling 'h100_sxm' already names gpu 'h100' (the built-in entry)", 2, "aliases",
                ErrorCode::kInconsistent}));

TEST_F(SiteCatalog, ModelProblemsNameTheField) {
  const CatalogSet set = merge_catalogs(
      {}, {{"m.json",
            "{\"models\": [\n"
            " {\"name\": \"m1\", \"layers\": 2, \"hidden\": 64, \"heads\": 4,\n"
            "  \"kv_heads\": 3, \"ffn\": 128, \"vocab\": 100},\n"
            " {\"name\": \"m2\", \"layers\": 2, \"hidden\": 64, \"heads\": 4, \"ffn\": 128, \"vocab\": 100,\n"
            "  \"mlp\": \"relu\"},\n"
            " {\"name\": \"m3\", \"layers\": -1, \"hidden\": 64, \"heads\": 4, \"ffn\": 128, \"vocab\": 100}\n"
            "]}"}});
  ASSERT_EQ(set.problems.size(), 3u) << joined(set.problems);
  EXPECT_TRUE(has(set.problems, "m.json:3: models[0] 'm1': kv_heads='3' is not valid; accepted: a divisor of heads (4)"))
      << joined(set.problems);
  EXPECT_TRUE(has(set.problems, "m.json:5: models[1] 'm2': mlp='relu' is not valid; accepted: swiglu|gelu"))
      << joined(set.problems);
  EXPECT_TRUE(has(set.problems, "m.json:6: models[2] 'm3': layers='-1' is not valid; accepted: an integer from 1 to"))
      << joined(set.problems);
  // Each at the line and field that hold the mistake, and of its kind.
  for (const auto& [line, field, code] : {std::make_tuple(3, "kv_heads", ErrorCode::kInconsistent),
                                          std::make_tuple(5, "mlp", ErrorCode::kInvalidValue),
                                          std::make_tuple(6, "layers", ErrorCode::kInvalidValue)}) {
    const Error* problem = problem_at(set.problems, line, field);
    ASSERT_NE(problem, nullptr) << "line " << line << ", " << field << ":\n" << joined(set.problems);
    EXPECT_EQ(problem->code, code) << problem->message;
  }
}

// hf_ids (docs/site.md): Hub ids name the entry like aliases, case-insensitively; a malformed
// one is one problem naming the field, the value and the Hub's id form; one that is already
// another entry's spelling is an inconsistency at the site entry.
TEST_F(SiteCatalog, HubIdsNameTheEntryAndAreValidated) {
  const CatalogSet good = merge_catalogs(
      {}, {{"m.json", "{\"models\": [{\"name\": \"acme-13b\", \"hf_ids\": [\"acme/Acme-13B\"], \"layers\": 40,"
                      " \"hidden\": 5120, \"heads\": 40, \"kv_heads\": 8, \"ffn\": 13824, \"vocab\": 64000}]}"}});
  ASSERT_TRUE(good.problems.empty()) << joined(good.problems);
  ASSERT_TRUE(install_catalogs(good));
  Result<const ModelPreset*> model = find_model("ACME/acme-13b");
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ((*model)->name, "acme-13b");
  install_builtin_catalogs();

  const CatalogSet bad = merge_catalogs(
      {}, {{"m.json",
            "{\"models\": [\n"
            " {\"name\": \"m1\", \"layers\": 2, \"hidden\": 64, \"heads\": 4, \"ffn\": 128, \"vocab\": 100,\n"
            "  \"hf_ids\": [\"no-slash\"]},\n"
            " {\"name\": \"m2\", \"layers\": 2, \"hidden\": 64, \"heads\": 4, \"ffn\": 128, \"vocab\": 100,\n"
            "  \"hf_ids\": [\"Meta-Llama/meta-llama-3-8b\"]}\n"
            "]}"}});
  ASSERT_EQ(bad.problems.size(), 2u) << joined(bad.problems);
  const Error* malformed = problem_at(bad.problems, 3, "hf_ids");
  ASSERT_NE(malformed, nullptr) << joined(bad.problems);
  EXPECT_EQ(malformed->code, ErrorCode::kInvalidValue);
  EXPECT_NE(malformed->message.find("hf_ids entry 'no-slash' is not valid; accepted: a Hugging Face Hub id ORG/NAME"),
            std::string::npos) << malformed->message;
  EXPECT_EQ(malformed->message.find('\n'), std::string::npos);
  // llama3-8b's built-in Hub id, in another case: the same spelling.
  EXPECT_TRUE(has(bad.problems, "the spelling 'meta-llama/meta-llama-3-8b' already names model 'llama3-8b'"))
      << joined(bad.problems);
}

// Lookups while catalogs are swapped (what slurmctld's RPC threads do during a reload):
// every lookup sees one whole catalog, the old or the new, and a pointer taken before a
// swap stays valid. Meaningful under the sanitizer builds; here it must not crash.
TEST_F(SiteCatalog, LookupsDuringSwapsSeeWholeCatalogs) {
  const CatalogSet small = merge_catalogs({{"a.json", R"({"gpus": [{"name": "a40", "capacity_bytes": 40000000000}]})"}}, {});
  const CatalogSet big = merge_catalogs({{"b.json", R"({"gpus": [{"name": "a40", "capacity_bytes": 50000000000}]})"}}, {});
  ASSERT_TRUE(install_catalogs(small));
  std::atomic<bool> stop{false};
  std::atomic<long> bad{0}, seen{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        const GpuSpec* gpu = gpu_in_catalog("a40");
        const double c = gpu != nullptr ? gpu->capacity_bytes : 0;
        if (c != 40000000000.0 && c != 50000000000.0) ++bad;
        if (!find_model("llama3-8b").ok()) ++bad;
        ++seen;
      }
    });
  }
  // Swaps only once the readers run (a loaded machine may start them late), and while they do.
  while (seen.load() == 0) std::this_thread::yield();
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(install_catalogs(i % 2 ? small : big));
  stop = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(seen.load(), 0);
}

// ---- On disk.

class SiteDir : public SiteCatalog {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/trainfit-site-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    mkdir((dir_ + "/gpus.d").c_str(), 0755);
    mkdir((dir_ + "/models.d").c_str(), 0755);
  }
  void TearDown() override {
    SiteCatalog::TearDown();
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }
  std::string dir_;
};

TEST_F(SiteDir, SortedOrderRegularFilesAndSizeCap) {
  write("gpus.d/20-b.json", R"({"gpus": [{"name": "a40", "capacity_bytes": 40000000000}]})");
  write("gpus.d/10-a.json", kA40);
  write("gpus.d/notes.txt", "not json, not read");
  write("gpus.d/.10-a.json.swp", "not read either");
  CatalogSet set = admission::read_catalog_dir(dir_, true);
  ASSERT_TRUE(set.problems.empty()) << joined(set.problems);
  EXPECT_TRUE(has(set.notes, dir_ + "/gpus.d/20-b.json:1: gpu 'a40' overrides the entry at " + dir_ + "/gpus.d/10-a.json:4"))
      << joined(set.notes);

  mkdir((dir_ + "/gpus.d/30-dir.json").c_str(), 0755);
  set = admission::read_catalog_dir(dir_, true);
  EXPECT_TRUE(has(set.problems, dir_ + "/gpus.d/30-dir.json:1: is a directory, not a regular file")) << joined(set.problems);
  rmdir((dir_ + "/gpus.d/30-dir.json").c_str());

  write("models.d/big.json", std::string(admission::kMaxCatalogFileBytes + 1, ' '));
  set = admission::read_catalog_dir(dir_, true);
  EXPECT_TRUE(has(set.problems, dir_ + "/models.d/big.json:1: is " + std::to_string(admission::kMaxCatalogFileBytes + 1) +
                                    " bytes; accepted: at most"))
      << joined(set.problems);
}

TEST_F(SiteDir, MissingFolderIsAProblemOnlyWhenNamed) {
  EXPECT_TRUE(admission::read_catalog_dir(dir_ + "/absent", false).problems.empty());
  const CatalogSet set = admission::read_catalog_dir(dir_ + "/absent", true);
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_EQ(set.problems[0].code, ErrorCode::kMissing);
  EXPECT_EQ(set.problems[0].line, 0);
  EXPECT_NE(set.problems[0].message.find(dir_ + "/absent: not found"), std::string::npos) << set.problems[0].message;
}

TEST_F(SiteDir, WatcherReloadsChangedFilesAndKeepsTheOldOnesOnError) {
  write("gpus.d/10-a.json", kA40);
  std::vector<std::string> log;
  admission::CatalogWatcher watcher(dir_, true, [&log](bool, const std::string& line) { log.push_back(line); });
  ASSERT_TRUE(watcher.load());
  const GpuSpec* before = gpu_in_catalog("a40");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->capacity_bytes, 48305799168.0);
  EXPECT_FALSE(watcher.check_once());  // nothing changed

  // A change younger than a second is left for the next look (an editor may be writing).
  write("gpus.d/10-a.json", R"({"gpus": [{"name": "a40", "capacity_bytes": 50000000000}]})");
  EXPECT_FALSE(watcher.check_once());
  sleep(2);
  ASSERT_TRUE(watcher.check_once()) << joined(log);
  EXPECT_EQ(gpu_in_catalog("a40")->capacity_bytes, 50000000000.0);
  EXPECT_EQ(before->capacity_bytes, 48305799168.0);  // the old entry is still valid to whoever held it

  write("gpus.d/10-a.json", R"({"gpus": [{"name": "a40", "capacity_bytes": "big"}]})");
  sleep(2);
  EXPECT_FALSE(watcher.check_once());
  EXPECT_EQ(gpu_in_catalog("a40")->capacity_bytes, 50000000000.0);
  EXPECT_TRUE(has(log, "capacity_bytes='big' is not valid")) << joined(log);
  EXPECT_TRUE(has(log, "changed but are not valid; the catalogs in use stay")) << joined(log);
}

}  // namespace
}  // namespace trainfit
