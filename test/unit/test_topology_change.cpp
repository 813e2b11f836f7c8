// SPDX-License-Identifier: GPL-2.0-or-later
//
// Topology changes at run time (core/topology_change.hpp): which change of a
// node's block is allowed, the topology it makes, idempotent re-applies (the
// SchedMD/slurm PR #225 case), and recoveries whose blocks changed
// (recovery/held_blocks.hpp) ending with a logged fallback.
#include "core/planner.hpp"
#include "core/topology_change.hpp"
#include "recovery/held_blocks.hpp"
#include "recovery/recovery.hpp"
#include "recovery_log.hpp"
#include "state/ledger_file.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"
#include "writers/topology_change_text.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace nvlblock {
namespace {

using Outcome = TopologyChange::Outcome;
using Target = NodeAssignment::Target;
using test::range;

// Three racks of 17 (gb0001-gb0051), slices of 12 and 2 spares: the #225 case.
Topology three_of_17() {
    return test::racks(3, 17, 12, 2);
}

NodeAssignment into(const Topology& t, NodeIndex n, const std::string& block) {
    return {n, t.node_name(n), Target::kBlock, block};
}

// The planner's answer and the sentence slurmctld would log for it.
struct Answered : TopologyChange {
    std::string message;
};

Answered ask(Planner& p, const NodeAssignment& asked, std::span<const JobNodes> running, bool restoring) {
    Answered a;
    static_cast<TopologyChange&>(a) = p.change_node_block(asked, running, restoring);
    a.message = topology_change_text(p.topology(), asked, a);
    return a;
}

std::map<std::string, int> per_block(const Topology& t, const std::vector<NodeIndex>& nodes) {
    std::map<std::string, int> out;
    for (NodeIndex n : nodes)
        ++out[t.block_of(n) == kNoBlock ? "-" : t.block(t.block_of(n)).name];
    return out;
}

TEST(TopologyChange, ReapplyingEveryAssignmentChangesNothingAndSegmentsStay) {
    // A generator re-applies its whole assignment: every node into the block
    // it is in. Stock topology/block drops each node then (PR #225: a
    // 36-node --segment=12 job ran 17+17+2); nvlblock changes nothing.
    Planner p(three_of_17());
    const Ledger none;
    for (NodeIndex n = 0; n < p.topology().node_count(); ++n) {
        const std::string block = p.topology().block(p.topology().block_of(n)).name;
        const Answered c = ask(p, into(p.topology(), n, block), {}, false);
        ASSERT_EQ(c.outcome, Outcome::kUnchanged) << c.message;
        EXPECT_EQ(c.message, "node " + p.topology().node_name(n) + " is in " + block + " already");
    }
    for (const Block& b : p.topology().blocks())
        EXPECT_EQ(b.size(), 17);
    const auto states = test::all(p.topology());
    const Placement pl = p.place(states, test::nodes(36, 12), 0);
    ASSERT_TRUE(pl.placed()) << explain(p.topology(), pl);
    EXPECT_EQ(per_block(p.topology(), pl.nodes),
              (std::map<std::string, int>{{"rack01", 12}, {"rack02", 12}, {"rack03", 12}}));
}

TEST(TopologyChange, MovesAFreeNodeIntoAKnownBlock) {
    Planner p(three_of_17());
    const NodeIndex n = 50; // gb0051, rack03
    const Answered c = ask(p, into(p.topology(), n, "rack01"), {}, false);
    ASSERT_EQ(c.outcome, Outcome::kChanged) << c.message;
    EXPECT_EQ(c.message, "node gb0051 moved from block rack03 (now 16 nodes) to block rack01 (now 18 nodes)");
    const Topology& t = p.topology();
    EXPECT_EQ(t.block(0).size(), 18);
    EXPECT_EQ(t.block(2).size(), 16);
    EXPECT_EQ(t.block_of(n), 0);
    EXPECT_EQ(t.block(0).nodes_expr, "gb[0001-0017,0051]");
    EXPECT_FALSE(t.block(0).contiguous);
    EXPECT_TRUE(t.block(2).contiguous);
    EXPECT_EQ(t.nodes_in_blocks(), 51u);
    // The file's topology is untouched; back to it with no unit.
    EXPECT_EQ(p.configured().block_of(n), 2);
    const Answered back = ask(p, {n, "gb0051", Target::kConfigured, ""}, {}, false);
    ASSERT_EQ(back.outcome, Outcome::kChanged) << back.message;
    EXPECT_EQ(p.topology().block_of(n), 2);
    EXPECT_EQ(p.topology().block(2).nodes_expr, "gb[0035-0051]");
    // No unit again: it is where its file puts it.
    EXPECT_EQ(ask(p, {n, "gb0051", Target::kConfigured, ""}, {}, false).outcome, Outcome::kUnchanged);
}

TEST(TopologyChange, WhatEachGroupHoldsFollowsAMovedNode) {
    // Four racks of 18 (slices of 12, 2 spares: 16 ordinary nodes each) in
    // two scalable units. What the largest block and group hold is kept
    // with the topology (Topology::group_holds, asked by every multi-rack
    // decision): a node moved from rack03 (su2) to rack01 (su1) changes it.
    Planner p(test::racks(4, 18, 12, 2, false,
                          "hierarchy:\n  levels:\n    - name: su\n      groups:\n"
                          "        su1: rack[01-02]\n        su2: rack[03-04]\n"));
    auto holds = [&](int unit) {
        const std::span<const long> h = p.topology().group_holds(unit);
        return std::vector<long>(h.begin(), h.end());
    };
    EXPECT_EQ(holds(1), (std::vector<long>{16, 32}));
    EXPECT_EQ(holds(5), (std::vector<long>{15, 30})); // whole units of 5
    EXPECT_EQ(holds(13), (std::vector<long>{0, 0}));  // larger than every slice
    EXPECT_EQ(holds(100), (std::vector<long>{0, 0}));
    ASSERT_EQ(ask(p, into(p.topology(), 36, "rack01"), {}, false).outcome, Outcome::kChanged);
    EXPECT_EQ(holds(1), (std::vector<long>{17, 33})); // rack01 holds 17, su1 33; rack03 15, su2 31
    EXPECT_EQ(holds(4), (std::vector<long>{16, 32}));
}

TEST(TopologyChange, AnUnknownBlockIsRefusedNamingTheKnownOnes) {
    Planner p(three_of_17());
    const Answered c = ask(p, into(p.topology(), 3, "rack09"), {}, false);
    ASSERT_EQ(c.outcome, Outcome::kRefused);
    EXPECT_EQ(c.message, "there is no block 'rack09' in test.yaml (blocks: rack01, rack02, rack03); a new block is "
                         "described in nvlblock.yaml and read at scontrol reconfigure");
    EXPECT_EQ(p.topology().block_of(3), 0);
    // Restoring (Slurm's saved node topology at start-up) refuses it too.
    EXPECT_EQ(ask(p, into(p.topology(), 3, "rack09"), {}, true).outcome, Outcome::kRefused);
}

TEST(TopologyChange, ANodeOfARunningJobKeepsItsBlockWhileTheJobHasMoreThere) {
    Planner p(three_of_17());
    const JobNodes job{7, range(0, 11)}; // 12 nodes on rack01
    const Answered c = ask(p, into(p.topology(), 4, "rack02"), {&job, 1}, false);
    ASSERT_EQ(c.outcome, Outcome::kRefused);
    EXPECT_EQ(c.message, "node gb0005 runs JobId=7, which has 11 more nodes in block rack01: moving it would split "
                         "the job's block; apply it again once the job ended");
    EXPECT_EQ(p.topology().block_of(4), 0);
    // Out of every block is a move too.
    EXPECT_EQ(ask(p, {4, "gb0005", Target::kNone, ""}, {&job, 1}, false).outcome, Outcome::kRefused);
    // Re-applying its block is fine while the job runs.
    EXPECT_EQ(ask(p, into(p.topology(), 4, "rack01"), {&job, 1}, false).outcome, Outcome::kUnchanged);
    // A free node of the same block may go: the job keeps all of its nodes together.
    EXPECT_EQ(ask(p, into(p.topology(), 16, "rack02"), {}, false).outcome, Outcome::kChanged);
}

TEST(TopologyChange, ANodeWhoseJobIsAllElsewhereMayJoinThatBlock) {
    // gb0018 runs a job whose other nodes are all on rack02 (how a node
    // moved before a restart looks once Slurm re-applies its topology):
    // moving it there splits nothing.
    Planner p(three_of_17());
    std::vector<NodeIndex> nodes = range(17, 27);
    nodes.push_back(16);
    const JobNodes job{8, nodes};
    const Answered c = ask(p, into(p.topology(), 16, "rack02"), {&job, 1}, false);
    EXPECT_EQ(c.outcome, Outcome::kChanged) << c.message;
}

TEST(TopologyChange, ABlockAJobWaitsToRestartOnKeepsItsNodes) {
    Planner p(three_of_17());
    p.job_failed(9, range(0, 11), std::vector<NodeIndex>{3}, 1000); // 12 nodes on rack01, one failed
    ASSERT_TRUE(p.recovery().waiting_in_place(9));
    // Out of its block (even a node it did not have), or into it: refused.
    for (const NodeAssignment& a : {into(p.topology(), 15, "rack02"), into(p.topology(), 20, "rack01"),
                                    NodeAssignment{15, "gb0016", Target::kNone, ""}}) {
        const Answered c = ask(p, a, {}, false);
        ASSERT_EQ(c.outcome, Outcome::kRefused) << a.node_name;
        EXPECT_EQ(c.message, "JobId=9 is waiting to restart in place on block rack01 after a node failure: the "
                             "block keeps its nodes until the job restarts or falls back (recovery.wait); apply it "
                             "again then");
    }
    // Other blocks change freely.
    EXPECT_EQ(ask(p, into(p.topology(), 20, "rack03"), {}, false).outcome, Outcome::kChanged);
    // Restoring skips the job rules.
    EXPECT_EQ(ask(p, into(p.topology(), 15, "rack02"), {}, true).outcome, Outcome::kChanged);
}

TEST(TopologyChange, RemovalShrinksTheBlockAndItsSparesStayACount) {
    Planner p(three_of_17());
    const Answered c = ask(p, {16, "gb0017", Target::kNone, ""}, {}, false);
    ASSERT_EQ(c.outcome, Outcome::kChanged) << c.message;
    EXPECT_EQ(c.message, "node gb0017 left block rack01 (now 16 nodes); it is outside every block now");
    EXPECT_EQ(p.topology().block_of(16), kNoBlock);
    EXPECT_EQ(p.topology().block(0).size(), 16);
    EXPECT_EQ(p.topology().nodes_in_blocks(), 50u);
    // rack01 runs 14 nodes, its 2 spares are free, the other racks are
    // full: a 1-node job may not take a spare, and asking for the node that
    // left is asking for an ordinary server (scheduled without topology,
    // as Slurm's common code does), not for a withheld spare.
    auto states = test::all(p.topology(), NodeState::kBusy);
    test::set(states, {14, 15, 16}, NodeState::kFree);
    std::vector<std::uint8_t> only(p.topology().node_count(), 0);
    only[15] = 1;
    Request spare = test::job(5, 1);
    spare.available = only;
    EXPECT_EQ(p.place(states, spare, 0).reason, Reason::kSparesWithheld);
    only[15] = 0;
    only[16] = 1;
    Request server = test::job(6, 1);
    server.available = only;
    EXPECT_EQ(p.place(states, server, 0).reason, Reason::kNotInTopology);
    // A block never goes below its slice plus its spares (nvlblock.yaml's check).
    Planner full(test::racks(2, 18, 16, 2));
    const Answered more = ask(full, {17, "gb0018", Target::kNone, ""}, {}, false);
    ASSERT_EQ(more.outcome, Outcome::kRefused);
    EXPECT_EQ(more.message, "block 'rack01' would have 17 nodes; its slice 16 plus 2 spares needs 18");
    EXPECT_EQ(full.topology().block(0).size(), 18);
}

// Every refusal in the words slurmctld logs (as the core composed them
// before it returned refusal codes).
TEST(TopologyChange, EveryRefusalIsWordedForTheLog) {
    Planner p(three_of_17());
    EXPECT_EQ(ask(p, {99, "gbx", Target::kNone, ""}, {}, false).message,
              "node gbx (index 99) is not in nvlblock's topology (51 nodes): reconfigure first");
    EXPECT_EQ(ask(p, {3, "", Target::kNone, ""}, {}, false).message, "a node needs a name");
    EXPECT_EQ(ask(p, {3, "gb0001", Target::kNone, ""}, {}, false).message,
              "node gb0001 is node 0 in nvlblock's topology, not 3");
    EXPECT_EQ(ask(p, {3, "dyn99", Target::kNone, ""}, {}, false).message,
              "node dyn99 takes the place of gb0004, which is in block rack01: reconfigure first");
    Planner single(test::racks(2, 1, 1, 0));
    const Answered emptied = ask(single, {0, single.topology().node_name(0), Target::kNone, ""}, {}, false);
    EXPECT_EQ(emptied.outcome, Outcome::kRefused);
    EXPECT_EQ(emptied.message, "block 'rack01' would have no nodes left");
    Planner whole(test::racks(2, 18, 18, 0));
    EXPECT_EQ(ask(whole, {17, "gb0018", Target::kNone, ""}, {}, false).message,
              "block 'rack01' would have 17 nodes, fewer than its slice of 18");
    // And the changes: a node out of every block joins one.
    Planner q(three_of_17());
    ASSERT_EQ(ask(q, {16, "gb0017", Target::kNone, ""}, {}, false).outcome, Outcome::kChanged);
    EXPECT_EQ(ask(q, {16, "gb0017", Target::kBlock, "rack02"}, {}, false).message,
              "node gb0017 joined block rack02 (now 18 nodes)");
    EXPECT_EQ(ask(q, {16, "gb0017", Target::kNone, ""}, {}, false).message,
              "node gb0017 left block rack02 (now 17 nodes); it is outside every block now");
    EXPECT_EQ(ask(q, {16, "gb0017", Target::kNone, ""}, {}, false).message, "node gb0017 is in no block already");
}

TEST(TopologyChange, ANewDynamicNodeInAnEmptySlotJoinsABlock) {
    std::vector<std::string> universe;
    for (int i = 1; i <= 18; ++i) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "gb%04d", i);
        universe.push_back(buf);
    }
    universe.push_back(""); // a slot for a dynamic node (MaxNodeCount)
    Planner p(test::yaml_topology("defaults:\n  slice: 16\n  spares: 1\nblocks:\n  - name: rack01\n"
                                  "    nodes: gb[0001-0017]\n",
                                  &universe));
    const Answered c = ask(p, {18, "dyn01", Target::kBlock, "rack01"}, {}, false);
    ASSERT_EQ(c.outcome, Outcome::kChanged) << c.message;
    EXPECT_EQ(p.topology().find_node("dyn01"), std::optional<NodeIndex>(18));
    EXPECT_EQ(p.topology().block(0).size(), 18);
    // Deleted (its topology cleared): not in the file, so out of every block.
    EXPECT_EQ(ask(p, {18, "dyn01", Target::kConfigured, ""}, {}, false).outcome, Outcome::kChanged);
    EXPECT_EQ(p.topology().block_of(18), kNoBlock);
    // A name nvlblock has for another node is refused.
    EXPECT_EQ(ask(p, {18, "gb0001", Target::kBlock, "rack01"}, {}, false).outcome, Outcome::kRefused);
}

TEST(HeldBlocks, ARecoveryWhoseBlockChangedFallsBackLogged) {
    Planner p(test::racks(2, 18, 16, 2));
    p.job_failed(11, range(0, 15), std::vector<NodeIndex>{2, 3, 4}, 1000); // rack01, 3 lost
    ASSERT_EQ(p.ledger().find(11)->blocks.size(), 1u);
    EXPECT_EQ(held_block_token(p.ledger().find(11)->blocks[0]), "rack01=gb[0001-0018]");
    (void)test::log_lines(p);
    // The same blocks (a reconfigure that changed only rack02's settings): kept.
    p.replace_topology(test::racks(2, 18, 16, 1));
    EXPECT_EQ(p.advance(test::all(p.topology()), 1010), 0u);
    EXPECT_TRUE(p.recovery().waiting_in_place(11));
    // rack01 loses gb0018 to rack02: it falls back at once, with what changed.
    p.replace_topology(test::yaml_topology("defaults:\n  slice: 16\n  spares: 1\nblocks:\n  - name: rack01\n"
                                           "    nodes: gb[0001-0017]\n  - name: rack02\n    nodes: gb[0018-0036]\n"));
    const auto states = test::all(p.topology());
    const Placement before = p.place(states, test::job(11, 16), 1020);
    EXPECT_FALSE(before.recovery_in_place) << "placed back on a block that changed";
    EXPECT_EQ(p.advance(states, 1020), 1u);
    EXPECT_FALSE(p.recovery().waiting_in_place(11));
    ASSERT_TRUE(p.ledger().find(11)); // still open: it ends when the job starts
    const auto log = test::log_lines(p);
    ASSERT_EQ(log.size(), 1u);
    EXPECT_EQ(log[0], "nvlblock: recovery JobId=11 fallback after 20 s: block rack01 has 17 nodes (gb[0001-0017]) "
                      "now, 18 nodes (gb[0001-0018]) when the job failed (the topology changed); placing it anywhere "
                      "(had rack01)");
}

// A note is worded against the topology it was made on: a reconfigure that
// renumbers the nodes before the log is taken does not change its names.
TEST(RecoveryLog, NotesMadeBeforeAReconfigureKeepTheirNames) {
    Planner p(test::racks(2, 18, 16, 2));
    p.job_failed(11, range(0, 15), std::vector<NodeIndex>{2}, 1000); // gb0003 on rack01
    // The same nodes, listed rack02 first: node index 2 is gb0021 now.
    p.replace_topology(test::yaml_topology("blocks:\n  - name: rack02\n    nodes: gb[0019-0036]\n"
                                           "  - name: rack01\n    nodes: gb[0001-0018]\n"));
    ASSERT_EQ(p.topology().node_name(2), "gb0021");
    p.job_failed(12, range(0, 15), std::vector<NodeIndex>{2}, 1010); // gb0021 on rack02
    const auto batches = p.take_log();
    ASSERT_EQ(batches.size(), 2u);
    EXPECT_EQ(batches[0].topology->node_name(2), "gb0003");
    const std::vector<std::string> lines = recovery_log_lines(batches);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0], "nvlblock: recovery JobId=11 lost 1 of 16 nodes (gb0003) on rack01; holding rack01 for an "
                        "in-place restart (15 prior nodes + 1 spares), fallback after 300 s");
    // (30 s: the file's blocks reclaim their spares, the default, so the job
    // waits only its hold.)
    EXPECT_EQ(lines[1], "nvlblock: recovery JobId=12 lost 1 of 16 nodes (gb0021) on rack02; holding rack02 for an "
                        "in-place restart (15 prior nodes + 1 spares), fallback after 30 s");
    EXPECT_TRUE(p.take_log().empty());
}

TEST(HeldBlocks, ARenamedOrRemovedBlockEndsTheWait) {
    const Topology t = test::racks(2, 18, 16, 2);
    const std::vector<HeldBlock> held = held_blocks(t, range(0, 15));
    EXPECT_FALSE(held_blocks_changed(t, held));
    const Topology renamed = test::yaml_topology("blocks:\n  - name: nvl01\n    nodes: gb[0001-0018]\n");
    const auto change = held_blocks_changed(renamed, held);
    ASSERT_TRUE(change);
    EXPECT_EQ(change->held, held[0]);
    EXPECT_FALSE(change->now);
    EXPECT_EQ(held_block_change_text(*change), "block rack01 no longer exists (it had 18 nodes (gb[0001-0018]))");
    // A record saved before blocks were kept is never found changed.
    EXPECT_FALSE(held_blocks_changed(renamed, std::vector<HeldBlock>{}));
}

// The question every decision asks (held_blocks_unchanged, no copies) gives
// the answer of the one that words the change, topology by topology.
TEST(HeldBlocks, TheQuickAnswerIsTheWordedOne) {
    const Topology t = test::racks(3, 18, 16, 2);
    const std::vector<HeldBlock> held = held_blocks(t, range(10, 25)); // rack01 and rack02
    const std::vector<Topology> others = {
        t,
        test::racks(3, 17, 16, 1), // every rack one node shorter
        test::yaml_topology("blocks:\n  - name: rack01\n    nodes: gb[0001-0018]\n  - name: rack02\n"
                            "    nodes: gb[0019-0036]\n"), // the same two, rack03 gone
        test::yaml_topology("blocks:\n  - name: rack02\n    nodes: gb[0001-0018]\n  - name: rack01\n"
                            "    nodes: gb[0019-0036]\n"), // the names swapped
        test::yaml_topology("blocks:\n  - name: rack01\n    nodes: gb[0001-0017],gb0019\n  - name: rack02\n"
                            "    nodes: gb0018,gb[0020-0036]\n"), // one node each way, sizes kept
        test::yaml_topology("blocks:\n  - name: nvl01\n    nodes: gb[0001-0018]\n"),
    };
    const std::vector<bool> unchanged = {true, false, true, false, false, false};
    for (std::size_t i = 0; i < others.size(); ++i) {
        EXPECT_EQ(held_blocks_unchanged(others[i], held), unchanged[i]) << i;
        EXPECT_EQ(!held_blocks_changed(others[i], held), unchanged[i]) << i;
    }
    EXPECT_TRUE(held_blocks_unchanged(others[1], std::vector<HeldBlock>{}));
}

// The answer is kept per topology (RecoveryRecord::blocks_same_in, by
// Topology::serial): a copy shares its serial, a topology built or edited
// anew does not, and is asked again.
TEST(HeldBlocks, TheAnswerIsKeptPerTopologyAndAskedAgainInAnother) {
    const Topology t = test::racks(2, 18, 16, 2);
    const Topology copy = t;
    const Topology shorter = test::racks(2, 17, 16, 1);
    EXPECT_EQ(copy.serial(), t.serial());
    EXPECT_NE(shorter.serial(), t.serial());
    EXPECT_NE(test::racks(2, 18, 16, 2).serial(), t.serial()); // the same content, built again
    RecoveryRecord r;
    r.blocks = held_blocks(t, range(0, 15));
    r.blocks_same_in = t.serial();
    EXPECT_FALSE(Recovery::blocks_changed(t, r));
    EXPECT_FALSE(Recovery::blocks_changed(copy, r));
    EXPECT_TRUE(Recovery::blocks_changed(shorter, r)); // another serial: asked, and changed
    // A kept answer is trusted for its own topology only.
    r.blocks_same_in = shorter.serial();
    EXPECT_FALSE(Recovery::blocks_changed(shorter, r));
    EXPECT_FALSE(Recovery::blocks_changed(t, r)); // asked again: the same blocks
    // The ledger notes it for every record when the topology changes.
    Ledger ledger;
    RecoveryRecord a = r;
    a.job_id = 1;
    a.blocks_same_in = 0;
    ledger.open(a);
    ledger.note_blocks_same(t);
    EXPECT_EQ(ledger.find(1)->blocks_same_in, t.serial());
    ledger.note_blocks_same(shorter);
    EXPECT_EQ(ledger.find(1)->blocks_same_in, 0u);
}

TEST(HeldBlocks, SavedWithTheRecordAndReadBack) {
    Planner p(test::racks(2, 18, 16, 2));
    p.job_failed(12, range(10, 25), std::vector<NodeIndex>{11}, 500); // rack01 and rack02
    const std::string text = p.save_state();
    EXPECT_NE(text.find(" rack01=gb[0001-0018] rack02=gb[0019-0036]\n"), std::string::npos) << text;
    Planner q(test::racks(2, 18, 16, 2));
    q.load_state(text, "state");
    ASSERT_TRUE(q.ledger().find(12));
    EXPECT_EQ(q.ledger().find(12)->blocks, p.ledger().find(12)->blocks);
    // A record line without them (written before) reads as before.
    Planner r(test::racks(2, 18, 16, 2));
    r.load_state("nvlblock-state 2\ncounters 1 0 0 0 0 0\nrecord 12 500 800 800 0 gb[0011-0026] gb0012\n"
                 "end 1 0 0\n",
                 "state");
    ASSERT_TRUE(r.ledger().find(12));
    EXPECT_TRUE(r.ledger().find(12)->blocks.empty());
    // A bad block token is a corrupt file.
    Planner s(test::racks(2, 18, 16, 2));
    EXPECT_THROW(s.load_state("nvlblock-state 2\ncounters 1 0 0 0 0 0\nrecord 12 500 800 800 0 gb[0011-0026] "
                              "gb0012 rack01\nend 1 0 0\n",
                              "state"),
                 ConfigError);
}

} // namespace
} // namespace nvlblock
