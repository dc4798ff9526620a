// GPU names as Slurm sites write them: the product names the driver reports (NVML,
// ROCm SMI), the GRES types slurmd's AutoDetect derives from them, and the catalog's
// own names. Expected entries come from the capacity the product name (or its source,
// see conf/gpus.json device_names_source) states, not from the implementation.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "trainfit/catalog.h"

namespace trainfit {
namespace {

std::string resolved(const std::string& spelling) {
  const Result<const GpuSpec*> gpu = find_gpu(spelling);
  return gpu.ok() ? (*gpu)->name : "<unknown: " + gpu.error().message + ">";
}

struct Named {
  const char* spelling;
  const char* entry;
};

// Raw product names, exactly as nvidia-smi --query-gpu=name / amdsmi print them.
const Named kDeviceNames[] = {
    {"NVIDIA H100 80GB HBM3", "h100"},            // H100 SXM5 80 GB
    {"NVIDIA H100 PCIe", "h100-pcie"},            // 80 GB HBM2e
    {"NVIDIA H200", "h200"},                      // 141 GB
    {"NVIDIA H200 NVL", "h200"},                  // 141 GB (same MIG profiles as H200)
    {"NVIDIA A100-SXM4-80GB", "a100"},
    {"NVIDIA A100 80GB PCIe", "a100"},
    {"A100-SXM-80GB", "a100"},                    // driver 450 name of the SXM4 80 GB
    {"NVIDIA A100-SXM4-40GB", "a100-40gb"},
    {"NVIDIA A100-PCIE-40GB", "a100-40gb"},
    {"A100-SXM4-40GB", "a100-40gb"},              // driver 450 name
    {"NVIDIA B200", "b200"},
    {"NVIDIA GH200 480GB", "gh200"},              // 480 GB LPDDR5X, 96 GB HBM3 GPU
    {"NVIDIA GH200 120GB", "gh200"},              // same GPU (0x2342), 120 GB LPDDR5X
    {"AMD Instinct MI300X OAM", "mi300x"},
    {"AMD Instinct MI300X", "mi300x"},
    {"NVIDIA L40S", "l40s"},
};

// slurmd AutoDetect GRES types, written out by hand (lower case, spaces to '_').
const Named kSlurmTypes[] = {
    {"nvidia_h100_80gb_hbm3", "h100"},
    {"nvidia_h100_pcie", "h100-pcie"},
    {"nvidia_h200", "h200"},
    {"nvidia_h200_nvl", "h200"},
    {"nvidia_a100-sxm4-80gb", "a100"},
    {"nvidia_a100_80gb_pcie", "a100"},
    {"a100-sxm-80gb", "a100"},
    {"nvidia_a100-sxm4-40gb", "a100-40gb"},
    {"nvidia_a100-pcie-40gb", "a100-40gb"},
    {"a100-sxm4-40gb", "a100-40gb"},
    {"nvidia_b200", "b200"},
    {"nvidia_gh200_480gb", "gh200"},
    {"nvidia_gh200_120gb", "gh200"},
    {"amd_instinct_mi300x_oam", "mi300x"},
    {"amd_instinct_mi300x", "mi300x"},
    {"nvidia_l40s", "l40s"},
};

TEST(GpuNamesDeviceNames, ResolveToTheEntryOfTheirCapacity) {
  for (const Named& n : kDeviceNames) EXPECT_EQ(resolved(n.spelling), n.entry) << n.spelling;
}

TEST(GpuNamesDeviceNames, ArePublishedInTheCatalog) {
  for (const Named& n : kDeviceNames) {
    const GpuSpec* gpu = nullptr;
    for (const GpuSpec& g : gpu_catalog()) {
      if (g.name == n.entry) gpu = &g;
    }
    ASSERT_NE(gpu, nullptr) << n.entry;
    EXPECT_NE(std::find(gpu->device_names.begin(), gpu->device_names.end(), n.spelling),
              gpu->device_names.end())
        << n.spelling << " not in " << n.entry << ".device_names";
  }
}

TEST(GpuNamesDeviceNames, ResolveInAnyCase) {
  EXPECT_EQ(resolved("nvidia h100 80gb hbm3"), "h100");
  EXPECT_EQ(resolved("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(resolved("  amd instinct mi300x oam "), "mi300x");
}

TEST(GpuNamesSlurm, AutodetectTypesResolve) {
  for (const Named& n : kSlurmTypes) EXPECT_EQ(resolved(n.spelling), n.entry) << n.spelling;
}

TEST(GpuNamesSlurm, GresTypeNameIsSlurmsUnderscorifyTolower) {
  EXPECT_EQ(slurm_gres_type_name("NVIDIA H100 80GB HBM3"), "nvidia_h100_80gb_hbm3");
  EXPECT_EQ(slurm_gres_type_name("NVIDIA A100-SXM4-80GB"), "nvidia_a100-sxm4-80gb");  // '-' kept
  EXPECT_EQ(slurm_gres_type_name("NVIDIA A100-SXM4-40GB"), "nvidia_a100-sxm4-40gb");
  EXPECT_EQ(slurm_gres_type_name("AMD Instinct MI300X OAM"), "amd_instinct_mi300x_oam");
  EXPECT_EQ(slurm_gres_type_name("NVIDIA GH200 144G HBM3e"), "nvidia_gh200_144g_hbm3e");
  EXPECT_EQ(slurm_gres_type_name("a  b"), "a__b");  // each space, no collapsing
  EXPECT_EQ(slurm_gres_type_name(""), "");
}

TEST(GpuNamesSlurm, EveryDeviceNamesSlurmFormIsASpelling) {
  for (const GpuSpec& gpu : gpu_catalog()) {
    const std::vector<std::string> spellings = gpu_spellings(gpu);
    for (const std::string& device : gpu.device_names) {
      const std::string slurm = slurm_gres_type_name(device);
      EXPECT_NE(std::find(spellings.begin(), spellings.end(), slurm), spellings.end()) << slurm;
      EXPECT_EQ(resolved(slurm), gpu.name) << slurm;
      EXPECT_EQ(resolved(device), gpu.name) << device;
    }
  }
}

TEST(GpuNamesSiteSpellings, CaseAndDashUnderscoreAreIgnored) {
  EXPECT_EQ(resolved("H100"), "h100");
  EXPECT_EQ(resolved("h100_pcie"), "h100-pcie");
  EXPECT_EQ(resolved("H100-PCIE"), "h100-pcie");
  EXPECT_EQ(resolved("a100_40gb"), "a100-40gb");
  EXPECT_EQ(resolved("A100-40GB"), "a100-40gb");
  EXPECT_EQ(resolved("nvidia-h100-80gb-hbm3"), "h100");
  EXPECT_EQ(resolved("nvidia_a100_sxm4_80gb"), "a100");
}

TEST(GpuNamesSiteSpellings, NothingFuzzierResolves) {
  for (const char* spelling : {"h100_80g", "a100_40", "a100-40", "h100 pcie", "h10", "nvidia_h100",
                               "nvidia_h100_80gb", "nvidia_a100", "mi300x_oam", "l40", ""}) {
    EXPECT_FALSE(find_gpu(spelling).ok()) << spelling << " -> " << resolved(spelling);
  }
}

TEST(GpuNamesUnknown, OtherCapacitiesStayUnknown) {
  // NVIDIA H100 NVL is 94 GB (95830MiB), GH200 144G HBM3e is 144 GB, A100-SXM-64GB is
  // 64 GB: no catalog entry has their capacity.
  for (const char* spelling : {"NVIDIA H100 NVL", "nvidia_h100_nvl", "NVIDIA GH200 144G HBM3e",
                               "nvidia_gh200_144g_hbm3e", "NVIDIA A100-SXM-64GB", "nvidia_a100-sxm-64gb"}) {
    EXPECT_FALSE(find_gpu(spelling).ok()) << spelling << " -> " << resolved(spelling);
  }
}

TEST(GpuNamesUnknown, ErrorKeepsItsStyle) {
  const Result<const GpuSpec*> near = find_gpu("H1000");
  ASSERT_FALSE(near.ok());
  EXPECT_EQ(near.error().code, ErrorCode::kUnknownName);
  EXPECT_EQ(near.error().field, "gpu");
  EXPECT_EQ(near.error().message,
            "gpu='H1000' is not in the catalog (did you mean 'h100'?); see 'trainfit gpus'");
  for (const char* spelling : {"h100_80g", "nvidia_h100_nvl"}) {
    const Result<const GpuSpec*> gpu = find_gpu(spelling);
    ASSERT_FALSE(gpu.ok()) << spelling;
    EXPECT_EQ(gpu.error().code, ErrorCode::kUnknownName);
    EXPECT_EQ(gpu.error().field, "gpu");
    const std::string& m = gpu.error().message;
    EXPECT_EQ(m.rfind("gpu='" + std::string(spelling) + "' is not in the catalog", 0), 0u) << m;
    EXPECT_EQ(m.substr(m.size() - 21), "; see 'trainfit gpus'") << m;
  }
}

TEST(GpuNamesCatalog, EveryEntryHasSourcedDeviceNames) {
  ASSERT_GE(gpu_catalog().size(), 9u);
  for (const GpuSpec& gpu : gpu_catalog()) {
    EXPECT_FALSE(gpu.device_names.empty()) << gpu.name;
    EXPECT_FALSE(gpu.device_names_source.empty()) << gpu.name;
    for (const std::string& device : gpu.device_names) {
      EXPECT_FALSE(device.empty()) << gpu.name;
      EXPECT_EQ(device.find('_'), std::string::npos) << device << ": raw names, not Slurm forms";
    }
  }
}

TEST(GpuNamesCatalog, SpellingsListNameAliasesDevicesAndSlurmForms) {
  for (const GpuSpec& gpu : gpu_catalog()) {
    const std::vector<std::string> spellings = gpu_spellings(gpu);
    ASSERT_FALSE(spellings.empty());
    EXPECT_EQ(spellings.front(), gpu.name);
    const auto has = [&](const std::string& s) {
      return std::find(spellings.begin(), spellings.end(), s) != spellings.end();
    };
    for (const std::string& alias : gpu.aliases) EXPECT_TRUE(has(alias)) << alias;
    for (const std::string& device : gpu.device_names) EXPECT_TRUE(has(device)) << device;
    for (const std::string& s : spellings) EXPECT_EQ(resolved(s), gpu.name) << s;
  }
}

// The key find_gpu compares: case and '-'/'_' do not count, so two spellings that
// differ only there are one spelling.
std::string key_of(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == '-') c = '_';
  }
  return s;
}

TEST(GpuNamesCatalog, NoSpellingNamesTwoEntries) {
  std::map<std::string, std::string> owner;  // key -> entry
  for (const GpuSpec& gpu : gpu_catalog()) {
    for (const std::string& s : gpu_spellings(gpu)) {
      const auto [it, inserted] = owner.emplace(key_of(s), gpu.name);
      EXPECT_TRUE(inserted || it->second == gpu.name)
          << "'" << s << "' names both " << it->second << " and " << gpu.name;
    }
  }
}

}  // namespace
}  // namespace trainfit
