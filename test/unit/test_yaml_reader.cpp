// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock.yaml: a complete good file, and every way a file can be wrong,
// each reported as "file:line: message".
#include "readers/load_topology.hpp"
#include "readers/spec_error.hpp"
#include "readers/yaml_reader.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nvlblock {
namespace {

using test::TempDir;
using test::yaml_topology;

// The ConfigError that reading and validating `text` throws.
ConfigError yaml_error(const std::string& text, const std::vector<std::string>* universe = nullptr) {
    try {
        yaml_topology(text, universe);
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no ConfigError for:\n" << text;
    return ConfigError({"", 0}, "");
}

std::string yaml_message(const std::string& text, const std::vector<std::string>* universe = nullptr) {
    return yaml_error(text, universe).what();
}

std::string rack(const std::string& name, const std::string& nodes, const std::string& extra = "") {
    return "  - name: " + name + "\n    nodes: " + nodes + "\n" + extra;
}

const char* kGoodFile = R"(# A full nvlblock.yaml
defaults:
  slice: 16
  spares: 2
  lending: true
recovery:
  wait: 5m
block_fault:
  fraction: 50%
preemptible:
  qos: [scavenger, standby]
  partitions:
    - preempt
status:
  interval: 1m
  json: /var/spool/slurm/nvlblock.json
  prometheus: /var/lib/node_exporter/nvlblock.prom
blocks:
  - name: rack01
    nodes: gb[0001-0018]
  - name: rack02
    nodes: gb[0019-0036]
    slice: 17
    spares: 1
    lending: off
  - name: part8
    nodes: gb[0037-0044]
    slice: 8
    spares: 0
  - name: part9
    nodes: gb[0045-0053]
    slice: 8
    spares: 1
  - name: part13
    nodes: gb[0054-0066]
    slice: 12
    spares: 1
  - name: part16
    nodes: gb[0067-0082]
    slice: 16
    spares: 0
)";

TEST(YamlReader, FullGoodFile) {
    const Topology t = yaml_topology(kGoodFile);
    EXPECT_EQ(t.source(), "test.yaml");
    EXPECT_EQ(t.format(), SourceFormat::kYaml);
    EXPECT_TRUE(t.warnings().empty());
    EXPECT_EQ(t.defaults().slice, 16);
    EXPECT_EQ(t.defaults().spares, 2);
    EXPECT_TRUE(t.defaults().lending);

    const ClusterPolicy& p = t.policy();
    EXPECT_EQ(p.recovery.wait_seconds, 300);
    EXPECT_DOUBLE_EQ(p.block_fault_fraction, 0.5);
    EXPECT_EQ(p.preemptible.qos, (std::vector<std::string>{"scavenger", "standby"}));
    EXPECT_EQ(p.preemptible.partitions, (std::vector<std::string>{"preempt"}));
    EXPECT_EQ(p.status.interval_seconds, 60);
    EXPECT_EQ(p.status.json_path, "/var/spool/slurm/nvlblock.json");
    EXPECT_EQ(p.status.prometheus_path, "/var/lib/node_exporter/nvlblock.prom");

    ASSERT_EQ(t.block_count(), 6u);
    EXPECT_EQ(t.node_count(), 82u);
    EXPECT_EQ(t.nodes_in_blocks(), 82u);
    struct Want {
        const char* name;
        const char* nodes;
        int size, slice, spares;
        bool lending;
        unsigned line;
    };
    const Want want[] = {
        {"rack01", "gb[0001-0018]", 18, 16, 2, true, 19}, {"rack02", "gb[0019-0036]", 18, 17, 1, false, 21},
        {"part8", "gb[0037-0044]", 8, 8, 0, true, 26},    {"part9", "gb[0045-0053]", 9, 8, 1, true, 30},
        {"part13", "gb[0054-0066]", 13, 12, 1, true, 34}, {"part16", "gb[0067-0082]", 16, 16, 0, true, 38},
    };
    for (std::size_t i = 0; i < std::size(want); ++i) {
        const Block& b = t.block(static_cast<BlockIndex>(i));
        SCOPED_TRACE(b.name);
        EXPECT_EQ(b.name, want[i].name);
        EXPECT_EQ(b.nodes_expr, want[i].nodes);
        EXPECT_EQ(b.size(), want[i].size);
        EXPECT_EQ(b.settings.slice, want[i].slice);
        EXPECT_EQ(b.settings.spares, want[i].spares);
        EXPECT_EQ(b.settings.lending, want[i].lending);
        EXPECT_EQ(b.where.str(), "test.yaml:" + std::to_string(want[i].line));
        EXPECT_EQ(b.ordinary_capacity(), want[i].size - want[i].spares);
    }
    EXPECT_EQ(t.largest_slice(), 17);
    // Without a universe nodes are numbered in topology order.
    EXPECT_EQ(t.node_name(0), "gb0001");
    EXPECT_EQ(t.node_name(81), "gb0082");
    EXPECT_EQ(t.find_node("gb0019"), NodeIndex{18});
    EXPECT_EQ(t.block_of(18), 1);
    EXPECT_EQ(t.find_block("part13"), BlockIndex{4});
    EXPECT_FALSE(t.find_block("rack99").has_value());
    EXPECT_FALSE(t.find_node("gb0083").has_value());
}

TEST(YamlReader, BuiltInDefaults) {
    const Topology t = yaml_topology("blocks:\n" + rack("r1", "gb[01-18]"));
    EXPECT_EQ(t.block(0).settings.slice, 16);
    EXPECT_EQ(t.block(0).settings.spares, 2);
    EXPECT_FALSE(t.block(0).settings.lending);
    EXPECT_EQ(t.block(0).settings.reserve, SpareReserve::kReclaim); // withholds nothing (docs/config.md)
    EXPECT_EQ(t.policy().recovery.wait_seconds, 300);
    EXPECT_DOUBLE_EQ(t.policy().block_fault_fraction, 0.5);
    EXPECT_TRUE(t.policy().preemptible.empty());
    EXPECT_EQ(t.policy().status.interval_seconds, 30);
    EXPECT_EQ(t.policy().status.json_path, "");
    EXPECT_EQ(t.policy().status.prometheus_path, "");
}

TEST(YamlReader, RecoveryWaitForms) {
    const std::pair<const char*, std::int64_t> cases[] = {{"300", 300}, {"300s", 300},  {"5m", 300}, {"1h", 3600},
                                                          {"0", 0},     {"\"90\"", 90}, {"2H", 7200}};
    for (const auto& [text, seconds] : cases) {
        const Topology t =
            yaml_topology(std::string("recovery:\n  wait: ") + text + "\nblocks:\n" + rack("r1", "gb[01-18]"));
        EXPECT_EQ(t.policy().recovery.wait_seconds, seconds) << text;
    }
}

TEST(YamlReader, BlockFaultFractionForms) {
    const std::pair<const char*, double> cases[] = {
        {"0.5", 0.5}, {"50%", 0.5}, {"1", 1.0}, {"100%", 1.0}, {"0.75", 0.75}};
    for (const auto& [text, fraction] : cases) {
        const Topology t =
            yaml_topology(std::string("block_fault:\n  fraction: ") + text + "\nblocks:\n" + rack("r1", "gb[01-18]"));
        EXPECT_DOUBLE_EQ(t.policy().block_fault_fraction, fraction) << text;
    }
}

TEST(YamlReader, PreemptibleSingleNameIsAListOfOne) {
    const Topology t = yaml_topology("preemptible:\n  qos: scavenger\n  partitions: [low, lower]\nblocks:\n" +
                                     rack("r1", "gb[01-18]"));
    EXPECT_EQ(t.policy().preemptible.qos, std::vector<std::string>{"scavenger"});
    EXPECT_EQ(t.policy().preemptible.partitions, (std::vector<std::string>{"low", "lower"}));
    EXPECT_FALSE(t.policy().preemptible.empty());
}

TEST(YamlReader, BooleanSpellings) {
    for (const char* yes : {"true", "yes", "on", "True", "YES"}) {
        const Topology t =
            yaml_topology("blocks:\n" + rack("r1", "gb[01-18]", std::string("    lending: ") + yes + "\n"));
        EXPECT_TRUE(t.block(0).settings.lending) << yes;
    }
    for (const char* no : {"false", "no", "off", "False"}) {
        const Topology t = yaml_topology("defaults:\n  lending: true\nblocks:\n" +
                                         rack("r1", "gb[01-18]", std::string("    lending: ") + no + "\n"));
        EXPECT_FALSE(t.block(0).settings.lending) << no;
    }
}

TEST(YamlReader, PartialRacksWithFittingSettings) {
    // 8, 9, 13 and 16 node racks are seen in the field.
    const Topology t = yaml_topology("blocks:\n" + rack("p8", "n[01-08]", "    slice: 8\n    spares: 0\n") +
                                     rack("p9", "n[09-17]", "    slice: 4\n    spares: 1\n") +
                                     rack("p13", "n[18-30]", "    slice: 11\n    spares: 2\n") +
                                     rack("p16", "n[31-46]", "    slice: 14\n    spares: 2\n"));
    ASSERT_EQ(t.block_count(), 4u);
    EXPECT_EQ(t.block(0).size(), 8);
    EXPECT_EQ(t.block(1).size(), 9);
    EXPECT_EQ(t.block(2).size(), 13);
    EXPECT_EQ(t.block(3).size(), 16);
    EXPECT_EQ(t.block(2).settings.slice, 11);
    EXPECT_EQ(t.block(3).settings.spares, 2);
}

TEST(YamlReader, NodesOutsideBlocksFromTheUniverse) {
    const std::vector<std::string> universe = {"login1", "gb02", "gb01", "gb03", "gb04"};
    const Topology t =
        yaml_topology("defaults:\n  slice: 2\n  spares: 1\nblocks:\n" + rack("r1", "gb[01-03]"), &universe);
    EXPECT_EQ(t.node_count(), 5u);
    EXPECT_EQ(t.nodes_in_blocks(), 3u);
    // Indices are the universe's: gb01 is Slurm's node 2.
    EXPECT_EQ(t.block(0).nodes, (std::vector<NodeIndex>{2, 1, 3}));
    EXPECT_EQ(t.block_of(0), kNoBlock);
    EXPECT_EQ(t.block_of(4), kNoBlock);
    EXPECT_EQ(t.block_of(1), 0);
}

// ---- Errors -----------------------------------------------------------------

TEST(YamlErrors, UnknownKeyWithHint) {
    const ConfigError e = yaml_error("blocks:\n" + rack("r1", "gb[01-18]", "    spare: 2\n"));
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_STREQ(e.what(), "test.yaml:4: unknown key 'spare' in a block entry (did you mean 'spares'?)");
    EXPECT_EQ(e.first().where.file, "test.yaml");
    EXPECT_EQ(e.first().where.line, 4u);
    EXPECT_EQ(e.first().message, "unknown key 'spare' in a block entry (did you mean 'spares'?)");
}

TEST(YamlErrors, UnknownKeyInDefaultsWithHint) {
    EXPECT_EQ(yaml_message("defaults:\n  slise: 16\nblocks:\n" + rack("r1", "gb[01-18]")),
              "test.yaml:2: unknown key 'slise' in defaults (did you mean 'slice'?)");
    EXPECT_EQ(yaml_message("recovery:\n  wiat: 5m\nblocks:\n" + rack("r1", "gb[01-18]")),
              "test.yaml:2: unknown key 'wiat' in recovery (did you mean 'wait'?)");
}

TEST(YamlErrors, UnknownTopLevelKey) {
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "gb[01-18]") + "foo: 1\n"),
              "test.yaml:4: unknown key 'foo' in the top level (known: block_fault, blocks, defaults, "
              "hierarchy, preemptible, recovery, status, topology_conf, topology_name, topology_yaml)");
    // A near miss gets a hint; without blocks the file has nothing to offer either.
    const ConfigError e = yaml_error("block:\n" + rack("r1", "gb[01-18]"));
    ASSERT_EQ(e.problems().size(), 2u);
    EXPECT_EQ(e.problems()[0].str(), "test.yaml:1: unknown key 'block' in the top level (did you mean 'blocks'?)");
    EXPECT_EQ(e.problems()[1].str(),
              "test.yaml:1: no 'blocks:' list and no 'topology_conf:' or 'topology_yaml:' to take blocks from");
}

TEST(YamlErrors, KeyTwice) {
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "gb[01-18]") + "    name: r2\n"),
              "test.yaml:4: key 'name' appears twice in a block entry");
}

TEST(YamlErrors, BadHostlist) {
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "gb[01-18")),
              "test.yaml:3: block 'r1': bad hostlist 'gb[01-18': missing ']'");
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "gb[18-01]")),
              "test.yaml:3: block 'r1': bad hostlist 'gb[18-01]': range 18-01 runs backwards");
}

TEST(YamlErrors, NodeInTwoBlocks) {
    const ConfigError e =
        yaml_error("defaults:\n  slice: 2\n  spares: 0\nblocks:\n" + rack("r1", "gb[01-18]") + rack("r2", "gb[18-20]"));
    ASSERT_EQ(e.problems().size(), 1u) << e.what();
    EXPECT_STREQ(e.what(), "test.yaml:7: node gb18 is in block 'r2' and in block 'r1' (test.yaml:5)");
}

TEST(YamlErrors, NodeTwiceInOneBlock) {
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "gb[01-18],gb05")),
              "test.yaml:2: node gb05 is listed twice in block 'r1'");
}

TEST(YamlErrors, BlockWithoutNodes) {
    EXPECT_EQ(yaml_message("blocks:\n  - name: r1\n    slice: 4\n"), "test.yaml:2: block 'r1' has no 'nodes'");
}

TEST(YamlErrors, EmptyNodeList) {
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "\"\"")), "test.yaml:3: block 'r1': bad hostlist '': empty");
    EXPECT_EQ(yaml_message("blocks:\n  - name: r1\n    nodes:\n"), "test.yaml:3: block 'r1': bad hostlist '': empty");
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "[gb01, gb02]")),
              "test.yaml:3: nodes of block 'r1' must be a single value, found a list");
}

TEST(YamlErrors, SliceLargerThanBlock) {
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "gb[01-08]")),
              "test.yaml:2: block 'r1': slice 16 is larger than the block (8 nodes)");
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "gb[01-13]", "    slice: 14\n    spares: 0\n")),
              "test.yaml:2: block 'r1': slice 14 is larger than the block (13 nodes)");
}

TEST(YamlErrors, SliceAndSparesLargerThanBlock) {
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "gb[01-17]")),
              "test.yaml:2: block 'r1': slice 16 plus 2 spares needs 18 nodes; the block has 17");
    // The values at fault are the defaults': said there, where they are changed.
    EXPECT_EQ(yaml_message("defaults:\n  slice: 8\n  spares: 1\nblocks:\n" + rack("p8", "gb[01-08]")),
              "test.yaml:2: defaults: slice 8 plus 1 spares needs 9 nodes; a block of 8 nodes has fewer (blocks "
              "taking it from here: p8)");
}

// A defaults value too large for every rack is one error at its line, naming
// the racks, not one per rack; a block that sets a value at fault itself is
// blamed at its own line.
TEST(YamlErrors, ADefaultsProblemIsOneErrorAtTheDefaults) {
    const std::string racks = rack("rack1", "gb[01-18]") + rack("rack2", "gb[19-36]") + rack("rack3", "gb[37-54]");
    std::vector<Diagnostic> problems = yaml_error("defaults:\n  slice: 17\nblocks:\n" + racks).problems();
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].str(), "test.yaml:2: defaults: slice 17 plus 2 spares needs 19 nodes; a block of 18 nodes "
                                 "has fewer (blocks taking it from here: rack[1-3])");
    problems = yaml_error("defaults:\n  slice: 19\nblocks:\n" + racks +
                          rack("rack4", "gb[55-72]", "    spares: 0\n    slice: 20\n"))
                   .problems();
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_EQ(problems[0].str(), "test.yaml:10: block 'rack4': slice 20 is larger than the block (18 nodes)");
    EXPECT_EQ(problems[1].str(),
              "test.yaml:2: defaults: slice 19 is larger than a block of 18 nodes (blocks taking it from here: "
              "rack[1-3])");
}

// Lending lends idle spares: asking for it without a reserve asks for them;
// a reserve written anywhere (the block, the defaults) is what counts.
TEST(YamlReader, LendingWithoutAReserveMeansIdleSpares) {
    const Topology t = yaml_topology("defaults:\n  lending: true\nblocks:\n" + rack("r1", "gb[01-18]") +
                                     rack("r2", "gb[19-36]", "    lending: false\n") +
                                     rack("r3", "gb[37-54]", "    reserve: idle\n    lending: false\n"));
    EXPECT_EQ(t.block(0).settings.reserve, SpareReserve::kIdle);
    EXPECT_TRUE(t.block(0).settings.lending);
    EXPECT_EQ(t.block(1).settings.reserve, SpareReserve::kReclaim);
    EXPECT_EQ(t.block(2).settings.reserve, SpareReserve::kIdle);
    EXPECT_TRUE(t.warnings().empty());
    const Topology written = yaml_topology("defaults:\n  reserve: idle\nblocks:\n" + rack("r1", "gb[01-18]"));
    EXPECT_EQ(written.block(0).settings.reserve, SpareReserve::kIdle);
}

// Lending where the spares are reclaimed lends nothing: the block does not
// lend, and a warning says so, once at the defaults where both come from there.
TEST(YamlReader, LendingWithReclaimedSparesIsAWarning) {
    const Topology t =
        yaml_topology("defaults:\n  lending: true\n  reserve: reclaim\nblocks:\n" + rack("r1", "gb[01-18]") +
                      rack("r2", "gb[19-36]") + rack("r3", "gb[37-54]", "    reserve: idle\n"));
    EXPECT_FALSE(t.block(0).settings.lending);
    EXPECT_FALSE(t.block(1).settings.lending);
    EXPECT_TRUE(t.block(2).settings.lending);
    ASSERT_EQ(t.warnings().size(), 1u);
    EXPECT_EQ(t.warnings()[0].str(),
              "test.yaml:2: defaults: lending: true has no effect with reserve: reclaim (every node runs any work "
              "already; lending lends idle spares): drop it, or set reserve: idle (blocks taking both from here: "
              "r[1-2])");
    const Topology own =
        yaml_topology("blocks:\n" + rack("r1", "gb[01-18]", "    lending: true\n    reserve: reclaim\n"));
    ASSERT_EQ(own.warnings().size(), 1u);
    EXPECT_EQ(own.warnings()[0].where.line, 2);
    EXPECT_NE(own.warnings()[0].message.find("block 'r1': lending: true has no effect"), std::string::npos);
}

TEST(YamlErrors, MergeKeysAreRefusedByName) {
    const std::string merged =
        yaml_message("defaults:\n  <<: {slice: 16}\n  spares: 2\nblocks:\n" + rack("r1", "gb[01-18]"));
    EXPECT_EQ(merged, "test.yaml:2: YAML merge keys ('<<') are not supported in defaults: write the keys out "
                      "(anchors and *aliases of whole values work; docs/config.md)");
}

TEST(YamlErrors, DuplicateBlockNames) {
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "gb[01-18]") + rack("r1", "gb[19-36]")),
              "test.yaml:4: block 'r1' is defined twice (first at test.yaml:2)");
}

TEST(YamlErrors, NodeMissingFromSlurmConf) {
    std::vector<std::string> universe;
    for (int i = 1; i <= 35; ++i)
        universe.push_back((i < 10 ? "gb0" : "gb") + std::to_string(i));
    // Fine with every node in slurm.conf ...
    EXPECT_EQ(yaml_topology("blocks:\n" + rack("r1", "gb[01-18]"), &universe).block(0).size(), 18);
    // ... an error (not a warning, as it is for topology.conf) for a node slurm.conf lacks.
    const ConfigError e =
        yaml_error("defaults:\n  spares: 0\nblocks:\n" + rack("r1", "gb[01-18]") + rack("r2", "gb[19-36]"), &universe);
    ASSERT_EQ(e.problems().size(), 1u) << e.what();
    EXPECT_STREQ(e.what(), "test.yaml:6: node gb36 of block 'r2' is not in slurm.conf");
    // Every missing node is reported.
    const ConfigError all = yaml_error("blocks:\n" + rack("r9", "gb[40-49]"), &universe);
    ASSERT_EQ(all.problems().size(), 10u) << all.what();
    EXPECT_EQ(all.problems()[0].str(), "test.yaml:2: node gb40 of block 'r9' is not in slurm.conf");
    EXPECT_EQ(all.problems()[9].str(), "test.yaml:2: node gb49 of block 'r9' is not in slurm.conf");
}

TEST(YamlErrors, BadValues) {
    const std::string nodes = "blocks:\n" + rack("r1", "gb[01-18]");
    EXPECT_EQ(yaml_message(nodes + "    slice: 0\n"), "test.yaml:4: slice: 0 is out of range (1 to 1000000)");
    EXPECT_EQ(yaml_message(nodes + "    slice: 16x\n"), "test.yaml:4: slice: '16x' is not a whole number");
    EXPECT_EQ(yaml_message(nodes + "    spares: -1\n"), "test.yaml:4: spares: -1 is out of range (0 to 1000000)");
    EXPECT_EQ(yaml_message(nodes + "    lending: maybe\n"), "test.yaml:4: lending: 'maybe' is not true or false");
    EXPECT_EQ(yaml_message("recovery:\n  wait: soon\n" + nodes),
              "test.yaml:2: recovery.wait: 'soon' is not a duration (seconds, or a number with s, "
              "m, h or d)");
    EXPECT_EQ(yaml_message("recovery:\n  lemon:\n    failures: -1\n" + nodes),
              "test.yaml:3: recovery.lemon.failures: -1 is out of range (0 to 1000)");
    EXPECT_EQ(yaml_message("recovery:\n  lemon:\n    window: 0\n" + nodes),
              "test.yaml:3: recovery.lemon.window must be longer than 0");
    EXPECT_EQ(yaml_message("recovery:\n  lemon:\n    windo: 1d\n" + nodes),
              "test.yaml:3: unknown key 'windo' in recovery.lemon (did you mean 'window'?)");
    EXPECT_EQ(yaml_message("defaults:\n  spares: many\n" + nodes),
              "test.yaml:2: defaults.spares: 'many' is not a whole number");
    EXPECT_EQ(yaml_message("block_fault:\n  fraction: 0\n" + nodes),
              "test.yaml:2: block_fault.fraction: '0' must be above 0 and at most 1 (100%)");
    EXPECT_EQ(yaml_message("block_fault:\n  fraction: 150%\n" + nodes),
              "test.yaml:2: block_fault.fraction: '150%' must be above 0 and at most 1 (100%)");
    EXPECT_EQ(yaml_message("block_fault:\n  fraction: half\n" + nodes),
              "test.yaml:2: block_fault.fraction: 'half' is not a fraction (e.g. 0.5 or 50%)");
    EXPECT_EQ(yaml_message("status:\n  interval: 0\n" + nodes),
              "test.yaml:2: status.interval must be at least 1 second");
    EXPECT_EQ(yaml_message("defaults:\n  slice: [1, 2]\n" + nodes),
              "test.yaml:2: defaults.slice must be a single value, found a list");
    EXPECT_EQ(yaml_message("preemptible:\n  qos: {a: b}\n" + nodes),
              "test.yaml:2: preemptible.qos must be a list of names, found a mapping");
}

TEST(YamlErrors, BadBlockName) {
    const ConfigError e = yaml_error("blocks:\n" + rack("\"r 1\"", "gb[01-18]"));
    ASSERT_EQ(e.problems().size(), 1u); // not also "has no 'name'"
    EXPECT_STREQ(e.what(), "test.yaml:2: block name: 'r 1' contains ' '; names may not contain "
                           "blanks, '=', ',' or brackets");
}

TEST(YamlErrors, SyntaxErrorWithLine) {
    const ConfigError e =
        yaml_error("blocks:\n  - name: r1\n    nodes: gb[01-18]\n  - name: r2\n   nodes: gb[19-36]\n");
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_EQ(e.first().where.line, 5u);
    EXPECT_EQ(e.first().message.rfind("YAML syntax error: ", 0), 0u) << e.what();
    EXPECT_STREQ(e.what(), "test.yaml:5: YAML syntax error: while parsing a block collection: did "
                           "not find expected '-' indicator");

    EXPECT_EQ(yaml_message("blocks:\n  - name: r1\n    nodes: [gb01\n"),
              "test.yaml:4: YAML syntax error: while parsing a flow sequence: did not find "
              "expected ',' or ']'");
}

TEST(YamlErrors, EmptyFile) {
    EXPECT_EQ(yaml_message(""), "test.yaml:1: the file is empty; expected a mapping with 'blocks:'");
    EXPECT_EQ(yaml_message("# only a comment\n\n"),
              "test.yaml:1: the file is empty; expected a mapping with 'blocks:'");
}

TEST(YamlErrors, TopLevelNotAMapping) {
    EXPECT_EQ(yaml_message("- a\n- b\n"), "test.yaml:1: expected a mapping at the top, found a list");
    EXPECT_EQ(yaml_message("\njust text\n"), "test.yaml:2: expected a mapping at the top, found a value");
}

TEST(YamlErrors, BlocksNotAList) {
    EXPECT_EQ(yaml_message("blocks:\n  name: r1\n"), "test.yaml:2: 'blocks' must be a list, found a mapping");
    EXPECT_EQ(yaml_message("blocks: r1\n"), "test.yaml:1: 'blocks' must be a list, found a value");
    EXPECT_EQ(yaml_message("blocks:\n  - r1\n"), "test.yaml:2: a block entry must be a mapping, found a value");
}

TEST(YamlErrors, BlockWithoutName) {
    EXPECT_EQ(yaml_message("blocks:\n" + rack("r1", "gb[01-18]") + "  - nodes: gb[19-36]\n"),
              "test.yaml:4: block entry has no 'name'");
}

TEST(YamlErrors, NoBlocks) {
    EXPECT_EQ(yaml_message("defaults:\n  slice: 16\n"),
              "test.yaml:1: no 'blocks:' list and no 'topology_conf:' or 'topology_yaml:' to take blocks from");
}

TEST(YamlErrors, SeveralProblemsAtOnce) {
    const ConfigError e = yaml_error("defaults:\n  slise: 16\n"  // 2
                                     "recovery:\n  wait: soon\n" // 4
                                     "blocks:\n" +
                                     rack("r1", "gb[01-18]",      // 6
                                          "    spare: 2\n"        // 8
                                          "    lending: maybe\n") // 9
                                     + rack("r2", "gb[19-2]"));   // 10, 11
    ASSERT_EQ(e.problems().size(), 5u) << e.what();
    EXPECT_EQ(e.problems()[0].str(), "test.yaml:2: unknown key 'slise' in defaults (did you mean 'slice'?)");
    EXPECT_EQ(e.problems()[1].str(), "test.yaml:4: recovery.wait: 'soon' is not a duration "
                                     "(seconds, or a number with s, m, h or d)");
    EXPECT_EQ(e.problems()[2].str(), "test.yaml:8: unknown key 'spare' in a block entry (did you mean 'spares'?)");
    EXPECT_EQ(e.problems()[3].str(), "test.yaml:9: lending: 'maybe' is not true or false");
    EXPECT_EQ(e.problems()[4].str(), "test.yaml:11: block 'r2': bad hostlist 'gb[19-2]': range 19-2 runs backwards");
    // what() lists them all, one per line, in order.
    EXPECT_EQ(std::string(e.what()), e.problems()[0].str() + "\n" + e.problems()[1].str() + "\n" +
                                         e.problems()[2].str() + "\n" + e.problems()[3].str() + "\n" +
                                         e.problems()[4].str());
}

TEST(YamlErrors, ValidationProblemsTogether) {
    const ConfigError e = yaml_error("blocks:\n" + rack("r1", "gb[01-08]") + rack("r1", "gb[09-26]") +
                                     rack("r3", "gb[27-44]", "    spares: 3\n"));
    ASSERT_EQ(e.problems().size(), 3u) << e.what();
    EXPECT_EQ(e.problems()[0].str(), "test.yaml:2: block 'r1': slice 16 is larger than the block (8 nodes)");
    EXPECT_EQ(e.problems()[1].str(), "test.yaml:4: block 'r1' is defined twice (first at test.yaml:2)");
    EXPECT_EQ(e.problems()[2].str(),
              "test.yaml:6: block 'r3': slice 16 plus 3 spares needs 19 nodes; the block has 18");
}

// ---- topology_conf: include ------------------------------------------------------

TEST(YamlInclude, BlocksFromTopologyConfWithOverride) {
    TempDir dir;
    dir.write("topology.conf", "BlockSizes=18\nBlockName=r1 Nodes=gb[01-18]\nBlockName=r2 Nodes=gb[19-36]\n");
    const std::string yaml = dir.write("nvlblock.yaml", "topology_conf: topology.conf\n"
                                                        "defaults:\n  lending: yes\n"
                                                        "blocks:\n  - name: r2\n    slice: 17\n    spares: 1\n");
    const Topology t = load_topology(yaml);
    EXPECT_EQ(t.format(), SourceFormat::kYaml);
    EXPECT_EQ(t.source(), yaml);
    EXPECT_EQ(t.block_sizes(), std::vector<std::uint32_t>{18});
    ASSERT_EQ(t.block_count(), 2u);
    // r1: the YAML defaults (not topology/block's), r2: its override.
    EXPECT_EQ(t.block(0).name, "r1");
    EXPECT_EQ(t.block(0).nodes_expr, "gb[01-18]");
    EXPECT_EQ(t.block(0).settings.slice, 16);
    EXPECT_EQ(t.block(0).settings.spares, 2);
    EXPECT_TRUE(t.block(0).settings.lending);
    EXPECT_EQ(t.block(0).where.str(), dir.path() + "/topology.conf:2");
    EXPECT_EQ(t.block(1).name, "r2");
    EXPECT_EQ(t.block(1).settings.slice, 17);
    EXPECT_EQ(t.block(1).settings.spares, 1);
    EXPECT_TRUE(t.block(1).settings.lending);
    EXPECT_EQ(t.block(1).where.str(), dir.path() + "/topology.conf:3");
}

TEST(YamlInclude, OverrideWithOnlyNameAndSlice) {
    TempDir dir;
    dir.write("topology.conf", "BlockName=r1 Nodes=gb[01-18]\nBlockName=r2 Nodes=gb[19-36]\n");
    const Topology t =
        load_topology(dir.write("a.yaml", "topology_conf: topology.conf\nblocks:\n  - name: r1\n    slice: 15\n"));
    EXPECT_EQ(t.block(0).settings.slice, 15);
    EXPECT_EQ(t.block(0).settings.spares, 2);
    EXPECT_EQ(t.block(1).settings.slice, 16);
}

TEST(YamlInclude, IncludeWithoutBlocksList) {
    TempDir dir;
    dir.write("topology.conf", "BlockName=r1 Nodes=gb[01-18]\n");
    const Topology t = load_topology(dir.write("a.yml", "topology_conf: topology.conf\n"));
    ASSERT_EQ(t.block_count(), 1u);
    EXPECT_EQ(t.block(0).size(), 18);
}

TEST(YamlInclude, IncludedBlocksPlusOwnBlocks) {
    TempDir dir;
    dir.write("topology.conf", "BlockName=r1 Nodes=gb[01-18]\n");
    const Topology t =
        load_topology(dir.write("a.yaml", "topology_conf: topology.conf\nblocks:\n" + rack("r2", "gb[19-36]")));
    ASSERT_EQ(t.block_count(), 2u);
    EXPECT_EQ(t.block(1).name, "r2");
    EXPECT_EQ(t.block(1).where.str(), dir.path() + "/a.yaml:3");
}

TEST(YamlInclude, AbsolutePath) {
    TempDir dir, other;
    const std::string conf = other.write("topo.conf", "BlockName=r1 Nodes=gb[01-18]\n");
    const Topology t = load_topology(dir.write("a.yaml", "topology_conf: " + conf + "\n"));
    EXPECT_EQ(t.block(0).where.str(), conf + ":1");
}

TEST(YamlInclude, OverrideOfUnknownBlockNeedsNodes) {
    TempDir dir;
    dir.write("topology.conf", "BlockName=r1 Nodes=gb[01-18]\n");
    try {
        load_topology(dir.write("a.yaml", "topology_conf: topology.conf\nblocks:\n  - name: r9\n    slice: 15\n"));
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()), dir.path() + "/a.yaml:3: block 'r9' has no 'nodes'");
    }
}

TEST(YamlInclude, ErrorInsideTheIncludedFile) {
    TempDir dir;
    dir.write("topology.conf", "BlockName=r1 Nodes=gb[01-18]\nBlokName=r2 Nodes=gb[19-36]\n");
    const std::string yaml = dir.write("nvlblock.yaml", "defaults:\n  spares: 1\ntopology_conf: topology.conf\n");
    try {
        load_topology(yaml);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        ASSERT_EQ(e.problems().size(), 2u) << e.what();
        EXPECT_EQ(e.problems()[0].where.file, dir.path() + "/topology.conf");
        EXPECT_EQ(e.problems()[0].where.line, 2u);
        EXPECT_EQ(e.problems()[0].str(),
                  dir.path() + "/topology.conf:2: unknown key 'BlokName' (known: BlockName, BlockSizes, Nodes)");
        EXPECT_EQ(e.problems()[1].str(), yaml + ":3: in topology_conf 'topology.conf' included from here");
    }
}

TEST(YamlInclude, MissingIncludedFile) {
    TempDir dir;
    const std::string yaml = dir.write("nvlblock.yaml", "topology_conf: nothere.conf\n");
    try {
        load_topology(yaml);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        ASSERT_EQ(e.problems().size(), 2u) << e.what();
        EXPECT_EQ(e.problems()[0].str(), dir.path() + "/nothere.conf: cannot read the file: No such file or directory");
        EXPECT_EQ(e.problems()[1].str(), yaml + ":1: in topology_conf 'nothere.conf' included from here");
    }
}

TEST(YamlLoad, MissingFile) {
    TempDir dir;
    const std::string path = dir.path() + "/none.yaml";
    try {
        load_topology(path);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()), path + ": cannot read the file: No such file or directory");
        EXPECT_EQ(e.first().where.line, 0u);
    }
}

TEST(YamlLoad, FormatFromFileName) {
    EXPECT_EQ(guess_format("a/nvlblock.yaml"), SourceFormat::kYaml);
    EXPECT_EQ(guess_format("nvlblock.yml"), SourceFormat::kYaml);
    EXPECT_EQ(guess_format("topology.conf"), SourceFormat::kTopologyConf);
    EXPECT_EQ(guess_format("yaml"), SourceFormat::kTopologyConf);
}

TEST(YamlLoad, ErrorsNameTheFilePath) {
    TempDir dir;
    const std::string path = dir.write("bad.yaml", "blocks:\n  - name: r1\n    nodes: gb[01-18]\n    spare: 2\n");
    try {
        load_topology(path);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()), path + ":4: unknown key 'spare' in a block entry (did you mean 'spares'?)");
    }
}

// ---- topology_yaml: blocks from a file in Slurm's topology.yaml format ------------------

const char* kGeneratedTopologyYaml = "- topology: fabric\n"
                                     "  cluster_default: true\n"
                                     "  tree:\n"
                                     "    switches: []\n"
                                     "- topology: nvl72\n"
                                     "  block:\n"
                                     "    block_sizes: [18, 36]\n"
                                     "    blocks:\n"
                                     "      - block: r1\n"
                                     "        nodes: gb[01-18]\n"
                                     "      - block: r2\n"
                                     "        nodes: gb[19-36]\n";

TEST(YamlTopologyYaml, BlocksAndBlockSizesComeFromTheGeneratorsFileAtItsLines) {
    TempDir dir;
    dir.write("topology.d/racks.yaml", kGeneratedTopologyYaml);
    const Topology t = load_topology(dir.write("nvlblock.yaml", "topology_yaml: topology.d/racks.yaml\n"
                                                                "blocks:\n  - name: r2\n    spares: 1\n"));
    EXPECT_EQ(t.block_sizes(), (std::vector<std::uint32_t>{18, 36}));
    ASSERT_EQ(t.block_count(), 2u);
    EXPECT_EQ(t.block(0).nodes_expr, "gb[01-18]");
    EXPECT_EQ(t.block(0).where.str(), dir.path() + "/topology.d/racks.yaml:9");
    EXPECT_EQ(t.block(1).settings.spares, 1); // nvlblock.yaml's settings layer on top by block name
    EXPECT_EQ(t.included_as_written(), "topology.d/racks.yaml");
    // The tree topology is not taken, and the reader says so.
    bool noted = false;
    for (const auto& w : t.warnings())
        noted |= w.message.find("'fabric' (tree) is not used") != std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(YamlTopologyYaml, TopologyNamePicksOneOfSeveralBlockTopologies) {
    TempDir dir;
    dir.write("racks.yaml", std::string(kGeneratedTopologyYaml) + "- topology: small\n  block:\n    blocks:\n"
                                                                  "      - block: s1\n        nodes: gb[40-57]\n");
    EXPECT_THROW(load_topology(dir.write("a.yaml", "topology_yaml: racks.yaml\n")), ConfigError);
    const Topology t = load_topology(dir.write("b.yaml", "topology_yaml: racks.yaml\ntopology_name: small\n"));
    ASSERT_EQ(t.block_count(), 1u);
    EXPECT_EQ(t.block(0).name, "s1");
    try {
        load_topology(dir.write("c.yaml", "topology_yaml: racks.yaml\ntopology_name: fabric\n"));
        FAIL() << "a tree topology was taken";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.problems()[0].str(), dir.path() +
                                             "/racks.yaml:1: topology 'fabric' (tree) is not a block topology; "
                                             "nvlblock takes block topologies only");
        EXPECT_EQ(e.problems()[1].str(), dir.path() + "/c.yaml:1: in topology_yaml 'racks.yaml' included from here");
    }
    // A name the file lacks: one error, at topology_name's line (it was two,
    // the first without a line).
    try {
        load_topology(dir.write("d.yaml", "topology_yaml: racks.yaml\ntopology_name: nvl27\n"));
        FAIL() << "an unknown topology name was accepted";
    } catch (const ConfigError& e) {
        ASSERT_EQ(e.problems().size(), 1u) << e.what();
        EXPECT_EQ(e.problems()[0].str(), dir.path() + "/d.yaml:2: topology_name: no topology 'nvl27' in topology_yaml "
                                                      "'racks.yaml' (block topologies: nvl72, small)");
    }
}

TEST(YamlTopologyYaml, TopologyBlocksRulesApplyAtTheYamlsLines) {
    TempDir dir;
    // A block holding a node of another: topology/block's reader refuses it, at the YAML's line.
    dir.write("racks.yaml", "- topology: t\n  block:\n    blocks:\n      - block: r1\n        nodes: gb[01-18]\n"
                            "      - block: r2\n        nodes: gb[18-35]\n");
    try {
        load_topology(dir.write("a.yaml", "topology_yaml: racks.yaml\n"));
        FAIL() << "an overlapping block was accepted";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.problems()[0].where.str(), dir.path() + "/racks.yaml:6") << e.what();
    }
}

TEST(YamlTopologyYaml, ExcludesTopologyConfAndNeedsItsNameOnlyWithIt) {
    TempDir dir;
    dir.write("racks.yaml", kGeneratedTopologyYaml);
    dir.write("topology.conf", "BlockName=r1 Nodes=gb[01-18]\n");
    EXPECT_THROW(load_topology(dir.write("a.yaml", "topology_yaml: racks.yaml\ntopology_conf: topology.conf\n")),
                 ConfigError);
    try {
        load_topology(dir.write("b.yaml", "topology_conf: topology.conf\ntopology_name: nvl72\n"));
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.problems()[0].str(), dir.path() + "/b.yaml:2: topology_name names a topology of topology_yaml, "
                                                      "which is not given");
    }
}

} // namespace
} // namespace nvlblock

namespace nvlblock {
namespace {

// YAML aliases repeat one expression of a million names in a few bytes: the
// file's names are counted together and refused past four million, at the
// line of the alias of the block that went over (r4's `nodes: *big`, line
// 11), naming the anchored expression's line (issue 36; seeds in
// test/fuzz/corpus/yaml/aliases.yaml).
TEST(YamlErrors, AliasesCannotMultiplyTheNodesPastTheLimit) {
    std::string text = "blocks:\n  - name: r0\n    nodes: &big n[0000001-1048576]\n";
    for (int i = 1; i <= 5; ++i)
        text += "  - name: r" + std::to_string(i) + "\n    nodes: *big\n";
    const ConfigError e = yaml_error(text);
    bool found = false;
    for (const auto& p : e.problems())
        found = found ||
                (p.message.find("block 'r4': the file names more than 4194304 nodes in all") != std::string::npos &&
                 p.message.find("(in the value of an alias, written at line 3)") != std::string::npos &&
                 p.where.line == 11);
    EXPECT_TRUE(found) << e.what();
}

// A file with problems still says what it could read (spec_error.hpp): the
// blocks that read cleanly, not the damaged one, and not the hierarchy once
// a block is missing (its groups would name it); nvlblock-check builds that.
TEST(YamlReader, ProblemsComeWithTheBlocksThatReadCleanly) {
    const std::string text = "defaults:\n  slice: 4\n  spares: 0\nblocks:\n" + rack("r1", "n[01-04]") +
                             rack("r2", "n[05-08]", "    slice: x\n") + rack("r3", "n[09-12]") +
                             "hierarchy:\n  levels:\n    - name: su\n      groups:\n        su1: r[1-3]\n";
    try {
        read_topology_spec_text(text, "t.yaml", SourceFormat::kYaml);
        FAIL() << "no problem reported";
    } catch (const SpecError& e) {
        ASSERT_EQ(e.problems().size(), 1u);
        EXPECT_EQ(e.problems()[0].str(), "t.yaml:9: slice: 'x' is not a whole number");
        ASSERT_TRUE(e.partial());
        std::vector<std::string> names;
        for (const BlockSpec& b : e.partial()->blocks)
            names.push_back(b.name);
        EXPECT_EQ(names, (std::vector<std::string>{"r1", "r3"}));
        EXPECT_TRUE(e.partial()->hierarchy.levels.empty());
        EXPECT_FALSE(e.defaults_damaged());
    }
}

// An error in a value an alias brings is reported at the alias's line (each
// use may fail on its own), naming the anchor's; the anchor's own use at its.
TEST(YamlErrors, AnAliasedValueFailsAtTheAliasLine) {
    const std::string text = "blocks:\n"
                             "  - name: r1\n"
                             "    nodes: &bad n[01-04\n" // line 3
                             "  - name: r2\n"
                             "    nodes: *bad\n" // line 5
                             "  - name: r3\n"
                             "    nodes: n[05-08]\n";
    const ConfigError e = yaml_error(text);
    ASSERT_EQ(e.problems().size(), 2u) << e.what();
    EXPECT_EQ(e.problems()[0].str(), "test.yaml:3: block 'r1': bad hostlist 'n[01-04': missing ']'");
    EXPECT_EQ(e.problems()[1].str(), "test.yaml:5: block 'r2': bad hostlist 'n[01-04': missing ']' (in the value of an "
                                     "alias, written at line 3)");
}

TEST(YamlReader, DamagedDefaultsAreSaid) {
    try {
        read_topology_spec_text("defaults:\n  slcie: 4\nblocks:\n" + rack("r1", "n[01-04]"), "t.yaml",
                                SourceFormat::kYaml);
        FAIL() << "no problem reported";
    } catch (const SpecError& e) {
        EXPECT_TRUE(e.defaults_damaged());
        ASSERT_TRUE(e.partial());
        EXPECT_EQ(e.partial()->blocks.size(), 1u);
    }
}

} // namespace
} // namespace nvlblock
