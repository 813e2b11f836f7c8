// SPDX-License-Identifier: GPL-2.0-or-later
//
// The one translation of Slurm's facts into the engine's question
// (core/slurm_request.hpp): the -N min-max clamp, and the rules that differ
// between Slurm releases (--segment larger than the job from 26.05, a
// --nodelist of a job of several segments from 25.11), asked of the engine
// as the plugin asks them. Racks hold 4 nodes: rack r (1-based) is node
// indices 4(r-1) .. 4r-1.
#include "core/slurm_request.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"

#include <gtest/gtest.h>

namespace nvlblock {
namespace {

using test::all;
using test::run;

Topology racks_of_four(int racks) {
    std::string s;
    for (int r = 1; r <= racks; ++r)
        s += "BlockName=rack" + std::to_string(r) + " Nodes=gb[" + std::to_string((r - 1) * 4 + 1) + "-" +
             std::to_string(r * 4) + "]\n";
    return test::conf_topology(s + "BlockSizes=4,8\n");
}

SlurmJobFacts job(std::uint32_t min_nodes, std::uint32_t segment = 0) {
    SlurmJobFacts f;
    f.job_id = 7;
    f.min_nodes = min_nodes;
    f.max_nodes = min_nodes;
    f.req_nodes = min_nodes;
    f.segment_size = segment;
    return f;
}

TEST(SlurmRequest, MinMaxTakesSlurmsRequestedCountWithinTheClusterAndTheMinimum) {
    std::vector<std::uint8_t> candidates;
    SlurmJobFacts f = job(2);
    f.max_nodes = 500; // -N 2-500
    f.req_nodes = 6;   // select asks for 6
    EXPECT_EQ(request_from_slurm(f, 2411, 16, candidates).max_nodes, 6u);
    f.req_nodes = 0; // not given: Slurm's bound, within the cluster
    EXPECT_EQ(request_from_slurm(f, 2411, 16, candidates).max_nodes, 16u);
    f.max_nodes = 0; // no bound: the minimum
    EXPECT_EQ(request_from_slurm(f, 2411, 16, candidates).max_nodes, 2u);
    f = job(20); // more than the cluster: still its minimum (the engine refuses it)
    EXPECT_EQ(request_from_slurm(f, 2411, 16, candidates).max_nodes, 20u);
}

TEST(SlurmRequest, WaitedCountsFromTheJobsEligibleTime) {
    std::vector<std::uint8_t> candidates;
    SlurmJobFacts f = job(1);
    f.now = 1000;
    f.eligible_since = 400;
    EXPECT_EQ(request_from_slurm(f, 2411, 16, candidates).waited, 600);
    f.eligible_since = 0; // not known
    EXPECT_EQ(request_from_slurm(f, 2411, 16, candidates).waited, 0);
}

TEST(SlurmRequest, From2605ASegmentLargerThanTheJobIsIgnored) {
    const Topology t = racks_of_four(4);
    std::vector<std::uint8_t> candidates;
    const SlurmJobFacts f = job(2, 8);
    const Request before = request_from_slurm(f, 2511, t.node_count(), candidates);
    EXPECT_EQ(before.segment, 8u);
    EXPECT_TRUE(run(t, all(t), before).topology_unavailable); // larger than any slice
    const Request since = request_from_slurm(f, 2605, t.node_count(), candidates);
    EXPECT_EQ(since.segment, 0u);
    const Placement p = run(t, all(t), since);
    EXPECT_TRUE(p.placed()) << explain(t, p);
}

TEST(SlurmRequest, From2511ANodelistOfSeveralSegmentsNamesTheCandidates) {
    const Topology t = racks_of_four(4);
    std::vector<std::uint8_t> candidates;
    SlurmJobFacts f = job(4, 2);
    f.nodelist = {0, 1, 4, 5}; // two nodes on each of rack 1 and 2
    const Request r = request_from_slurm(f, 2511, t.node_count(), candidates);
    EXPECT_TRUE(r.required.empty());
    Placement p = run(t, all(t), r);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.nodes, (std::vector<NodeIndex>{0, 1, 4, 5}));
    // A candidate Slurm does not offer now is not one.
    std::vector<std::uint8_t> offered(t.node_count(), 1);
    offered[5] = 0;
    f.available = offered;
    p = run(t, all(t), request_from_slurm(f, 2511, t.node_count(), candidates));
    EXPECT_FALSE(p.placed());
    // A list shorter than the job is refused from 25.11, any list before.
    f.available = {};
    f.nodelist = {0, 1};
    p = run(t, all(t), request_from_slurm(f, 2511, t.node_count(), candidates));
    EXPECT_TRUE(p.topology_unavailable);
    EXPECT_NE(explain(t, p).find("must name every node"), std::string::npos) << explain(t, p);
    f.nodelist = {0, 1, 4, 5};
    p = run(t, all(t), request_from_slurm(f, 2505, t.node_count(), candidates));
    EXPECT_TRUE(p.topology_unavailable);
    EXPECT_NE(explain(t, p).find("not supported"), std::string::npos) << explain(t, p);
}

TEST(SlurmRequest, ANodelistOfOneSegmentIsRequiredOnEveryRelease) {
    const Topology t = racks_of_four(4);
    std::vector<std::uint8_t> candidates;
    SlurmJobFacts f = job(2, 2);
    f.nodelist = {4, 5};
    for (int release : {2411, 2505, 2511, 2605}) {
        const Request r = request_from_slurm(f, release, t.node_count(), candidates);
        EXPECT_EQ(r.required, (std::vector<NodeIndex>{4, 5})) << release;
        const Placement p = run(t, all(t), r);
        ASSERT_TRUE(p.placed()) << release << ": " << explain(t, p);
        EXPECT_EQ(p.nodes, (std::vector<NodeIndex>{4, 5}));
    }
}

} // namespace
} // namespace nvlblock
