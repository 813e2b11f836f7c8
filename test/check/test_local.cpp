// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-check --local on hwloc XML topologies (a GB200 compute tray, an
// HGX H100 server, a CPU node) with a fake NVML playing the fabric: GPUs and
// their locality, the NVLink domain, and every way the fabric can be unready.
#include "check_test_support.hpp"
#include "json_file.hpp"
#include "local.hpp"

#include <json-c/json.h>

#include <gtest/gtest.h>

namespace nvlblock::check {
namespace {

using namespace tool;

using test::kData;

const std::string kBin = CHECK_BIN;
const std::string kFake = FAKE_NVML;
const std::string kFakeLegacy = FAKE_NVML_LEGACY;
const std::string kGb200Bus = "00000008:01:00.0,00000009:01:00.0,00000018:01:00.0,00000019:01:00.0";
const std::string kHgxBus = "00000000:18:00.0,00000000:2a:00.0,00000000:3a:00.0,00000000:5d:00.0,"
                            "00000000:9a:00.0,00000000:ab:00.0,00000000:ba:00.0,00000000:db:00.0";

// The fake NVML reads its answers from the environment at call time; every
// test sets what it needs and clears the rest.
class Local : public ::testing::Test {
  protected:
    void SetUp() override { clear(); }
    void TearDown() override { clear(); }
    static void clear() {
        for (const char* v : {"FAKE_NVML_INIT_RC", "FAKE_NVML_GPUS", "FAKE_NVML_BUS_IDS", "FAKE_NVML_NAME",
                              "FAKE_NVML_FABRIC_RC", "FAKE_NVML_STATE", "FAKE_NVML_STATUS", "FAKE_NVML_CLUSTER_UUID",
                              "FAKE_NVML_CLIQUE", "FAKE_NVML_HEALTH_MASK", "FAKE_NVML_STATE_2", "FAKE_NVML_CLIQUE_3",
                              "FAKE_NVML_CLUSTER_UUID_1", "HWLOC_XMLFILE", "NVLBLOCK_NVML_LIBRARY"})
            unsetenv(v);
    }
    static NodeReport discover(const std::string& xml, const std::string& nvml = kFake) {
        LocalOptions o;
        o.hwloc_xml = kData + "/hwloc/" + xml;
        o.nvml_library = nvml;
        o.now = 1748779800;
        return discover_local(o);
    }
};

TEST_F(Local, Gb200TrayGpusAndLocality) {
    setenv("FAKE_NVML_BUS_IDS", kGb200Bus.c_str(), 1);
    const NodeReport r = discover("gb200-tray.xml");
    EXPECT_EQ(r.hostname, "gb-r001-n01"); // hwloc's HostName, without the domain
    EXPECT_EQ(r.packages, 2u);
    EXPECT_EQ(r.numa_nodes, 2u);
    ASSERT_EQ(r.gpus.size(), 4u); // the two ConnectX-7 NICs are not GPUs
    const char* bus[] = {"0008:01:00.0", "0009:01:00.0", "0018:01:00.0", "0019:01:00.0"};
    for (unsigned i = 0; i < 4; ++i) {
        const GpuReport& g = r.gpus[i];
        SCOPED_TRACE(i);
        EXPECT_EQ(g.pci_bus_id, bus[i]);
        EXPECT_EQ(g.vendor_id, 0x10deu);
        EXPECT_EQ(g.device_id, 0x2941u);
        EXPECT_EQ(g.model, "NVIDIA GB200");
        EXPECT_EQ(g.numa_nodes, std::vector<unsigned>{i / 2}); // two GPUs per Grace
        EXPECT_EQ(g.cpus, i < 2 ? "0-3" : "4-7");
        EXPECT_EQ(g.os_devices, (std::vector<std::string>{"cuda" + std::to_string(i), "card" + std::to_string(i + 1),
                                                          "renderD" + std::to_string(128 + i)}));
        ASSERT_TRUE(g.nvml_index);
        EXPECT_EQ(*g.nvml_index, i);
        ASSERT_TRUE(g.fabric);
        EXPECT_EQ(g.fabric->api, "nvmlDeviceGetGpuFabricInfoV");
        EXPECT_EQ(g.fabric->cluster_uuid, "6f1c2a9b-0d3e-4b5a-9c8d-7e6f5a4b3c2d");
        EXPECT_EQ(g.fabric->clique_id, 32766u);
        ASSERT_TRUE(g.fabric->health_mask);
    }
    ASSERT_TRUE(r.domain);
    EXPECT_EQ(r.domain->cluster_uuid, "6f1c2a9b-0d3e-4b5a-9c8d-7e6f5a4b3c2d");
    EXPECT_EQ(r.domain->clique_id, 32766u);
    EXPECT_EQ(r.domain->gpus, 4u);
    EXPECT_TRUE(r.problems.empty());
    EXPECT_TRUE(r.nvml_loaded);
    EXPECT_EQ(r.driver_version, "570.124.06");
}

TEST_F(Local, TextReport) {
    setenv("FAKE_NVML_BUS_IDS", kGb200Bus.c_str(), 1);
    setenv("FAKE_NVML_CLUSTER_UUID", "0123456789abcdef0123456789ABCDEF", 1);
    setenv("FAKE_NVML_CLIQUE", "7", 1);
    const test::Result r = test::run(kBin + " --local --hwloc-xml hwloc/gb200-tray.xml --nvml-library " + kFake, kData);
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.err, "");
    const std::string fabric = "          fabric completed, cluster 01234567-89ab-cdef-0123-456789abcdef, clique 7";
    EXPECT_EQ(r.out,
              "node gb-r001-n01\n"
              "  hwloc:   xml:hwloc/gb200-tray.xml: 2 packages, 8 cores, 8 PUs, 2 NUMA nodes\n"
              "  NVML:    " +
                  kFake +
                  ", driver 570.124.06\n"
                  "  GPUs:    4 NVIDIA\n"
                  "    GPU0  0008:01:00.0  NVIDIA GB200 [10de:2941]  NUMA 0  CPUs 0-3  cuda0 card1 renderD128\n" +
                  fabric +
                  "  (GPU-00000000-0000-0000-0000-000000000000)\n"
                  "    GPU1  0009:01:00.0  NVIDIA GB200 [10de:2941]  NUMA 0  CPUs 0-3  cuda1 card2 renderD129\n" +
                  fabric +
                  "  (GPU-00000000-0000-0000-0000-000000000001)\n"
                  "    GPU2  0018:01:00.0  NVIDIA GB200 [10de:2941]  NUMA 1  CPUs 4-7  cuda2 card3 renderD130\n" +
                  fabric +
                  "  (GPU-00000000-0000-0000-0000-000000000002)\n"
                  "    GPU3  0019:01:00.0  NVIDIA GB200 [10de:2941]  NUMA 1  CPUs 4-7  cuda3 card4 renderD131\n" +
                  fabric +
                  "  (GPU-00000000-0000-0000-0000-000000000003)\n"
                  "NVLink domain: cluster 01234567-89ab-cdef-0123-456789abcdef, clique 7 (4 of 4 GPUs)\n");
}

TEST_F(Local, JsonReportThroughEnvironmentOverrides) {
    // hwloc's own HWLOC_XMLFILE and our NVLBLOCK_NVML_LIBRARY instead of options.
    setenv("FAKE_NVML_BUS_IDS", kGb200Bus.c_str(), 1);
    const test::Result r = test::run("HWLOC_XMLFILE=hwloc/gb200-tray.xml NVLBLOCK_NVML_LIBRARY=" + kFakeLegacy + " " +
                                         kBin + " --local --json --hostname gb-r001-n01",
                                     kData);
    ASSERT_EQ(r.rc, 0) << r.err;
    JsonDoc doc = JsonDoc::parse(r.out, "report");
    json_object* root = doc.root();
    EXPECT_EQ(json::string(root, "schema", ""), "nvlblock-node/1");
    EXPECT_EQ(json::string(root, "hostname", ""), "gb-r001-n01");
    EXPECT_EQ(json::string(json::required(root, "hwloc", ""), "source", "hwloc"),
              "xml:hwloc/gb200-tray.xml (HWLOC_XMLFILE)");
    EXPECT_EQ(json::string(json::required(root, "nvml", ""), "library", "nvml"), kFakeLegacy);
    json_object* gpus = json::required(root, "gpus", "");
    ASSERT_EQ(json::array_size(gpus, "gpus"), 4u);
    json_object* g2 = json::at(gpus, 2);
    EXPECT_EQ(json::string(g2, "pci_bus_id", ""), "0018:01:00.0");
    EXPECT_EQ(json::string(g2, "cpus", ""), "4-7");
    json_object* fabric = json::required(g2, "fabric", "");
    // The legacy call: no health mask.
    EXPECT_EQ(json::string(fabric, "api", ""), "nvmlDeviceGetGpuFabricInfo");
    EXPECT_EQ(json::member(fabric, "health_mask", ""), nullptr);
    json_object* dom = json::required(root, "nvlink_domain", "");
    EXPECT_EQ(json::string(dom, "cluster_uuid", ""), "6f1c2a9b-0d3e-4b5a-9c8d-7e6f5a4b3c2d");
    EXPECT_EQ(json::integer(dom, "clique_id", ""), 32766);
    EXPECT_EQ(json::array_size(json::required(root, "problems", ""), "problems"), 0u);
}

TEST_F(Local, NoDriverStillReportsTheGpus) {
    const test::Result r = test::run(kBin + " --local --hwloc-xml hwloc/gb200-tray.xml --nvml-library "
                                            "/nonexistent/libnvidia-ml.so.1",
                                     kData);
    EXPECT_EQ(r.rc, 0); // not a problem of the node: the tool says what it can
    EXPECT_NE(r.out.find("  NVML:    not available: cannot load /nonexistent/libnvidia-ml.so.1 ("), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("  GPUs:    4 NVIDIA\n"), std::string::npos);
    EXPECT_NE(r.out.find("NVLink domain: none: NVML is not available, so the NVLink domain cannot be determined "
                         "here\n"),
              std::string::npos);
}

TEST_F(Local, DriverNotLoaded) {
    setenv("FAKE_NVML_INIT_RC", "9", 1);
    const NodeReport r = discover("gb200-tray.xml");
    EXPECT_FALSE(r.nvml_loaded);
    EXPECT_EQ(r.nvml_error, "nvmlInit failed: Driver Not Loaded");
    EXPECT_FALSE(r.domain);
    EXPECT_TRUE(r.problems.empty());
}

TEST_F(Local, NoNvmlOption) {
    const test::Result r = test::run(kBin + " --local --no-nvml --hwloc-xml hwloc/cpu-node.xml", kData);
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.out, "node login01\n"
                     "  hwloc:   xml:hwloc/cpu-node.xml: 1 package, 4 cores, 4 PUs, 1 NUMA node\n"
                     "  NVML:    not available: not used (--no-nvml)\n"
                     "  GPUs:    0 NVIDIA\n"
                     "NVLink domain: none: no NVIDIA GPU found: this node is in no NVLink domain\n");
}

TEST_F(Local, HgxServerIsInNoDomain) {
    // Eight H100 and four NVSwitch (PCI class 0x0680: not GPUs); NVML says
    // the GPUs have no fabric (NVML_ERROR_NOT_SUPPORTED).
    setenv("FAKE_NVML_GPUS", "8", 1);
    setenv("FAKE_NVML_BUS_IDS", kHgxBus.c_str(), 1);
    setenv("FAKE_NVML_FABRIC_RC", "3", 1);
    const NodeReport r = discover("hgx-h100.xml");
    EXPECT_EQ(r.hostname, "hgx01");
    ASSERT_EQ(r.gpus.size(), 8u);
    EXPECT_EQ(r.gpus[4].numa_nodes, std::vector<unsigned>{1});
    EXPECT_EQ(r.gpus[7].pci_bus_id, "0000:db:00.0");
    for (const auto& g : r.gpus) {
        ASSERT_TRUE(g.fabric);
        EXPECT_EQ(g.fabric->state, 0u);
    }
    EXPECT_FALSE(r.domain);
    EXPECT_TRUE(r.problems.empty());
    EXPECT_EQ(r.domain_note, "the GPUs report no NVLink fabric: this node is in no NVLink domain (an ordinary GPU "
                             "server; leave it outside every block)");
    // The same with the state NOT_SUPPORTED inside a successful answer.
    unsetenv("FAKE_NVML_FABRIC_RC");
    setenv("FAKE_NVML_STATE", "not_supported", 1);
    const NodeReport s = discover("hgx-h100.xml");
    EXPECT_FALSE(s.domain);
    EXPECT_TRUE(s.problems.empty());
}

TEST_F(Local, FabricNotReadyOrSplitIsAProblem) {
    setenv("FAKE_NVML_BUS_IDS", kGb200Bus.c_str(), 1);
    setenv("FAKE_NVML_STATE_2", "in_progress", 1);
    setenv("FAKE_NVML_CLIQUE_3", "5", 1);
    const test::Result r = test::run(kBin + " --local --hwloc-xml hwloc/gb200-tray.xml --nvml-library " + kFake, kData);
    EXPECT_EQ(r.rc, 1);
    const std::string tail =
        "NVLink domain: none: the NVLink domain is not known until the problems above are fixed\n"
        "problem: GPU2 (0018:01:00.0): NVLink fabric registration is in_progress; is the fabric manager "
        "(nvidia-fabricmanager or NMX) running? run again when it has completed\n"
        "problem: the GPUs are in different NVLink domains: GPU 3 in cluster 6f1c2a9b-0d3e-4b5a-9c8d-7e6f5a4b3c2d "
        "clique 5; GPUs 0,1 in cluster 6f1c2a9b-0d3e-4b5a-9c8d-7e6f5a4b3c2d clique 32766\n";
    ASSERT_GE(r.out.size(), tail.size());
    EXPECT_EQ(r.out.substr(r.out.size() - tail.size()), tail);
}

TEST_F(Local, FabricErrors) {
    setenv("FAKE_NVML_BUS_IDS", kGb200Bus.c_str(), 1);
    setenv("FAKE_NVML_STATUS", "999", 1);
    NodeReport r = discover("gb200-tray.xml");
    ASSERT_EQ(r.problems.size(), 4u);
    EXPECT_EQ(r.problems[0], "GPU0 (0008:01:00.0): NVLink fabric registration failed: Unknown Error");
    unsetenv("FAKE_NVML_STATUS");
    setenv("FAKE_NVML_CLUSTER_UUID", "0", 1);
    r = discover("gb200-tray.xml");
    ASSERT_EQ(r.problems.size(), 4u);
    EXPECT_EQ(r.problems[3], "GPU3 (0019:01:00.0): the fabric reports an all-zero cluster UUID");
    unsetenv("FAKE_NVML_CLUSTER_UUID");
    setenv("FAKE_NVML_STATE", "not_started", 1);
    r = discover("gb200-tray.xml");
    EXPECT_EQ(r.problems.size(), 4u);
    EXPECT_FALSE(r.domain);
}

TEST_F(Local, GpuOnlyOneSideSees) {
    // NVML lists two GPUs hwloc does not (a topology without I/O); hwloc's
    // GPUs NVML does not list are problems.
    setenv("FAKE_NVML_GPUS", "2", 1);
    NodeReport r = discover("cpu-node.xml");
    ASSERT_EQ(r.gpus.size(), 2u);
    EXPECT_TRUE(r.gpus[0].from_nvml_only);
    EXPECT_EQ(r.gpus[0].pci_bus_id, "0000:10:00.0");
    ASSERT_TRUE(r.domain);
    EXPECT_EQ(r.domain->gpus, 2u);
    setenv("FAKE_NVML_BUS_IDS", "00000008:01:00.0,00000009:01:00.0", 1);
    r = discover("gb200-tray.xml");
    ASSERT_EQ(r.gpus.size(), 4u);
    ASSERT_EQ(r.problems.size(), 2u);
    EXPECT_EQ(r.problems[0], "GPU2 (0018:01:00.0): NVML does not list this GPU");
    EXPECT_FALSE(r.domain);
}

TEST_F(Local, BadXml) {
    test::TempDir d;
    d.write("bad.xml", "<topology version=\"2.0\"><nonsense/>");
    LocalOptions o;
    o.hwloc_xml = d.file("bad.xml");
    o.use_nvml = false;
    o.hostname = "n1";
    const NodeReport r = discover_local(o);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0], "hwloc cannot load " + d.file("bad.xml") + " (not an hwloc XML topology?)");
    EXPECT_EQ(r.hostname, "n1");
}

} // namespace
} // namespace nvlblock::check
