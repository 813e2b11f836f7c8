// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-check on good and bad topology/slurm.conf pairs
// (test/check/data/validate): every line it prints and its exit status.
#include "check_test_support.hpp"
#include "common/warning_names.hpp"
#include "validate.hpp"
#include "wiring.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace nvlblock::check {
namespace {

using namespace tool;

using test::kData;

const std::string kBin = CHECK_BIN;

// nvlblock-check ARGS, run in the fixture directory.
test::Result check(const std::string& args) {
    return test::run(kBin + " " + args, kData + "/validate");
}

struct Case {
    const char* name;
    const char* args;
    int rc;
    const char* out; // notes (what the configuration costs and does) and the summary
    const char* err; // errors and warnings, on stderr as Slurm's commands print theirs
};

const Case kCases[] = {
    {"good_yaml", "--slurm-conf slurm.conf good.yaml", 0,
     "good.yaml: note: reserve: reclaim: a failed job takes back nodes from no work (Slurm's preemption is off and "
     "recovery.reclaim_from names none); a moved job is not moved again for 3600 s; at most 24 jobs a day for one "
     "user's failures and 2 an hour in all; run time lost at most 3600 s per held node\n"
     "slurm.conf:10: note: 2 nodes in no block (scheduled without topology, like ordinary servers): login[01-02]\n"
     "nvlblock-check: good.yaml: OK: 3 blocks (2 x 18, 1 x 13 nodes), 49 of 51 slurm.conf nodes in blocks, 5 spares, "
     "none withheld (reserve: reclaim), 1 warning\n",
     "good.yaml: warning: reserve: reclaim, but PreemptType is not set and recovery.reclaim_from names no work: no job "
     "can ever lose its nodes, so a failed job restarts in place only where its rack has free nodes "
     "[reclaim-moves-nothing]\n"},
    {"good_conf", "--slurm-release 24.11.5 --slurm-conf slurm.conf good.conf", 0,
     "good.conf: note: topology.conf syntax, read by Slurm 24.11's topology/block rules (--slurm-release): every block "
     "is cut into slices of 13 nodes (the base block size) and has no spares; nvlblock.yaml adds spares, lending and "
     "per-block slices\n"
     "good.conf:2: note: block 'rack01': 18 nodes = 1 slice of 13 + 5 that only jobs smaller than a slice can use\n"
     "good.conf:3: note: block 'rack02': 18 nodes = 1 slice of 13 + 5 that only jobs smaller than a slice can use\n"
     "slurm.conf:10: note: 2 nodes in no block (scheduled without topology, like ordinary servers): login[01-02]\n"
     "nvlblock-check: good.conf: OK: 3 blocks (2 x 18, 1 x 13 nodes), 49 of 51 slurm.conf nodes in blocks, no spares\n",
     ""},
    {"quiet", "--quiet --slurm-conf slurm.conf good.conf", 0, "", ""},
    {"node_in_two_blocks_and_unknown_nodes", "--slurm-conf slurm.conf bad-nodes.yaml", 1,
     "nvlblock-check: bad-nodes.yaml: 3 errors\n",
     "bad-nodes.yaml:7: node gb0018 is in block 'rack02' and in block 'rack01' (bad-nodes.yaml:5)\n"
     "bad-nodes.yaml:9: block 'rack03': slice 16 is larger than the block (13 nodes)\n"
     "bad-nodes.yaml:11: nodes gb[0050-0051] of block 'rack04' are not in slurm.conf\n"},
    // The file's own problems and its blocks' problems with slurm.conf and
    // each other, in one pass; a damaged block (rack03) is not built.
    {"values_and_nodes_in_one_pass", "--slurm-conf slurm.conf bad-values-and-nodes.yaml", 1,
     "nvlblock-check: bad-values-and-nodes.yaml: 5 errors\n",
     "bad-values-and-nodes.yaml:4: unknown key 'slcie' in defaults (did you mean 'slice'?)\n"
     "bad-values-and-nodes.yaml:9: node gb0018 is in block 'rack02' and in block 'rack01' "
     "(bad-values-and-nodes.yaml:7)\n"
     "bad-values-and-nodes.yaml:13: spares: 'lots' is not a whole number\n"
     "bad-values-and-nodes.yaml:14: nodes gb[0050-0051] of block 'rack04' are not in slurm.conf\n"
     "bad-values-and-nodes.yaml:19: recovery.wait: 'soon' is not a duration (seconds, or a number with s, m, h or "
     "d)\n"},
    {"yaml_syntax", "--slurm-conf slurm.conf bad-syntax.yaml", 1, "nvlblock-check: bad-syntax.yaml: 5 errors\n",
     "bad-syntax.yaml:2: unknown key 'slcie' in defaults (did you mean 'slice'?)\n"
     "bad-syntax.yaml:3: defaults.spares: 'many' is not a whole number\n"
     "bad-syntax.yaml:6: block 'rack01': bad hostlist 'gb[0001-0018': missing ']'\n"
     "bad-syntax.yaml:7: lending: 'perhaps' is not true or false\n"
     "bad-syntax.yaml:8: block entry has no 'name'\n"},
    // The release's rules judge: 25.05 takes a smaller block as a base
    // block with fewer nodes, where 24.11 refuses to start (next case).
    {"smaller_block_by_slurm_25_05_rules", "--slurm-release 25.05.8 --slurm-conf slurm.conf bad-sizes.conf", 0,
     "bad-sizes.conf: note: topology.conf syntax, read by Slurm 25.05's topology/block rules (--slurm-release): every "
     "block is cut into slices of 18 nodes (the base block size) and has no spares; nvlblock.yaml adds spares, lending "
     "and per-block slices\n"
     "slurm.conf:10: note: 2 nodes in no block (scheduled without topology, like ordinary servers): login[01-02]\n"
     "nvlblock-check: bad-sizes.conf: OK: 3 blocks (2 x 18, 1 x 13 nodes), 49 of 51 slurm.conf nodes in blocks, no "
     "spares\n",
     ""},
    {"block_smaller_than_the_first_without_blocksizes",
     "--slurm-release 24.11.5 --slurm-conf slurm.conf bad-sizes.conf", 1, "nvlblock-check: bad-sizes.conf: 1 error\n",
     "bad-sizes.conf:3: block 'rack03' has 13 nodes, fewer than the base block size 18 (the size of the first block; "
     "set BlockSizes= to allow smaller blocks)\n"},
    {"blocksizes_not_a_power_of_two", "--slurm-conf slurm.conf bad-blocksizes.conf", 1,
     "nvlblock-check: bad-blocksizes.conf: 1 error\n",
     "bad-blocksizes.conf:2: invalid BlockSizes value '27': each size must be the base size 18 times a power of two\n"},
    // Slurm only warns about a topology.conf node missing from slurm.conf;
    // the warning still shows when another problem fails the file.
    {"topology_conf_overlap_and_unknown_node", "--slurm-conf slurm.conf bad-overlap.conf", 1,
     "nvlblock-check: bad-overlap.conf: 1 error, 1 warning\n",
     "bad-overlap.conf:2: warning: node gb9999 of block 'rack02' is not in slurm.conf; ignored "
     "[node-not-in-slurm-conf]\n"
     "bad-overlap.conf:2: node gb0018 is in block 'rack02' and in block 'rack01' (bad-overlap.conf:1)\n"},
    {"big_block_warns", "--slurm-conf slurm.conf big-block.yaml", 0,
     "big-block.yaml: note: reserve: idle: 3 spares run no ordinary work while nothing fails; a failed job finds them "
     "free at once, unless more nodes fail on its rack than it has spares; reserve: reclaim withholds none "
     "(docs/admin.md 4.1)\n"
     "big-block.yaml:4: note: block 'pod1': 36 nodes = 2 slices of 16 + 2 spares + 2 that only jobs smaller than a "
     "slice can use\n"
     "slurm.conf:10: note: 2 nodes in no block (scheduled without topology, like ordinary servers): login[01-02]\n"
     "nvlblock-check: big-block.yaml: OK: 2 blocks (1 x 36, 1 x 13 nodes), 49 of 51 slurm.conf nodes in blocks, 3 "
     "spares withheld idle (6% of the nodes in blocks), 1 warning\n",
     "big-block.yaml:4: warning: block 'pod1' has 36 nodes; an NVLink domain of an NVL72 rack has at most 18 compute "
     "trays (--max-block-size) [block-size]\n"},
    {"strict_fails_on_warnings", "--strict --quiet --slurm-conf slurm.conf big-block.yaml", 1, "",
     "big-block.yaml:4: warning: block 'pod1' has 36 nodes; an NVLink domain of an NVL72 rack has at most 18 compute "
     "trays (--max-block-size) [block-size]\n"},
    {"strict_says_failed", "--strict --slurm-conf slurm.conf big-block.yaml", 1,
     "big-block.yaml: note: reserve: idle: 3 spares run no ordinary work while nothing fails; a failed job finds them "
     "free at once, unless more nodes fail on its rack than it has spares; reserve: reclaim withholds none "
     "(docs/admin.md 4.1)\n"
     "big-block.yaml:4: note: block 'pod1': 36 nodes = 2 slices of 16 + 2 spares + 2 that only jobs smaller than a "
     "slice can use\n"
     "slurm.conf:10: note: 2 nodes in no block (scheduled without topology, like ordinary servers): login[01-02]\n"
     "nvlblock-check: big-block.yaml: FAILED with --strict: 2 blocks (1 x 36, 1 x 13 nodes), 49 of 51 slurm.conf nodes "
     "in blocks, 3 spares withheld idle (6% of the nodes in blocks), 1 warning\n",
     "big-block.yaml:4: warning: block 'pod1' has 36 nodes; an NVLink domain of an NVL72 rack has at most 18 compute "
     "trays (--max-block-size) [block-size]\n"},
    // A site that has read a warning accepts it by its name: --strict then
    // fails only on the others, and the accepted one stays visible as a note.
    {"strict_with_the_warning_accepted",
     "--strict --accept reclaim-moves-nothing,block-size -Q --slurm-conf "
     "slurm.conf big-block.yaml",
     0, "", ""},
    {"accepted_warning_is_a_note", "--strict --accept block-size --slurm-conf slurm.conf big-block.yaml", 0,
     "big-block.yaml: note: reserve: idle: 3 spares run no ordinary work while nothing fails; a failed job finds them "
     "free at once, unless more nodes fail on its rack than it has spares; reserve: reclaim withholds none "
     "(docs/admin.md 4.1)\n"
     "big-block.yaml:4: note: accepted warning [block-size]: block 'pod1' has 36 nodes; an NVLink domain of an NVL72 "
     "rack has at most 18 compute trays (--max-block-size)\n"
     "big-block.yaml:4: note: block 'pod1': 36 nodes = 2 slices of 16 + 2 spares + 2 that only jobs smaller than a "
     "slice can use\n"
     "slurm.conf:10: note: 2 nodes in no block (scheduled without topology, like ordinary servers): login[01-02]\n"
     "nvlblock-check: big-block.yaml: OK: 2 blocks (1 x 36, 1 x 13 nodes), 49 of 51 slurm.conf nodes in blocks, 3 "
     "spares withheld idle (6% of the nodes in blocks), 1 warning accepted\n",
     ""},
    {"accepting_another_warning_still_fails",
     "--strict --quiet --accept job-requeue --slurm-conf slurm.conf "
     "big-block.yaml",
     1, "",
     "big-block.yaml:4: warning: block 'pod1' has 36 nodes; an NVLink domain of an NVL72 rack has at most 18 compute "
     "trays (--max-block-size) [block-size]\n"},
    {"max_block_size_0_disables_the_warning",
     "--quiet --strict --max-block-size 0 --slurm-conf slurm.conf "
     "big-block.yaml",
     0, "", ""},
    {"bad_slurm_conf", "--slurm-conf slurm-bad.conf good.yaml", 1, "nvlblock-check: good.yaml: 5 errors, 1 warning\n",
     "slurm-bad.conf:2: warning: TopologyPlugin=topology/tree: this cluster does not use block topology; set "
     "TopologyPlugin=topology/nvlblock [topology-plugin]\n"
     "slurm-bad.conf:4: nodes gb[0030-0036] are defined twice (first at slurm-bad.conf:3); slurmctld stops with "
     "\"Duplicated NodeName\"\n"
     "slurm-bad.conf:5: NodeName: bad hostlist 'gb[0050-': missing ']'\n"
     "slurm-bad.conf:6: Include missing.conf: cannot read the file: No such file or directory\n"
     "slurm-bad.conf:7: Include conf.d/*.conf: Slurm does not expand '*' in Include; it skips the line\n"
     "slurm-bad.conf:9: cannot parse 'this': expected Key=Value\n"},
    {"stock_block_plugin_cannot_read_yaml", "--slurm-conf slurm-block.conf good.yaml", 1,
     "nvlblock-check: good.yaml: 1 error\n",
     "slurm-block.conf:1: TopologyPlugin=topology/block does not read nvlblock.yaml; set "
     "TopologyPlugin=topology/nvlblock\n"},
    {"stock_block_plugin_reads_topology_conf", "--quiet --slurm-conf slurm-block.conf good.conf", 0, "", ""},
    // Without nodes in slurm.conf the file is still checked on its own.
    {"no_nodes_in_slurm_conf", "--slurm-conf slurm-empty.conf bad-nodes.yaml", 1,
     "nvlblock-check: bad-nodes.yaml: 3 errors\n",
     "slurm-empty.conf: no NodeName= lines: no nodes to check the topology against\n"
     "bad-nodes.yaml:7: node gb0018 is in block 'rack02' and in block 'rack01' (bad-nodes.yaml:5)\n"
     "bad-nodes.yaml:9: block 'rack03': slice 16 is larger than the block (13 nodes)\n"},
    {"groups", "--slurm-conf slurm.conf groups.yaml", 0,
     "groups.yaml: note: reserve: reclaim: a failed job takes back nodes from no work (Slurm's preemption is off and "
     "recovery.reclaim_from names none); a moved job is not moved again for 3600 s; at most 24 jobs a day for one "
     "user's failures and 2 an hour in all; run time lost at most 3600 s per held node\n"
     "groups.yaml:18: note: hierarchy level 'su': 1 group of up to 2 blocks; in no su group (each one its own): "
     "rack03\n"
     "slurm.conf:10: note: 2 nodes in no block (scheduled without topology, like ordinary servers): login[01-02]\n"
     "nvlblock-check: groups.yaml: OK: 3 blocks (2 x 18, 1 x 13 nodes), 49 of 51 slurm.conf nodes in blocks, 6 spares, "
     "none withheld (reserve: reclaim), 1 warning\n",
     "groups.yaml: warning: reserve: reclaim, but PreemptType is not set and recovery.reclaim_from names no work: no "
     "job can ever lose its nodes, so a failed job restarts in place only where its rack has free nodes "
     "[reclaim-moves-nothing]\n"},
    {"bad_groups", "--slurm-conf slurm.conf bad-groups.yaml", 1, "nvlblock-check: bad-groups.yaml: 3 errors\n",
     "bad-groups.yaml:17: block 'rack02' is in group 'su2' and in group 'su1' (bad-groups.yaml:16); a block is in at "
     "most one group of a level\n"
     "bad-groups.yaml:17: group 'su2' (level su): unknown block 'rack04'\n"
     "bad-groups.yaml:21: group 'pod1' (level pod) holds part of su group 'su1' but not all of it: groups of a level "
     "must nest inside the level above\n"},
    // reserve: reclaim: who may lose nodes, and a warning where nothing can.
    {"reclaim_names_its_victims", "--slurm-conf slurm.conf reclaim.yaml", 0,
     "reclaim.yaml: note: reserve: reclaim: a failed job takes back nodes from work recovery.reclaim_from names "
     "(partition:batch), never from qos:prod; a moved job is not moved again for 3600 s; at most 24 jobs a day for one "
     "user's failures and 2 an hour in all; run time lost at most 3600 s per held node\n"
     "slurm.conf:10: note: 2 nodes in no block (scheduled without topology, like ordinary servers): login[01-02]\n"
     "nvlblock-check: reclaim.yaml: OK: 3 blocks (2 x 18, 1 x 13 nodes), 49 of 51 slurm.conf nodes in blocks, 5 "
     "spares, none withheld (reserve: reclaim)\n",
     ""},
    {"reclaim_with_nothing_to_reclaim_warns", "--slurm-conf slurm.conf reclaim-nothing.yaml", 0,
     "reclaim-nothing.yaml: note: reserve: reclaim: a failed job takes back nodes from no work (Slurm's preemption is "
     "off and recovery.reclaim_from names none); a moved job is not moved again for 3600 s; at most 24 jobs a day for "
     "one user's failures and 2 an hour in all; run time lost at most 3600 s per held node\n"
     "slurm.conf:10: note: 2 nodes in no block (scheduled without topology, like ordinary servers): login[01-02]\n"
     "nvlblock-check: reclaim-nothing.yaml: OK: 3 blocks (2 x 18, 1 x 13 nodes), 49 of 51 slurm.conf nodes in blocks, "
     "5 spares, none withheld (reserve: reclaim), 1 warning\n",
     "reclaim-nothing.yaml: warning: reserve: reclaim, but PreemptType is not set and recovery.reclaim_from names no "
     "work: no job can ever lose its nodes, so a failed job restarts in place only where its rack has free nodes "
     "[reclaim-moves-nothing]\n"},
    // slurm.conf wired so that Slurm never lets nvlblock act: each at the line to change.
    {"slurm_conf_wiring", "--slurm-conf slurm-unwired.conf unwired.yaml", 0,
     "unwired.yaml: note: reserve: idle: 5 spares run no ordinary work while nothing fails (lending: preemptible work "
     "may run on 5 of them); a failed job finds them free at once, unless more nodes fail on its rack than it has "
     "spares; reserve: reclaim withholds none (docs/admin.md 4.1)\n"
     "slurm-unwired.conf: note: no RequeueExit= or RequeueExitHold=: a job that exits after a GPU or NVLink fault on a "
     "node that stays up ends instead of being requeued, unless its script requeues itself; nvlblock restarts only "
     "requeued jobs (docs/admin.md 4.5)\n"
     "nvlblock-check: unwired.yaml: OK: 3 blocks (2 x 18, 1 x 13 nodes), 49 of 49 slurm.conf nodes in blocks, 5 spares "
     "withheld idle (10% of the nodes in blocks), 6 warnings\n",
     "unwired.yaml: warning: lending: true, but PreemptMode=SUSPEND,GANG keeps a preempted job on its nodes (only "
     "REQUEUE or CANCEL free them): work lent a spare keeps it when a job fails, so the failed job waits or restarts "
     "elsewhere [lending-frees-nothing]\n"
     "unwired.yaml: warning: preemptible names partition 'gpuu', which slurm.conf does not define (did you mean "
     "'gpu'?): it selects no job [selects-nothing]\n"
     "unwired.yaml: warning: recovery.never_reclaim names partition 'debug', which slurm.conf does not define: it "
     "selects no job [selects-nothing]\n"
     "slurm-unwired.conf: warning: no TopologyPlugin= line: Slurm loads no topology plugin and nvlblock never runs; "
     "add TopologyPlugin=topology/nvlblock [topology-plugin]\n"
     "slurm-unwired.conf:4: warning: PrEpPlugins=prep/script lacks prep/nvlblock: nvlblock is not told when a job's "
     "nodes fail, so a failed job restarts wherever Slurm puts it, never held for its rack; add prep/nvlblock (keep "
     "prep/script where Prolog or Epilog scripts run) [prep-plugin]\n"
     "slurm-unwired.conf:5: warning: JobRequeue=0: Slurm requeues a failed batch job only if it was submitted with "
     "--requeue; the others end, and nvlblock restarts only requeued jobs in place [job-requeue]\n"},
    // A fragment (no SlurmctldHost=) is checked for its nodes only.
    {"slurm_conf_fragment_wiring_not_judged", "--strict --slurm-conf slurm-fragment.conf unwired.yaml", 0,
     "unwired.yaml: note: reserve: idle: 5 spares run no ordinary work while nothing fails (lending: preemptible work "
     "may run on 5 of them); a failed job finds them free at once, unless more nodes fail on its rack than it has "
     "spares; reserve: reclaim withholds none (docs/admin.md 4.1)\n"
     "nvlblock-check: unwired.yaml: OK: 3 blocks (2 x 18, 1 x 13 nodes), 49 of 49 slurm.conf nodes in blocks, 5 spares "
     "withheld idle (10% of the nodes in blocks)\n",
     ""},
    {"missing_topology_file", "--slurm-conf slurm.conf missing.yaml", 1, "nvlblock-check: missing.yaml: 1 error\n",
     "missing.yaml: cannot read the file: No such file or directory\n"},
};

void PrintTo(const Case& c, std::ostream* os) {
    *os << "nvlblock-check " << c.args;
}

class CheckCase : public ::testing::TestWithParam<Case> {};

TEST_P(CheckCase, PrintsEveryProblemAsFileLineMessage) {
    const Case& c = GetParam();
    const test::Result r = check(c.args);
    EXPECT_EQ(r.out, c.out);
    EXPECT_EQ(r.err, c.err);
    EXPECT_EQ(r.rc, c.rc);
    // Every warning carries its name, so that a site can accept it.
    std::istringstream lines(r.err);
    for (std::string line; std::getline(lines, line);) {
        if (line.find(": warning: ") == std::string::npos)
            continue;
        const auto open = line.rfind(" [");
        ASSERT_NE(open, std::string::npos) << line;
        ASSERT_EQ(line.back(), ']') << line;
        EXPECT_TRUE(warning_name::known(line.substr(open + 2, line.size() - open - 3))) << line;
    }
}

INSTANTIATE_TEST_SUITE_P(Pairs, CheckCase, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// Without a file argument: nvlblock.yaml beside slurm.conf, else topology.conf
// there, as the plugin picks; slurm.conf from $SLURM_CONF.
// docs/admin.md 5.5: a generator's topology.yaml draws "not used" warnings a
// site expects; --strict with them accepted by name passes, and fails without.
TEST(Check, GeneratorSiteAcceptsItsExpectedWarningsUnderStrict) {
    const std::string dir = kData + "/recipes/slinky";
    const test::Result plain = test::run(kBin + " --strict --quiet --slurm-conf slurm.conf nvlblock.yaml", dir);
    EXPECT_EQ(plain.rc, 1) << plain.err;
    EXPECT_NE(plain.err.find("[topology-choice]"), std::string::npos) << plain.err;
    const test::Result accepted =
        test::run(kBin + " --strict --accept topology-choice --slurm-conf slurm.conf nvlblock.yaml", dir);
    EXPECT_EQ(accepted.rc, 0) << accepted.err;
    EXPECT_EQ(accepted.err, "");
    EXPECT_NE(accepted.out.find(", 3 warnings accepted\n"), std::string::npos) << accepted.out;
}

// nvlblock-check(1) explains every name --accept takes.
TEST(Check, EveryWarningNameIsInTheManPage) {
    std::ifstream in(kData + "/../../../docs/man/nvlblock-check.1.scd");
    std::stringstream page;
    page << in.rdbuf();
    ASSERT_FALSE(page.str().empty());
    for (const char* name : warning_name::kAll)
        EXPECT_NE(page.str().find(std::string("\n*") + name + "*\n"), std::string::npos) << name;
}

TEST(Check, DefaultFilesFollowSlurmConf) {
    test::TempDir d;
    d.write("slurm.conf", "NodeName=n[01-18]\n");
    d.write("topology.conf", "BlockName=b1 Nodes=n[01-18]\n");
    test::Result r = test::run("SLURM_CONF=" + d.file("slurm.conf") + " " + kBin);
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("nvlblock-check: " + d.file("topology.conf") + ": OK: 1 block (1 x 18 nodes), 18 of 18"),
              std::string::npos)
        << r.out;
    d.write("nvlblock.yaml", "defaults:\n  slice: 18\n  spares: 0\nblocks:\n  - name: b1\n    nodes: n[01-18]\n");
    r = test::run("SLURM_CONF=" + d.file("slurm.conf") + " " + kBin);
    EXPECT_EQ(r.out, "nvlblock-check: " + d.file("nvlblock.yaml") +
                         ": OK: 1 block (1 x 18 nodes), 18 of 18 "
                         "slurm.conf nodes in blocks, no spares\n");
}

TEST(Check, UsageErrorsExitWith2) {
    struct {
        const char* args;
        const char* err;
    } cases[] = {
        {"--bogus", "nvlblock-check: unknown option --bogus\n(try --help)\n"},
        {"-x a.yaml", "nvlblock-check: unknown option -x\n(try --help)\n"},
        {"--accept block-sise a.yaml",
         "nvlblock-check: --accept: no warning is named 'block-sise' (the names: lending-with-reclaim, "
         "node-not-in-slurm-conf, unknown-key, topology-choice, no-blocks, topology-plugin, prep-plugin, job-requeue, "
         "reclaim-moves-nothing, lending-frees-nothing, selects-nothing, block-size, partition-topology)\n(try "
         "--help)\n"},
        {"--accept block-size --generate r.json",
         "nvlblock-check: --accept applies to a topology check, not to --local, --generate, --from-topology-yaml or "
         "--plugins\n(try --help)\n"},
        {"a.yaml b.yaml", "nvlblock-check: more than one topology file given\n(try --help)\n"},
        {"--json x.yaml", "nvlblock-check: --json needs --local\n(try --help)\n"},
        {"--previous x.yaml", "nvlblock-check: --previous needs --generate\n(try --help)\n"},
        {"--local --generate",
         "nvlblock-check: --local, --generate, --from-topology-yaml and --plugins exclude each other\n(try --help)\n"},
        {"--generate", "nvlblock-check: --generate needs the node reports (files or directories)\n(try --help)\n"},
        {"--max-block-size x a.yaml", "nvlblock-check: --max-block-size: 'x' is not a whole number\n(try --help)\n"},
        {"--generate --format xml r.json", "nvlblock-check: --format must be yaml or conf\n(try --help)\n"},
        {"--plugin-dir /x a.yaml", "nvlblock-check: --plugin-dir needs --plugins\n(try --help)\n"},
        {"--slurm-release 25.05 a.yaml",
         "nvlblock-check: --slurm-release must read like 24.11.5 (or 26.11.0-0rc1)\n(try --help)\n"},
        {"--plugins --plugin-dir /nonexistent --slurm-release 24.11",
         "nvlblock-check: --slurm-release must read like 24.11.5 (or 26.11.0-0rc1)\n(try --help)\n"},
        {"--plugins --plugin-dir /nonexistent --slurm-release 24.11.5x",
         "nvlblock-check: --slurm-release must read like 24.11.5 (or 26.11.0-0rc1)\n(try --help)\n"},
        {"--plugins x.yaml", "nvlblock-check: --plugins takes no file argument\n(try --help)\n"},
        {"--generate --format conf --slice 8 r.json",
         "nvlblock-check: --slice and --spares apply to nvlblock.yaml; topology.conf has no such settings\n"
         "(try --help)\n"},
    };
    for (const auto& c : cases) {
        const test::Result r = test::run(kBin + " " + c.args);
        EXPECT_EQ(r.rc, 2) << c.args;
        EXPECT_EQ(r.err, c.err) << c.args;
        EXPECT_EQ(r.out, "") << c.args;
    }
    const test::Result help = test::run(kBin + " --help");
    EXPECT_EQ(help.rc, 0);
    EXPECT_EQ(help.out.rfind("usage: nvlblock-check", 0), 0u);
}

// The library call behind the tool: findings with severities, and the loaded
// topology when it is valid.
TEST(Check, LibraryResult) {
    const SlurmConf conf = read_slurm_conf(kData + "/validate/slurm.conf");
    const CheckResult ok = check_topology(kData + "/validate/good.yaml", conf);
    ASSERT_TRUE(ok.topology);
    EXPECT_EQ(ok.topology->block_count(), 3u);
    EXPECT_EQ(ok.count(Severity::kError), 0);
    EXPECT_EQ(ok.count(Severity::kNote), 2);    // nodes outside blocks, and who reclaimed spares may take from
    EXPECT_EQ(ok.count(Severity::kWarning), 1); // ...nobody: slurm.conf has no preemption
    const CheckResult bad = check_topology(kData + "/validate/bad-nodes.yaml", conf);
    EXPECT_FALSE(bad.topology);
    EXPECT_EQ(bad.count(Severity::kError), 3);
    EXPECT_EQ(bad.findings[0].diag.where.line, 7u);
}

// Only REQUEUE or CANCEL free a preempted job's nodes: SUSPEND and GANG
// keep them, unless a partition's own PreemptMode frees them.
TEST(Wiring, PreemptionFreesNodesOnlyByRequeueOrCancel) {
    const auto frees = [](const std::string& text) {
        std::string why;
        const bool yes = slurm_preemption_frees_nodes(read_slurm_conf_text(text, "t.conf"), why);
        return std::pair(yes, why);
    };
    EXPECT_EQ(frees("PreemptType=preempt/qos\nPreemptMode=REQUEUE\n").first, true);
    EXPECT_EQ(frees("PreemptType=preempt/qos\nPreemptMode=CANCEL,GANG\n").first, true);
    EXPECT_EQ(frees("PreemptType=preempt/qos\n"), std::pair(false, std::string("PreemptMode is OFF")));
    EXPECT_EQ(frees("PreemptMode=REQUEUE\n"), std::pair(false, std::string("PreemptType is not set")));
    EXPECT_EQ(frees("PreemptType=preempt/none\nPreemptMode=REQUEUE\n").first, false);
    const auto suspend = frees("PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n");
    EXPECT_FALSE(suspend.first);
    EXPECT_NE(suspend.second.find("keeps a preempted job on its nodes"), std::string::npos) << suspend.second;
    EXPECT_TRUE(frees("PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n"
                      "PartitionName=lend Nodes=ALL PreemptMode=REQUEUE\n")
                    .first);
}

TEST(Wiring, AFragmentIsNotJudged) {
    EXPECT_FALSE(judges_wiring(read_slurm_conf_text("NodeName=gb[0001-0018]\n", "nodes.conf")));
    EXPECT_TRUE(judges_wiring(read_slurm_conf_text("ControlMachine=ctl\n", "old.conf")));
}

} // namespace
} // namespace nvlblock::check
