// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-check --generate: per-node reports to a topology file. One block
// per (cluster UUID, clique id), nodes in hostname order, block names that
// never change or move when racks are added (--previous), and every report
// problem refused with its file.
#include "check_test_support.hpp"
#include "generate.hpp"
#include "local.hpp"
#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"

#include <gtest/gtest.h>

namespace nvlblock::check {
namespace {

const std::string kBin = CHECK_BIN;
const std::string kFake = FAKE_NVML;

std::string uuid(int n) {
    char b[64];
    std::snprintf(b, sizeof b, "aaaaaaaa-0000-4000-8000-%012d", n);
    return b;
}

// A report as nvlblock-check --local --json writes it (same writer).
std::string report(const std::string& host, int domain, unsigned gpus = 4, bool nvml = true,
                   const std::vector<std::string>& problems = {}) {
    NodeReport r;
    r.hostname = host;
    r.generated_at = 1748779800;
    r.hwloc_source = "this system";
    r.nvml_loaded = nvml;
    r.nvml_library = "libnvidia-ml.so.1";
    for (unsigned i = 0; i < gpus; ++i) {
        GpuReport g;
        g.index = i;
        g.vendor_id = 0x10de;
        r.gpus.push_back(g);
    }
    if (domain)
        r.domain = NvlinkDomain{uuid(domain), 32766, gpus};
    r.problems = problems;
    return report_json(r);
}

void rack(const test::TempDir& d, const std::string& dir, const std::string& prefix, int nodes, int domain,
          int skip = 0) {
    for (int n = 1; n <= nodes; ++n)
        if (n != skip)
            d.write(dir + "/" + prefix + std::to_string(n) + ".json", report(prefix + std::to_string(n), domain));
}

const std::string kHeader = "# One block per NVLink domain (NVML cluster UUID + clique id), nodes in\n"
                            "# hostname order. When racks are added, generate again with --previous\n"
                            "# naming this file: existing blocks keep their names and positions and new\n"
                            "# ones are appended.\n";

// Racks gb-r1 and gb-r2 (18 nodes), gb-r10 (13), two HGX servers and a login
// node; names unpadded so that only natural order puts r2 before r10.
void first_cluster(const test::TempDir& d) {
    rack(d, "reports", "gb-r10-n", 13, 3);
    rack(d, "reports", "gb-r2-n", 18, 2);
    rack(d, "reports", "gb-r1-n", 18, 1);
    d.write("reports/hgx01.json", report("hgx01", 0, 8));
    d.write("reports/hgx02.json", report("hgx02", 0, 8));
    d.write("reports/login01.json", report("login01", 0, 0, false));
}

const std::string kFirstYaml = "# nvlblock.yaml written by nvlblock-check --generate from 52 node reports.\n" +
                               kHeader +
                               "defaults:\n"
                               "  slice: 16\n"
                               "  spares: 2\n"
                               "  reserve: reclaim    # docs/admin.md 4.1; 'idle' keeps them free\n"
                               "blocks:\n"
                               "  # cluster " +
                               uuid(1) +
                               ", clique 32766\n"
                               "  - name: nvl0001\n"
                               "    nodes: gb-r1-n[1-18]\n"
                               "  # cluster " +
                               uuid(2) +
                               ", clique 32766\n"
                               "  - name: nvl0002\n"
                               "    nodes: gb-r2-n[1-18]\n"
                               "  # cluster " +
                               uuid(3) +
                               ", clique 32766\n"
                               "  - name: nvl0003\n"
                               "    nodes: gb-r10-n[1-13]\n"
                               "    slice: 11  # 13 nodes: smaller than slice 16 + 2 spares\n"
                               "# In no NVLink domain, so in no block: hgx[01-02],login01\n";

TEST(Generate, OneBlockPerDomainInHostnameOrder) {
    test::TempDir d;
    first_cluster(d);
    const test::Result r = test::run(kBin + " --generate reports", d.path());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, kFirstYaml);
    EXPECT_EQ(r.err, "nvlblock-check: 3 blocks, 49 nodes in blocks, 3 outside, from 52 reports\n");
}

TEST(Generate, TheFileValidatesAgainstSlurmConf) {
    test::TempDir d;
    first_cluster(d);
    d.write("slurm.conf", "NodeName=gb-r1-n[1-18],gb-r2-n[1-18],gb-r10-n[1-13]\nNodeName=hgx[01-02],login01\n"
                          "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n");
    test::Result r = test::run(kBin + " --generate --output nvlblock.yaml reports", d.path());
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "nvlblock-check: 3 blocks, 49 nodes in blocks, 3 outside, from 52 reports; wrote "
                     "nvlblock.yaml\n");
    EXPECT_EQ(test::read_file(d.file("nvlblock.yaml")), kFirstYaml);
    r = test::run(kBin + " --slurm-conf slurm.conf nvlblock.yaml", d.path());
    EXPECT_EQ(r.out, "nvlblock.yaml: note: reserve: reclaim: a failed job takes back nodes from work Slurm's "
                     "preemption lets it preempt, with its PreemptMode and GraceTime "
                     "(PreemptType=preempt/partition_prio, PreemptMode=REQUEUE); a moved job is not moved again for "
                     "3600 s; at most 24 jobs a day for one user's failures and 2 an hour in all; run time lost at "
                     "most 3600 s per held node\n"
                     "slurm.conf:2: note: 3 nodes in no block (scheduled without topology, like ordinary servers): "
                     "hgx[01-02],login01\n"
                     "nvlblock-check: nvlblock.yaml: OK: 3 blocks (2 x 18, 1 x 13 nodes), 49 of 52 slurm.conf "
                     "nodes in blocks, 6 spares, none withheld (reserve: reclaim)\n");
    EXPECT_EQ(r.rc, 0);
}

// Adding a rack whose hostnames sort first, losing a whole rack's reports and
// one node's: every block keeps its name and place, the new one is appended.
TEST(Generate, PreviousFileKeepsNamesAndPositions) {
    test::TempDir d;
    first_cluster(d);
    ASSERT_EQ(test::run(kBin + " --generate --output nvlblock.yaml reports", d.path()).rc, 0);
    rack(d, "now", "gb-r0-n", 18, 4);    // the new rack
    rack(d, "now", "gb-r1-n", 18, 1, 5); // gb-r1-n5 is down
    rack(d, "now", "gb-r10-n", 13, 3);   // gb-r2 is powered off: no report
    d.write("now/hgx01.json", report("hgx01", 0, 8));
    const test::Result r = test::run(kBin + " --generate --previous nvlblock.yaml now", d.path());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "# nvlblock.yaml written by nvlblock-check --generate from 49 node reports.\n" + kHeader +
                         "defaults:\n"
                         "  slice: 16\n"
                         "  spares: 2\n"
                         "  reserve: reclaim    # docs/admin.md 4.1; 'idle' keeps them free\n"
                         "blocks:\n"
                         "  # cluster " +
                         uuid(1) +
                         ", clique 32766\n"
                         "  - name: nvl0001\n"
                         "    nodes: gb-r1-n[1-18]\n"
                         "  # kept from the previous file: no node reported\n"
                         "  - name: nvl0002\n"
                         "    nodes: gb-r2-n[1-18]\n"
                         "  # cluster " +
                         uuid(3) +
                         ", clique 32766\n"
                         "  - name: nvl0003\n"
                         "    nodes: gb-r10-n[1-13]\n"
                         "    slice: 11\n"
                         "  # cluster " +
                         uuid(4) +
                         ", clique 32766\n"
                         "  - name: nvl0004\n"
                         "    nodes: gb-r0-n[1-18]\n"
                         "# In no NVLink domain, so in no block: hgx01\n");
    EXPECT_EQ(r.err, "nvlblock.yaml:12: note: block 'nvl0001': 1 node did not report; kept in the block\n"
                     "nvlblock.yaml:15: note: block 'nvl0002': no node reported; kept as it was\n"
                     "nvlblock-check: 4 blocks, 67 nodes in blocks, 1 outside, from 49 reports\n");
}

TEST(Generate, TopologyConfWithBlockSizesForSmallerBlocks) {
    test::TempDir d;
    first_cluster(d);
    const test::Result r = test::run(kBin + " --generate --format conf --prefix rack --width 3 reports", d.path());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "# topology.conf written by nvlblock-check --generate from 52 node reports.\n" + kHeader +
                         "# cluster " + uuid(1) +
                         ", clique 32766\n"
                         "BlockName=rack001 Nodes=gb-r1-n[1-18]\n"
                         "# cluster " +
                         uuid(2) +
                         ", clique 32766\n"
                         "BlockName=rack002 Nodes=gb-r2-n[1-18]\n"
                         "# cluster " +
                         uuid(3) +
                         ", clique 32766\n"
                         "BlockName=rack003 Nodes=gb-r10-n[1-13]\n"
                         "# Blocks differ in size: the base block size is the smallest one.\n"
                         "BlockSizes=13,26,52,104,208\n"
                         "# In no NVLink domain, so in no block: hgx[01-02],login01\n");
    // It loads as Slurm would read it.
    const Topology t = build_topology(read_topology_spec_text(r.out, "topology.conf", SourceFormat::kTopologyConf));
    EXPECT_EQ(t.block_count(), 3u);
    EXPECT_EQ(t.block_sizes().front(), 13u);
}

TEST(Generate, ScalableUnitsOfConsecutiveRacks) {
    test::TempDir d;
    first_cluster(d);
    test::Result r = test::run(kBin + " --generate --su-racks 2 reports", d.path());
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string groups = "# Scalable units: every 2 consecutive racks (--su-racks); edit to match\n"
                               "# the leaf switches if they differ.\n"
                               "hierarchy:\n  levels:\n    - name: su\n      label: scalable unit\n      groups:\n"
                               "        su01: nvl[0001-0002]\n        su02: nvl0003\n";
    const std::string tail = "# In no NVLink domain, so in no block: hgx[01-02],login01\n";
    EXPECT_EQ(r.out, kFirstYaml.substr(0, kFirstYaml.size() - tail.size()) + groups + tail);
    const Topology t = build_topology(read_topology_spec_text(r.out, "nvlblock.yaml", SourceFormat::kYaml));
    ASSERT_EQ(t.hierarchy().levels().size(), 1u);
    EXPECT_EQ(t.hierarchy().levels()[0].groups[0].blocks, (std::vector<BlockIndex>{0, 1}));
    r = test::run(kBin + " --generate --format conf --su-racks 2 reports", d.path());
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("# Scalable units: aligned runs of 2 racks (--su-racks).\nBlockSizes=13,26\n"),
              std::string::npos)
        << r.out;
    r = test::run(kBin + " --generate --format conf --su-racks 3 reports", d.path());
    EXPECT_EQ(r.rc, 2);
}

TEST(Generate, FormatFromTheOutputName) {
    test::TempDir d;
    first_cluster(d);
    ASSERT_EQ(test::run(kBin + " --generate --output topology.conf reports", d.path()).rc, 0);
    EXPECT_EQ(test::read_file(d.file("topology.conf")).rfind("# topology.conf written by", 0), 0u);
}

TEST(Generate, ReportsWithProblemsAreRefusedWithTheirFile) {
    test::TempDir d;
    rack(d, "r", "n", 2, 1);
    d.write("r/sick.json",
            report("sick", 0, 4, true, {"GPU2 (0018:01:00.0): NVLink fabric registration is in_progress"}));
    d.write("r/dup.json", report("n1", 1));
    d.write("r/nodriver.json", report("nodriver", 0, 4, false));
    d.write("r/other.json", "{\"schema\": \"nvlblock-status/1\"}\n");
    d.write("r/broken.json", "{\n  \"schema\": \"nvlblock-node/1\",\n  \"hostname\": \n}\n");
    d.write("r/shape.json", "{\"schema\": \"nvlblock-node/1\", \"hostname\": \"x\", \"problems\": 3}\n");
    const test::Result r = test::run(kBin + " --generate r/*.json r/none.json", d.path());
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "r/broken.json:4: JSON syntax error: unexpected character\n"
                     "r/n1.json: node n1 is also reported by r/dup.json\n"
                     "r/nodriver.json: node nodriver has 4 GPUs but NVML was not available there, so its NVLink "
                     "domain is unknown\n"
                     "r/other.json: schema 'nvlblock-status/1' is not nvlblock-node/1 (write reports with "
                     "nvlblock-check --local --json)\n"
                     "r/shape.json: not a node report: problems: expected an array, found a number\n"
                     "r/sick.json: node sick reported problems: GPU2 (0018:01:00.0): NVLink fabric registration is "
                     "in_progress; fix them and run nvlblock-check --local there again\n"
                     "r/none.json: cannot read the file: No such file or directory\n"
                     "nvlblock-check: nothing written (7 problems)\n");
}

TEST(Generate, ADomainAcrossTwoPreviousBlocksIsRefused) {
    test::TempDir d;
    d.write("prev.yaml", "blocks:\n  - name: a\n    nodes: n[1-2]\n  - name: b\n    nodes: n[3-4]\n");
    for (int n = 1; n <= 4; ++n)
        d.write("r/n" + std::to_string(n) + ".json", report("n" + std::to_string(n), 1));
    const test::Result r = test::run(kBin + " --generate --previous prev.yaml r", d.path());
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, "prev.yaml: the NVLink domain of cluster " + uuid(1) +
                         " clique 32766 holds nodes of blocks 'a', 'b'; merge them by hand\n"
                         "nvlblock-check: nothing written (1 problem)\n");
}

TEST(Generate, NothingToPutInABlock) {
    test::TempDir d;
    d.write("r/hgx01.json", report("hgx01", 0, 8));
    d.write("empty/.keep", "");
    test::Result r = test::run(kBin + " --generate r", d.path());
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, "r/hgx01.json: no node reported an NVLink domain: nothing to put in a block\n"
                     "nvlblock-check: nothing written (1 problem)\n");
    r = test::run(kBin + " --generate empty", d.path());
    EXPECT_EQ(r.err, "empty: no *.json report in this directory\n"
                     "nvlblock-check: nothing written (1 problem)\n");
}

// From hwloc and (fake) NVML to a topology file, as an operator runs it.
TEST(Generate, EndToEndFromLocalReports) {
    test::TempDir d;
    const std::string bus = "00000008:01:00.0,00000009:01:00.0,00000018:01:00.0,00000019:01:00.0";
    struct {
        const char* host;
        const char* uuid;
    } nodes[] = {{"gb-b2-n1", "bbbbbbbb-0000-0000-0000-000000000002"},
                 {"gb-b1-n2", "bbbbbbbb-0000-0000-0000-000000000001"},
                 {"gb-b1-n1", "bbbbbbbb-0000-0000-0000-000000000001"}};
    for (const auto& n : nodes) {
        const test::Result r = test::run("FAKE_NVML_BUS_IDS=" + bus + " FAKE_NVML_CLUSTER_UUID=" + n.uuid + " " + kBin +
                                         " --local --json --hwloc-xml " + test::kData +
                                         "/hwloc/gb200-tray.xml --nvml-library " + kFake + " --hostname " + n.host);
        ASSERT_EQ(r.rc, 0) << r.err;
        d.write(std::string("reports/") + n.host + ".json", r.out);
    }
    const std::string hgx_bus = "00000000:18:00.0,00000000:2a:00.0,00000000:3a:00.0,00000000:5d:00.0,"
                                "00000000:9a:00.0,00000000:ab:00.0,00000000:ba:00.0,00000000:db:00.0";
    const test::Result hgx =
        test::run("FAKE_NVML_GPUS=8 FAKE_NVML_FABRIC_RC=3 FAKE_NVML_BUS_IDS=" + hgx_bus + " " + kBin +
                  " --local --json --hwloc-xml " + test::kData + "/hwloc/hgx-h100.xml --nvml-library " + kFake);
    ASSERT_EQ(hgx.rc, 0) << hgx.err;
    d.write("reports/hgx01.json", hgx.out);
    const test::Result r = test::run(kBin + " --generate --slice 1 --spares 0 reports", d.path());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "# nvlblock.yaml written by nvlblock-check --generate from 4 node reports.\n" + kHeader +
                         "defaults:\n"
                         "  slice: 1\n"
                         "  spares: 0\n"
                         "blocks:\n"
                         "  # cluster bbbbbbbb-0000-0000-0000-000000000001, clique 32766\n"
                         "  - name: nvl0001\n"
                         "    nodes: gb-b1-n[1-2]\n"
                         "  # cluster bbbbbbbb-0000-0000-0000-000000000002, clique 32766\n"
                         "  - name: nvl0002\n"
                         "    nodes: gb-b2-n1\n"
                         "# In no NVLink domain, so in no block: hgx01\n");
}

// Unpadded host names (n1 .. n18) compress to one range, as Slurm writes
// them (src/model/hostlist.cpp, changed for --generate's output).
TEST(Generate, UnpaddedNamesCompressToOneRange) {
    using hostlist::compress;
    using hostlist::expand;
    EXPECT_EQ(compress(expand("gb-r1-n[1-18]")), "gb-r1-n[1-18]");
    EXPECT_EQ(compress({"n9", "n10", "n11"}), "n[9-11]");
    EXPECT_EQ(compress({"n10", "n9"}), "n[10,9]");
    EXPECT_EQ(compress({"n08", "n09", "n10"}), "n[08-10]");
    EXPECT_EQ(compress({"n9", "n010"}), "n9,n010");
    EXPECT_EQ(compress({"n10", "n05"}), "n[10,05]");
    for (const char* e : {"n[1-18]", "n[10,9]", "n[9-10,100]", "n[08-10]", "x[1-3]-y[9-10]"})
        EXPECT_EQ(expand(compress(expand(e))), expand(e)) << e;
}

TEST(Generate, NaturalOrder) {
    EXPECT_TRUE(natural_less("gb2", "gb10"));
    EXPECT_FALSE(natural_less("gb10", "gb2"));
    EXPECT_TRUE(natural_less("gb-r1-n18", "gb-r2-n1"));
    EXPECT_TRUE(natural_less("gb02", "gb2a"));
    EXPECT_TRUE(natural_less("gb2", "gb02")); // equal values: fewer digits first
    EXPECT_TRUE(natural_less("a", "b"));
    EXPECT_TRUE(natural_less("gb", "gb1"));
    EXPECT_FALSE(natural_less("gb1", "gb1"));
}

} // namespace
} // namespace nvlblock::check
