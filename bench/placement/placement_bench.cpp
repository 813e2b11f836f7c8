// SPDX-License-Identifier: GPL-2.0-or-later
//
// Cost of one placement decision at 128 racks (2,304 nodes), 1,024 racks
// (18,432 nodes) and 8,192 racks (147,456 nodes) with a realistic mix: about 70% of nodes busy, 2% failed,
// some spares lent, a few jobs waiting to restart in place. Measured through
// the Planner (what the simulator calls) and through the C ABI (what the
// Slurm plugin calls), including building the snapshot each time as the
// plugin does.
#include "core/planner.hpp"
#include "nvlblock/nvlblock.h"
#include "readers/load_topology.hpp"
#include "recovery/held_blocks.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>

using namespace nvlblock;

namespace {

std::string yaml_for(int racks) {
    std::string y = "defaults:\n  slice: 16\n  spares: 2\n  lending: true\npreemptible:\n  qos: [lend]\nblocks:\n";
    for (int r = 0; r < racks; ++r) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "  - name: rack%04d\n    nodes: gb[%05d-%05d]\n", r + 1, r * 18 + 1,
                      r * 18 + 18);
        y += buf;
    }
    return y;
}

struct Cluster {
    explicit Cluster(int racks)
        : planner(build_topology(read_topology_spec_text(yaml_for(racks), "bench.yaml", SourceFormat::kYaml))) {
        const std::size_t n = planner.topology().node_count();
        std::mt19937_64 rng(42);
        std::uniform_real_distribution<double> u(0, 1);
        states.assign(n, NodeState::kFree);
        for (std::size_t i = 0; i < n; ++i) {
            const double x = u(rng);
            states[i] = x < 0.02   ? NodeState::kDown
                        : x < 0.72 ? NodeState::kBusy
                        : x < 0.74 ? NodeState::kLent
                                   : NodeState::kFree;
        }
        // A few jobs waiting to restart in place.
        for (std::uint32_t j = 0; j < 4; ++j) {
            std::vector<NodeIndex> had;
            for (NodeIndex k = 0; k < 16; ++k)
                had.push_back(static_cast<NodeIndex>(j * 18 * 7 + k));
            planner.job_failed(1000 + j, had, std::vector<NodeIndex>{had[3]}, 0);
            for (NodeIndex k : had)
                states[k] = NodeState::kFree;
            states[had[3]] = NodeState::kDown;
        }
        raw.resize(n);
        for (std::size_t i = 0; i < n; ++i)
            raw[i] = static_cast<std::uint8_t>(states[i]);
    }
    Planner planner;
    std::vector<NodeState> states;
    std::vector<std::uint8_t> raw;
};

Cluster& cluster(int racks) {
    // Built on first use: the 8,192-rack cluster takes a while to set up.
    if (racks == 128) {
        static Cluster small(128);
        return small;
    }
    if (racks == 1024) {
        static Cluster large(1024);
        return large;
    }
    static Cluster huge(8192);
    return huge;
}

void BM_Planner(benchmark::State& st) {
    Cluster& c = cluster(static_cast<int>(st.range(0)));
    Request r;
    r.job_id = 7;
    r.min_nodes = r.max_nodes = static_cast<std::uint32_t>(st.range(1));
    r.segment = static_cast<std::uint32_t>(st.range(2));
    for (auto _ : st)
        benchmark::DoNotOptimize(c.planner.place(c.states, r, 10));
    st.counters["nodes"] = static_cast<double>(c.states.size());
}

void BM_Recovery(benchmark::State& st) {
    Cluster& c = cluster(static_cast<int>(st.range(0)));
    Request r;
    r.job_id = 1001;
    r.min_nodes = r.max_nodes = 16;
    for (auto _ : st)
        benchmark::DoNotOptimize(c.planner.place(c.states, r, 10));
}

// Through the C ABI as the plugin asks, with Slurm's map of free nodes.
// Between decisions `changes` nodes change (a job of that many nodes starts
// on free nodes, or ends; -1: every node is said to have changed), named to
// the planner when `tracked` (nvlb_track_changes), or found by comparing
// every node when not (the path of a caller that names nothing).
void BM_CAbi(benchmark::State& st) {
    const int racks = static_cast<int>(st.range(0));
    const bool tracked = st.range(3) != 0;
    const long changes = st.range(4);
    Cluster& c = cluster(racks);
    char path[] = "/tmp/nvlblock-bench-XXXXXX.yaml";
    int fd = mkstemps(path, 5);
    std::ofstream(path) << yaml_for(racks);
    close(fd);
    nvlb_planner_t* p = nullptr;
    nvlb_error_t err;
    if (nvlb_planner_load(path, nullptr, 0, 0, &p, &err) != NVLB_OK) {
        st.SkipWithError(err.message);
        return;
    }
    unlink(path);
    std::vector<std::uint8_t> raw = c.raw, avail(raw.size());
    for (std::size_t i = 0; i < avail.size(); ++i)
        avail[i] = raw[i] == NVLB_NODE_FREE;
    if (tracked)
        nvlb_track_changes(p, true);
    // The nodes that change: free ones spread over the cluster, taken and
    // given back in turn.
    std::vector<std::uint32_t> flip;
    for (std::size_t i = 0; i < raw.size() && changes > 0 && flip.size() < static_cast<std::size_t>(changes);
         i += raw.size() / static_cast<std::size_t>(changes) + 1)
        for (std::size_t k = i; k < raw.size(); ++k)
            if (raw[k] == NVLB_NODE_FREE) {
                flip.push_back(static_cast<std::uint32_t>(k));
                break;
            }
    std::vector<std::uint32_t> nodes(raw.size());
    nvlb_request_t req{};
    req.job_id = 7;
    req.min_nodes = req.max_nodes = static_cast<std::uint32_t>(st.range(1));
    req.segment = static_cast<std::uint32_t>(st.range(2));
    req.available = avail.data();
    req.now = 10;
    nvlb_placement_t out{};
    out.nodes = nodes.data();
    out.nodes_capacity = nodes.size();
    bool taken = false;
    for (auto _ : st) {
        taken = !taken;
        for (std::uint32_t k : flip) {
            raw[k] = taken ? NVLB_NODE_BUSY : NVLB_NODE_FREE;
            avail[k] = !taken;
        }
        if (tracked && changes < 0)
            nvlb_track_changes(p, true); // "every node may have changed"
        else if (tracked)
            nvlb_nodes_changed(p, flip.data(), flip.size());
        benchmark::DoNotOptimize(nvlb_place(p, raw.data(), raw.size(), &req, &out));
    }
    nvlb_planner_free(p);
}

// The core's share of slurmctld's reclaim pass (plugin/topology/reclaim.c,
// under the job, node and partition write locks), per open recovery: which
// jobs could use a reclaim, then the plan for one of them against every
// running job. `reserve: reclaim` racks at about 70% busy in jobs of 1-8
// nodes; the recovering job's rack has one node down and its two other
// nodes run 1-node jobs Slurm lets it preempt, so a plan is made. Slurm's
// side of the pass (walking job_list, slurm_find_preemptable_jobs, the
// PreemptExemptTime check) is not in this figure.
struct ReclaimCluster {
    explicit ReclaimCluster(int racks)
        : planner(build_topology(read_topology_spec_text("defaults:\n  slice: 16\n  spares: 2\n  reserve: reclaim\n" +
                                                             yaml_for(racks).substr(yaml_for(racks).find("blocks:")),
                                                         "bench.yaml", SourceFormat::kYaml))) {
        const std::size_t n = planner.topology().node_count();
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> u(0, 1);
        states.assign(n, NodeState::kFree);
        RunningJob cur;
        auto flush = [&] {
            if (!cur.nodes.empty())
                running.push_back(cur);
            cur = RunningJob{};
        };
        for (NodeIndex i = 18; i < n; ++i) { // rack 1 is the recovering job's
            if (u(rng) >= 0.7) {
                flush();
                continue;
            }
            states[i] = NodeState::kBusy;
            if (cur.nodes.empty() || cur.nodes.size() >= 1 + static_cast<std::size_t>(u(rng) * 8)) {
                flush();
                cur.job_id = static_cast<std::uint32_t>(running.size() + 10);
                cur.started = -3600;
                cur.slurm_may_preempt = true;
                cur.preempt_mode = PreemptMode::kRequeue;
            }
            cur.nodes.push_back(i);
        }
        flush();
        std::vector<NodeIndex> had;
        for (NodeIndex k = 0; k < 16; ++k)
            had.push_back(k);
        planner.job_failed(5, had, std::vector<NodeIndex>{3}, 0);
        states[3] = NodeState::kDown;
        for (NodeIndex k : {NodeIndex{16}, NodeIndex{17}}) {
            states[k] = NodeState::kBusy;
            RunningJob j;
            j.job_id = 100000 + k;
            j.nodes = {k};
            j.started = -600;
            j.slurm_may_preempt = true;
            j.preempt_mode = PreemptMode::kRequeue;
            running.push_back(j);
        }
    }
    Planner planner;
    std::vector<NodeState> states;
    std::vector<RunningJob> running;
};

void BM_ReclaimPass(benchmark::State& st) {
    static ReclaimCluster c(static_cast<int>(st.range(0)));
    Request r;
    r.job_id = 5;
    r.min_nodes = r.max_nodes = 16;
    Reclaimer who;
    who.job_id = 5;
    for (auto _ : st) {
        benchmark::DoNotOptimize(c.planner.recovery().reclaim_candidates(c.planner.topology(), 100));
        const ReclaimDecision d = c.planner.plan_reclaim(c.states, r, who, c.running, 100);
        if (!d.plan)
            st.SkipWithError("no plan: the benchmark's cluster is not what it means to be");
        benchmark::DoNotOptimize(d);
    }
    st.counters["running_jobs"] = static_cast<double>(c.running.size());
}

// The baseline of BM_HeldBlocksUnchanged: the question as every decision
// asked it until stop 46 (each block by name among all, its node names
// copied and sorted, compared).
bool held_blocks_unchanged_by_copy(const Topology& t, std::span<const HeldBlock> held) {
    for (const HeldBlock& h : held) {
        const auto b = t.find_block(h.name);
        if (!b)
            return false;
        std::vector<std::string> names;
        for (NodeIndex n : t.block(*b).nodes)
            names.push_back(t.node_name(n));
        std::sort(names.begin(), names.end());
        if (names != h.nodes)
            return false;
    }
    return true;
}

// Whether a recovering job's blocks are as they were, the question every
// decision asks of each open recovery with a hold: asked of a job whose
// blocks are the last two of the cluster. 0: as held_blocks_unchanged asks
// it (no copies; each block through its first node); 1: the baseline above.
void BM_HeldBlocksUnchanged(benchmark::State& st) {
    const Topology& t = cluster(static_cast<int>(st.range(0))).planner.topology();
    const auto last = static_cast<NodeIndex>(t.node_count() - 20);
    std::vector<NodeIndex> nodes;
    for (NodeIndex k = 0; k < 16; ++k)
        nodes.push_back(last + k);
    const std::vector<HeldBlock> held = held_blocks(t, nodes);
    for (auto _ : st)
        benchmark::DoNotOptimize(st.range(1) ? held_blocks_unchanged_by_copy(t, held) : held_blocks_unchanged(t, held));
}

} // namespace

// Arguments: racks, nodes, segment.
BENCHMARK(BM_Planner)
    ->ArgNames({"racks", "nodes", "segment"})
    ->Args({128, 1, 0})
    ->Args({128, 4, 0})
    ->Args({128, 16, 16})
    ->Args({128, 64, 16})
    ->Args({1024, 1, 0})
    ->Args({1024, 16, 16})
    ->Args({1024, 256, 16})
    ->Args({8192, 1, 0})
    ->Args({8192, 16, 16})
    ->Args({8192, 256, 16})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Recovery)->ArgNames({"racks"})->Arg(128)->Arg(1024)->Arg(8192)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HeldBlocksUnchanged)
    ->ArgNames({"racks", "by_copy"})
    ->Args({1024, 0})
    ->Args({1024, 1})
    ->Args({8192, 0})
    ->Args({8192, 1})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReclaimPass)->ArgNames({"racks"})->Arg(1024)->Unit(benchmark::kMicrosecond);
// Arguments: racks, nodes, segment, tracked, nodes changed between decisions.
BENCHMARK(BM_CAbi)
    ->ArgNames({"racks", "nodes", "segment", "tracked", "changes"})
    ->Args({128, 16, 16, 0, 0})
    ->Args({1024, 16, 16, 0, 0})
    ->Args({8192, 16, 16, 0, 0})
    ->Args({8192, 1, 0, 0, 4})
    ->Args({8192, 1, 0, 1, 4})
    ->Args({8192, 16, 16, 0, 4})
    ->Args({8192, 16, 16, 1, 4})
    ->Args({8192, 16, 16, 1, -1})
    ->Args({128, 1, 0, 0, 4})
    ->Args({128, 1, 0, 1, 4})
    ->Args({128, 16, 16, 0, 4})
    ->Args({128, 16, 16, 1, 4})
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
