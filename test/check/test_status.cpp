// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-status on fixture status files (test/check/data/status, written by
// the core's own report writer): the exact table, the stale warning, where the
// file is found, and files it must refuse.
#include "check_test_support.hpp"
#include "core/planner.hpp"
#include "readers/load_topology.hpp"
#include "status_view.hpp"
#include "writers/status_report.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace nvlblock::status {
namespace {

using check::test::kData;
namespace test = check::test;

const std::string kBin = STATUS_BIN;
constexpr std::int64_t kGenerated = 1748779800; // 2025-06-01T12:10:00 UTC

// nvlblock-status prints local time, as Slurm does; the texts below are UTC's
// (this process and the tool it runs both take TZ from here).
void in_zone(const char* tz) {
    setenv("TZ", tz, 1);
    tzset();
}
const bool kInUtc = (in_zone("UTC"), true);

test::Result status(const std::string& args) {
    return test::run(kBin + " " + args, kData + "/status");
}

const std::string kDegradedTable =
    "BLOCK   HEALTH    NODES  HEALTHY  FAILED  BUSY  LENT  FREE  SPARES F/U/L  HELD  STRANDED  FAILED NODES\n"
    "rack01  healthy      18       18       0    16     2     0         0/0/2     0         0  -\n"
    "rack02  DEGRADED     18       15       3     8     0     7         0/2/0     0         7  gb[0019-0021]\n"
    "rack03  DOWN         18        4      14     0     0     4         0/2/0     0         0  gb[0037-0050]\n"
    "rack04  healthy      18       17       1     0     0    17         1/1/0    16         0  gb0055\n"
    "rack05  healthy      13       13       0     4     0     9         1/0/0     0         8  -\n"
    "TOTAL                85       67      18    28     2    37         2/5/2    16        15\n";

const std::string kDegradedSummary =
    "blocks:        5 blocks: 3 healthy, 1 degraded, 1 down\n"
    "nodes:         85 of 89 in blocks (4 outside every block)\n"
    "fragmentation: 100.0% (15 stranded of 15 free nodes ordinary work can use)\n"
    "recoveries:    3 jobs hit by node failures: 1 in place, 0 fallbacks, 0 abandoned, 2 pending\n"
    "  pending JobId=77 (rack04): lost 1 node, failed 1m 55s ago, fallback in 3m 05s\n"
    "  pending JobId=79 (rack03): lost 2 nodes, failed 11m 55s ago, fallback due now\n";

const std::string kDegradedRecent =
    "recent:\n"
    "  2025-06-01T11:57:22  JobId=88 restarted in place on rack01 after 42 s: lost 1 node, 1 spare used\n";

TEST(Status, DegradedClusterTable) {
    const test::Result r = status("--now 1748779815 degraded.json");
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, "nvlblock status from degraded.json\n"
                     "generated 2025-06-01T12:10:00, 15 s ago\n"
                     "\n" +
                         kDegradedTable + "\n" + kDegradedSummary + kDegradedRecent);
}

TEST(Status, StaleFileWarnsAndExits3) {
    const test::Result r = status("--now 1748780815 healthy.json");
    EXPECT_EQ(r.rc, 3);
    EXPECT_EQ(r.out,
              "nvlblock status from healthy.json\n"
              "generated 2025-06-01T12:10:00, 16m 55s ago\n"
              "WARNING: stale: older than 1m 30s; is slurmctld running and writing it (nvlblock.yaml "
              "status.interval)?\n"
              "\n"
              "BLOCK   HEALTH   NODES  HEALTHY  FAILED  BUSY  LENT  FREE  SPARES F/U/L  HELD  STRANDED  FAILED NODES\n"
              "rack01  healthy     18       18       0    16     0     2         2/0/0     0         0  -\n"
              "rack02  healthy     18       18       0    16     0     2         2/0/0     0         0  -\n"
              "rack03  healthy     18       18       0     0     0    18         2/0/0     0         0  -\n"
              "rack04  healthy     18       18       0     0     0    18         2/0/0     0         0  -\n"
              "rack05  healthy     13       13       0     0     0    13         1/0/0     0         0  -\n"
              "TOTAL               85       85       0    32     0    53         9/0/0     0         0\n"
              "\n"
              "blocks:        5 blocks: 5 healthy, 0 degraded, 0 down\n"
              "nodes:         85 of 89 in blocks (4 outside every block)\n"
              "fragmentation: 0.0% (0 stranded of 44 free nodes ordinary work can use)\n"
              "recoveries:    0 jobs hit by node failures: 0 in place, 0 fallbacks, 0 abandoned, 0 pending\n");
    // --stale moves the threshold.
    EXPECT_EQ(status("--now 1748780815 --stale 3600 healthy.json").rc, 0);
}

TEST(Status, ProblemsOnly) {
    const test::Result r = status("--now 1748779815 --problems --recent 0 degraded.json");
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(
        r.out,
        "nvlblock status from degraded.json\n"
        "generated 2025-06-01T12:10:00, 15 s ago\n"
        "\n"
        "BLOCK   HEALTH    NODES  HEALTHY  FAILED  BUSY  LENT  FREE  SPARES F/U/L  HELD  STRANDED  FAILED NODES\n"
        "rack02  DEGRADED     18       15       3     8     0     7         0/2/0     0         7  gb[0019-0021]\n"
        "rack03  DOWN         18        4      14     0     0     4         0/2/0     0         0  gb[0037-0050]\n"
        "rack04  healthy      18       17       1     0     0    17         1/1/0    16         0  gb0055\n"
        "TOTAL                85       67      18    28     2    37         2/5/2    16        15\n"
        "(2 healthy blocks without failed or held nodes not shown)\n"
        "\n" +
            kDegradedSummary);
}

TEST(Status, FoundThroughSlurmConfStateSaveLocation) {
    test::TempDir d;
    d.write("state/nvlblock-status.json", test::read_file(kData + "/status/degraded.json"));
    d.write("etc/slurm.conf", "ClusterName=nvl\nstatesavelocation=" + d.file("state") + "\nNodeName=gb[0001-0089]\n");
    const test::Result r = test::run("SLURM_CONF=" + d.file("etc/slurm.conf") + " " + kBin + " --now 1748779815");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "nvlblock status from " + d.file("state/nvlblock-status.json"));
    // nvlblock.yaml beside slurm.conf moves the file and sets the interval:
    // three intervals of 5 s make a 15 s old file stale.
    d.write("elsewhere.json", test::read_file(kData + "/status/degraded.json"));
    d.write("etc/nvlblock.yaml", "status:\n  interval: 5s\n  json: " + d.file("elsewhere.json") +
                                     "\nblocks:\n  - name: b\n    nodes: gb[0001-0018]\n");
    const test::Result y = test::run(kBin + " --slurm-conf " + d.file("etc/slurm.conf") + " --now 1748779816");
    EXPECT_EQ(y.rc, 3);
    EXPECT_EQ(y.out.substr(0, y.out.find("\n\n")), "nvlblock status from " + d.file("elsewhere.json") +
                                                       "\n"
                                                       "generated 2025-06-01T12:10:00, 16 s ago\n"
                                                       "WARNING: stale: older than 15 s; is slurmctld running and "
                                                       "writing it (nvlblock.yaml status.interval)?");
}

TEST(Status, RefusesWhatIsNotAStatusFile) {
    struct {
        const char* file;
        const char* err;
    } cases[] = {
        {"truncated.json", "nvlblock-status: truncated.json:16: JSON syntax error: the text ends before the JSON "
                           "value does\n"},
        {"wrong-schema.json", "nvlblock-status: wrong-schema.json: not an nvlblock status file: schema: "
                              "'nvlblock-node/1' is not nvlblock-status/1\n"},
        {"missing-field.json", "nvlblock-status: missing-field.json: not an nvlblock status file: blocks[1].free: "
                               "missing\n"},
        {"nonexistent.json", "nvlblock-status: nonexistent.json: cannot read the file: No such file or directory\n"},
    };
    for (const auto& c : cases) {
        const test::Result r = status(c.file);
        EXPECT_EQ(r.rc, 1) << c.file;
        EXPECT_EQ(r.out, "") << c.file;
        EXPECT_EQ(r.err, c.err) << c.file;
    }
    const test::Result u = status("--now soon degraded.json");
    EXPECT_EQ(u.rc, 2);
    EXPECT_EQ(u.err, "nvlblock-status: --now: 'soon' is not a whole number\n(try --help)\n");
}

// What the core writes, nvlblock-status reads: the schema both sides share.
TEST(Status, ReadsWhatTheCoreWrites) {
    const std::vector<std::string> universe = {"n01", "n02", "n03", "n04", "n05", "n06", "n07", "n08", "n09"};
    Planner planner(build_topology(
        read_topology_spec_text(
            "defaults:\n  slice: 4\n  spares: 1\n  reserve: idle\nblocks:\n  - name: a\n    nodes: n[01-05]\n"
            "  - name: b\n    nodes: n[06-09]\n    slice: 3\n",
            "t.yaml", SourceFormat::kYaml),
        &universe));
    std::vector<NodeState> states(9, NodeState::kFree);
    states[0] = states[1] = NodeState::kBusy;
    states[5] = NodeState::kDown;
    planner.job_failed(42, std::vector<NodeIndex>{5, 6, 7}, std::vector<NodeIndex>{5}, 100);
    const Status s = parse_status(report_json(make_report(planner, states, 130)), "x");
    EXPECT_EQ(s.generated_at, 130);
    ASSERT_EQ(s.blocks.size(), 2u);
    EXPECT_EQ(s.blocks[1].name, "b");
    EXPECT_EQ(s.blocks[1].failed, 1);
    EXPECT_EQ(s.blocks[1].failed_nodes, "n06");
    EXPECT_EQ(s.blocks[0].busy, 2);
    EXPECT_EQ(s.nodes, 9);
    ASSERT_EQ(s.pending.size(), 1u);
    EXPECT_EQ(s.pending[0].job_id, 42);
    EXPECT_EQ(s.pending[0].blocks, "b");
    EXPECT_EQ(s.failures, 1);
    RenderOptions o;
    o.now = 130;
    EXPECT_NE(render(s, "x", o).find("  pending JobId=42 (b): lost 1 node, failed 30 s ago, fallback in "),
              std::string::npos);
}

TEST(Status, Formats) {
    EXPECT_EQ(format_age(0), "0 s");
    EXPECT_EQ(format_age(59), "59 s");
    EXPECT_EQ(format_age(65), "1m 05s");
    EXPECT_EQ(format_age(7260), "2h 01m");
    EXPECT_EQ(format_age(90000), "1d 1h");
    EXPECT_EQ(format_time(kGenerated), "2025-06-01T12:10:00");
}

TEST(Status, TimesAreLocalAsSlurmsAre) {
    in_zone("CET-1"); // a POSIX zone: no tz database needed
    EXPECT_EQ(format_time(kGenerated), "2025-06-01T13:10:00");
    in_zone("UTC");
}

} // namespace
} // namespace nvlblock::status
