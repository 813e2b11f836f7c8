// SPDX-License-Identifier: GPL-2.0-or-later
//
// The simulator and the plugin decide the same way on the same state. The
// plugin decides through the C ABI (nvlb_place in include/nvlblock/nvlblock.h)
// of the shared libnvlblock; here that library is loaded with dlopen, as the
// plugin's shared object loads it, and given the same topology file. Every
// decision of whole simulations (every policy, EASY backfill with its
// what-if placements, failures, in-place restarts, lending, preemption,
// spares reclaimed from running work; the peers' expedited requeues and
// in-job spares) is replayed through it, with the ledger
// fed the same failures, restarts and reclaims and its clock advanced at the
// same moments, and node sets, reasons, messages, reclaimed jobs and
// fallbacks must match. So must every other rule the simulator takes from
// the core: whether a job could ever run (at submission), which jobs are
// preemptible (the topology's selector), the state of nodes running
// preemptible work (lent), and which restarts were in place.
#include "nvlblock/nvlblock.h"
#include "readers/load_topology.hpp"
#include "sim_test_support.hpp"
#include "synthetic.hpp"
#include "writers/explain.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace nvlblock::sim {
namespace {

// The C ABI, resolved from libnvlblock.so.
struct Capi {
    void* handle = nullptr;
    decltype(&nvlb_planner_load) load = nullptr;
    decltype(&nvlb_planner_free) free_planner = nullptr;
    decltype(&nvlb_set_requeue_delay) set_requeue_delay = nullptr;
    decltype(&nvlb_place) place = nullptr;
    decltype(&nvlb_job_started) job_started = nullptr;
    decltype(&nvlb_job_ended) job_ended = nullptr;
    decltype(&nvlb_reason_name) reason_name = nullptr;
    decltype(&nvlb_plan_reclaim) plan_reclaim = nullptr;
    decltype(&nvlb_reclaim_started) reclaim_started = nullptr;
    decltype(&nvlb_advance) advance = nullptr;
    decltype(&nvlb_is_preemptible) is_preemptible = nullptr;
    decltype(&nvlb_report) report = nullptr;
    decltype(&nvlb_free) free_text = nullptr;
    decltype(&nvlb_block_count) block_count = nullptr;

    Capi() {
        handle = dlopen(NVLBLOCK_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            return;
        auto get = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
        };
        get(load, "nvlb_planner_load");
        get(free_planner, "nvlb_planner_free");
        get(set_requeue_delay, "nvlb_set_requeue_delay");
        get(place, "nvlb_place");
        get(job_started, "nvlb_job_started");
        get(job_ended, "nvlb_job_ended");
        get(reason_name, "nvlb_reason_name");
        get(plan_reclaim, "nvlb_plan_reclaim");
        get(reclaim_started, "nvlb_reclaim_started");
        get(advance, "nvlb_advance");
        get(is_preemptible, "nvlb_is_preemptible");
        get(report, "nvlb_report");
        get(free_text, "nvlb_free");
        get(block_count, "nvlb_block_count");
    }
    ~Capi() {
        if (handle)
            dlclose(handle);
    }
    bool ok() const {
        return handle && load && free_planner && set_requeue_delay && place && job_started && job_ended &&
               plan_reclaim && reclaim_started && advance && is_preemptible && report && free_text && block_count;
    }
};

// What the plugin passes for a running job, from what the simulator saw (the
// strings stay owned by `j`).
nvlb_running_job_t running_job_of(const nvlblock::RunningJob& j) {
    nvlb_running_job_t r{};
    r.job_id = j.job_id;
    r.nodes = j.nodes.data();
    r.node_count = j.nodes.size();
    r.started = j.started;
    r.waited = j.waited;
    r.user = j.user;
    r.het_job_id = j.het_job_id;
    r.qos = j.qos.c_str();
    r.partition = j.partition.c_str();
    r.account = j.account.c_str();
    r.reservation = j.reservation.c_str();
    r.requeueable = j.requeueable;
    r.exempt = j.exempt;
    r.preemptible = j.preemptible;
    r.slurm_may_preempt = j.slurm_may_preempt;
    r.being_preempted = j.being_preempted;
    r.preempt_mode =
        static_cast<std::uint8_t>(j.preempt_mode == nvlblock::PreemptMode::kRequeue   ? NVLB_PREEMPT_REQUEUE
                                  : j.preempt_mode == nvlblock::PreemptMode::kCancel  ? NVLB_PREEMPT_CANCEL
                                  : j.preempt_mode == nvlblock::PreemptMode::kSuspend ? NVLB_PREEMPT_SUSPEND
                                                                                      : NVLB_PREEMPT_OFF);
    return r;
}

// Slurm's could-it-ever-run question as the plugin receives it: eval_nodes
// with every configured node offered (failed ones too), the cluster as it is,
// the job just submitted. The plugin has no other entry for it.
bool slurm_ever_question(const Capi& capi, nvlb_planner_t* planner, const std::vector<NodeState>& cluster,
                         const nvlblock::Request& r, Seconds now) {
    std::vector<std::uint8_t> states(cluster.size());
    for (std::size_t i = 0; i < states.size(); ++i)
        states[i] = static_cast<std::uint8_t>(cluster[i]);
    const std::vector<std::uint8_t> every_node(states.size(), 1);
    std::vector<std::uint32_t> nodes(states.size());
    nvlb_request_t req{};
    req.job_id = r.job_id;
    req.min_nodes = r.min_nodes;
    req.max_nodes = r.max_nodes;
    req.req_nodes = r.max_nodes;
    req.segment = r.segment;
    req.preemptible = r.preemptible;
    req.available = every_node.data();
    req.now = now;
    req.eligible_since = now;
    nvlb_placement_t out{};
    out.nodes = nodes.data();
    out.nodes_capacity = nodes.size();
    EXPECT_EQ(capi.place(planner, states.data(), states.size(), &req, &out), NVLB_OK) << out.message;
    return out.reason == NVLB_PLACED;
}

nvlb_reclaimer_t reclaimer_of(const nvlblock::Reclaimer& w) {
    nvlb_reclaimer_t r{};
    r.user = w.user;
    r.het_job_id = w.het_job_id;
    r.reservation = w.reservation.c_str();
    return r;
}

struct Tally {
    std::size_t decisions = 0, placed = 0, hypothetical = 0, in_place = 0, with_available = 0, mismatches = 0;
    std::size_t reclaim_plans = 0, reclaims = 0;
    std::size_t victims_preempted = 0, victims_requeued = 0;     // by Slurm's preemption; by reclaim_from
    std::size_t advances = 0, fallbacks = 0;                     // clock moves, and jobs that fell back
    std::size_t submissions = 0, never_runnable = 0;             // can-ever-run questions, and refusals
    std::size_t preemptible_jobs = 0;                            // the selector said yes
    std::size_t decisions_with_lent_nodes = 0;                   // states where preemptible work ran
    std::size_t job_ends = 0, ends_opened = 0, ends_watched = 0; // faults with the node up, and what the core did
    std::uint64_t sim_after_end = 0, capi_after_end = 0;         // recoveries a drain after the end opened
    std::uint64_t sim_in_place = 0, sim_ledger_in_place = 0, capi_in_place = 0;
};

// "in_place": N from the C ABI's JSON status (the ledger's counter).
std::uint64_t json_counter(const std::string& json, const std::string& key) {
    const auto at = json.find("\"" + key + "\": ");
    return at == std::string::npos ? ~0ull : std::stoull(json.substr(at + key.size() + 4));
}

// The simulation replay() runs for a policy kind, queue mode and seed.
SimOptions replay_options(PolicyKind kind, QueueMode queue, std::uint64_t seed) {
    SimOptions o;
    o.shape.racks = 6;
    o.queue = queue;
    o.horizon = 3 * 86400;
    o.window_end = o.horizon;
    o.bucket = 3600;
    o.bf_interval = 0;
    o.preemption = PreemptionMode::kLend;
    if (kind == PolicyKind::kRecommended) {
        // Reclaims of both kinds (with EASY, Slurm's preemption of the
        // preemptible QOS first; with FIFO, no preemption and the site's
        // reclaim_from naming every QOS), victims that keep their nodes for
        // a grace time (being_preempted meanwhile) and some jobs that may
        // not be requeued.
        const bool easy = queue == QueueMode::kEasy;
        o.preemption = easy ? PreemptionMode::kAll : PreemptionMode::kLend;
        o.shape.reclaim_from_qos =
            easy ? std::vector<std::string>{"normal"} : std::vector<std::string>{"normal", "scavenger"};
        o.victims.grace_time = 60;
        o.victims.requeueable_share = 0.9;
        o.victims.seed = seed;
    }
    // Interruptions of every kind (the Llama 3 shares): with EASY the node
    // Epilog drains a faulty node 5 s after the job's end (the core watches
    // the job, and a drain opens its recovery later); with FIFO the job's
    // script drains it before it exits, and the site requeues 90% of the
    // failed jobs' exit statuses.
    o.kinds =
        parse_failure_kinds(queue == QueueMode::kEasy ? "llama3,epilog=5s" : "llama3,epilog=0,requeue=0.9", 4, o.kinds);
    o.seed = seed;
    return o;
}

// The policy's files, loaded by the plugin's side (the C ABI's planner; null
// when it refused them) and by the simulator's side (its topology).
struct LoadedPolicy {
    nvlb_planner_t* planner = nullptr;
    nvlblock::Topology sim_topo;
};

LoadedPolicy load_policy(const Capi& capi, const PolicyConfig& policy) {
    const std::string dir = "/tmp/nvlblock-sim-parity-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    const std::string path = write_policy_files(policy, dir);
    nvlb_planner_t* planner = nullptr;
    nvlb_error_t err{};
    const nvlb_status_t loaded = capi.load(path.c_str(), nullptr, 0, 0, &planner, &err);
    // The simulator's side words its answers from the same file.
    LoadedPolicy out{nullptr, nvlblock::load_topology(path)};
    std::filesystem::remove_all(dir);
    if (loaded != NVLB_OK)
        ADD_FAILURE() << "nvlb_planner_load: " << err.message;
    else
        out.planner = planner;
    return out;
}

// What the simulator's hooks share with replay(): the C ABI and its planner,
// the policy and the simulator's topology (for messages), and the tally.
// Copied into each hook; everything it names lives in replay().
struct ReplayContext {
    const Capi& capi;
    nvlb_planner_t* planner;
    const PolicyConfig& policy;
    const nvlblock::Topology& sim_topo;
    bool nvlblock_selector; // the topology file has a selector of its own
    Tally& t;
    std::vector<std::uint32_t>& buffer; // the nodes of each placement, reused
};

// One placement decision of the simulator, asked of the plugin as Slurm's
// select asks it; the answers must match.
void compare_placement(const ReplayContext& c, const DecisionRecord& d) {
    std::vector<std::uint8_t> states(d.states.size());
    for (std::size_t i = 0; i < states.size(); ++i)
        states[i] = static_cast<std::uint8_t>(d.states[i]);
    nvlb_request_t req{};
    req.job_id = d.job_id;
    req.min_nodes = d.min_nodes;
    req.max_nodes = d.max_nodes;
    req.req_nodes = d.max_nodes; // as Slurm's select asks: the most it may take
    req.segment = d.segment;
    req.preemptible = d.preemptible;
    req.available = d.available.empty() ? nullptr : d.available.data();
    req.now = d.now;
    req.eligible_since = d.now - d.waited;
    c.buffer.assign(states.size(), 0);
    nvlb_placement_t out{};
    out.nodes = c.buffer.data();
    out.nodes_capacity = c.buffer.size();
    ASSERT_EQ(c.capi.place(c.planner, states.data(), states.size(), &req, &out), NVLB_OK) << out.message;
    const std::vector<nvlblock::NodeIndex> nodes(c.buffer.begin(),
                                                 c.buffer.begin() + static_cast<std::ptrdiff_t>(out.node_count));
    ++c.t.decisions;
    c.t.decisions_with_lent_nodes +=
        std::any_of(d.states.begin(), d.states.end(), [](NodeState st) { return st == NodeState::kLent; });
    c.t.placed += d.result.placed();
    c.t.hypothetical += d.hypothetical;
    c.t.in_place += d.result.recovery_in_place;
    c.t.with_available += !d.available.empty();
    const std::string said = nvlblock::explain(c.sim_topo, d.result);
    const bool same = static_cast<int>(out.reason) == static_cast<int>(d.result.reason) && nodes == d.result.nodes &&
                      out.recovery_in_place == d.result.recovery_in_place && out.spares_used == d.result.spares_used &&
                      out.blocks_if_spares == d.result.blocks_if_spares && out.segment == d.segment &&
                      std::string(out.message) == said.substr(0, sizeof out.message - 1);
    if (!same && ++c.t.mismatches <= 5)
        ADD_FAILURE() << c.policy.name << " job " << d.job_id << " at " << d.now << ": simulator "
                      << nvlblock::reason_name(d.result.reason) << " (" << said << "), plugin "
                      << c.capi.reason_name(out.reason) << " (" << out.message << ")";
}

// Placements, and whether a job just submitted could ever run.
void install_placement_hooks(SimHooks& hooks, const ReplayContext& c) {
    hooks.on_place = [c](const DecisionRecord& d) { compare_placement(c, d); };
    hooks.on_can_ever_run = [c](const CanEverRunRecord& e) {
        ++c.t.submissions;
        c.t.never_runnable += !e.result;
        if (slurm_ever_question(c.capi, c.planner, e.states, e.request, e.now) != e.result && ++c.t.mismatches <= 5)
            ADD_FAILURE() << c.policy.name << " job " << e.request.job_id << " of " << e.request.min_nodes
                          << " nodes at " << e.now << ": could ever run? simulator " << e.result;
    };
}

// Which QOS the topology's selector calls preemptible.
void install_preemptible_hook(SimHooks& hooks, const ReplayContext& c) {
    hooks.on_preemptible = [c](const std::string& qos, bool preemptible) {
        c.t.preemptible_jobs += preemptible;
        // topology/block has no selector of its own (Slurm's preempt/qos stands in).
        if (c.nvlblock_selector && c.capi.is_preemptible(c.planner, qos.c_str(), nullptr) != preemptible &&
            ++c.t.mismatches <= 5)
            ADD_FAILURE() << c.policy.name << " QOS " << qos << ": preemptible? simulator " << preemptible;
    };
}

// Jobs' failures, ends (with what the core made of them) and starts, fed to
// the plugin's ledger as the plugin learns them.
void install_job_hooks(SimHooks& hooks, const ReplayContext& c) {
    hooks.on_job_failed = [c](std::uint32_t id, const std::vector<nvlblock::NodeIndex>& nodes,
                              const std::vector<nvlblock::NodeIndex>& failed, Seconds now) {
        // What prep's epilog reports for it: a batch job ending NODE_FAIL,
        // its failed nodes DOWN (the plugin has no other way in).
        std::vector<nvlb_ended_node_t> ended;
        for (nvlblock::NodeIndex n : nodes)
            ended.push_back({n, std::ranges::count(failed, n) ? unsigned{NVLB_NODE_SIGN_DOWN} : 0u, nullptr});
        const nvlb_job_end_t end{
            id, NVLB_END_BATCH | NVLB_END_REQUEUE_ALLOWED | NVLB_END_NODE_FAIL, now, 0, ended.data(), ended.size()};
        nvlb_end_outcome_t out = NVLB_END_NOTHING;
        EXPECT_EQ(c.capi.job_ended(c.planner, &end, &out), NVLB_OK);
    };
    hooks.on_job_ended = [c](const nvlblock::JobEnd& e, nvlblock::JobEndOutcome outcome) {
        std::vector<nvlb_ended_node_t> nodes;
        for (const nvlblock::EndedNode& n : e.nodes)
            nodes.push_back({n.node, n.signs, n.reason.empty() ? nullptr : n.reason.c_str()});
        const nvlb_job_end_t end{e.job_id, e.facts, e.ended_at, e.started_at, nodes.data(), nodes.size()};
        nvlb_end_outcome_t out = NVLB_END_NOTHING;
        EXPECT_EQ(c.capi.job_ended(c.planner, &end, &out), NVLB_OK);
        ++c.t.job_ends;
        c.t.ends_opened += outcome == nvlblock::JobEndOutcome::kOpened;
        c.t.ends_watched += outcome == nvlblock::JobEndOutcome::kWatching;
        if (static_cast<int>(out) != static_cast<int>(outcome) && ++c.t.mismatches <= 5)
            ADD_FAILURE() << c.policy.name << " job " << e.job_id << " ended at " << e.ended_at << ": simulator "
                          << static_cast<int>(outcome) << ", plugin " << static_cast<int>(out);
    };
    hooks.on_job_started = [c](std::uint32_t id, const std::vector<nvlblock::NodeIndex>& nodes, Seconds now) {
        EXPECT_EQ(c.capi.job_started(c.planner, id, nodes.data(), nodes.size(), now), NVLB_OK);
    };
}

// One reclaim plan the simulator asked for (also when it found none), asked
// of the plugin; the jobs chosen, the nodes and the run time lost must match.
void compare_reclaim_plan(const ReplayContext& c, const ReclaimRecord& r) {
    std::vector<std::uint8_t> states(r.states.size());
    for (std::size_t i = 0; i < states.size(); ++i)
        states[i] = static_cast<std::uint8_t>(r.states[i]);
    std::vector<nvlb_running_job_t> running;
    for (const auto& j : r.running)
        running.push_back(running_job_of(j));
    nvlb_request_t req{};
    req.job_id = r.request.job_id;
    req.min_nodes = r.request.min_nodes;
    req.max_nodes = r.request.max_nodes;
    req.req_nodes = r.request.max_nodes;
    req.segment = r.request.segment;
    req.preemptible = r.request.preemptible;
    req.now = r.now;
    const nvlb_reclaimer_t who = reclaimer_of(r.for_job);
    std::vector<std::uint32_t> jobs(running.size() + 1);
    std::vector<std::uint8_t> actions(running.size() + 1);
    std::vector<std::uint32_t> blocks(c.capi.block_count(c.planner));
    nvlb_reclaim_t out{};
    out.jobs = jobs.data();
    out.actions = actions.data();
    out.jobs_capacity = jobs.size();
    out.blocks = blocks.data();
    out.blocks_capacity = blocks.size();
    ASSERT_EQ(
        c.capi.plan_reclaim(c.planner, states.data(), states.size(), &req, &who, running.data(), running.size(), &out),
        NVLB_OK);
    ++c.t.reclaim_plans;
    const std::vector<std::uint32_t> chosen(jobs.begin(), jobs.begin() + static_cast<std::ptrdiff_t>(out.job_count));
    std::vector<std::uint32_t> want;
    if (r.result)
        for (const nvlblock::ReclaimVictim& v : r.result->victims)
            want.push_back(v.job_id);
    if (chosen != want ||
        (r.result && (out.nodes != r.result->nodes || out.lost_node_seconds != r.result->lost_node_seconds)))
        if (++c.t.mismatches <= 5)
            ADD_FAILURE() << c.policy.name << " reclaim for job " << req.job_id << " at " << r.now << ": simulator "
                          << want.size() << " jobs, plugin " << chosen.size();
}

// A reclaim the simulator started, told to the plugin's ledger with each
// victim's action.
void tell_reclaim_started(const ReplayContext& c, std::uint32_t id, const nvlblock::Reclaim& plan,
                          const nvlblock::Reclaimer& for_job, Seconds released_by, Seconds now) {
    std::vector<std::uint32_t> jobs;
    std::vector<std::uint8_t> actions;
    for (const nvlblock::ReclaimVictim& v : plan.victims) {
        jobs.push_back(v.job_id);
        actions.push_back(v.how == nvlblock::VictimStatus::kPreempt ? NVLB_RECLAIM_PREEMPT
                          : v.at_once                               ? NVLB_RECLAIM_REQUEUE_NOW
                                                                    : NVLB_RECLAIM_REQUEUE);
        ++(v.how == nvlblock::VictimStatus::kPreempt ? c.t.victims_preempted : c.t.victims_requeued);
    }
    nvlb_reclaim_t r{};
    r.jobs = jobs.data();
    r.actions = actions.data();
    r.jobs_capacity = r.job_count = jobs.size();
    r.nodes = plan.nodes;
    r.lost_node_seconds = plan.lost_node_seconds;
    r.budget_node_seconds = plan.budget_node_seconds;
    const nvlb_reclaimer_t who = reclaimer_of(for_job);
    ++c.t.reclaims;
    EXPECT_EQ(c.capi.reclaim_started(c.planner, id, &who, &r, released_by, now), NVLB_OK);
}

// Reclaims of spares from running work: the plans, and those started.
void install_reclaim_hooks(SimHooks& hooks, const ReplayContext& c) {
    hooks.on_reclaim = [c](const ReclaimRecord& r) { compare_reclaim_plan(c, r); };
    hooks.on_reclaim_started = [c](std::uint32_t id, const nvlblock::Reclaim& plan, const nvlblock::Reclaimer& for_job,
                                   Seconds released_by,
                                   Seconds now) { tell_reclaim_started(c, id, plan, for_job, released_by, now); };
}

// The ledger's clock, advanced at the same moments; the jobs that fell back
// must match.
void install_advance_hook(SimHooks& hooks, const ReplayContext& c) {
    hooks.on_advance = [c](const AdvanceRecord& a) {
        std::vector<std::uint8_t> states(a.states.size());
        for (std::size_t i = 0; i < states.size(); ++i)
            states[i] = static_cast<std::uint8_t>(a.states[i]);
        std::size_t fell_back = 0;
        EXPECT_EQ(c.capi.advance(c.planner, states.data(), states.size(), a.now, &fell_back), NVLB_OK);
        ++c.t.advances;
        c.t.fallbacks += fell_back;
        if (fell_back != a.fell_back && ++c.t.mismatches <= 5)
            ADD_FAILURE() << c.policy.name << " advance at " << a.now << ": simulator " << a.fell_back
                          << " fell back, plugin " << fell_back;
    };
}

// Runs the simulation with the hooks installed, then counts the in-place
// restarts and the recoveries opened after a job's end on both sides.
void run_simulation(const SimOptions& o, const PolicyConfig& policy, const SimHooks& hooks, std::uint64_t seed,
                    const ReplayContext& c) {
    SyntheticSpec spec = parse_synthetic("load=1.1,small_load=0.12,mean_hours=2,small_mean_hours=0.5,max_slices=3");
    resolve_synthetic(spec, o.shape.racks, o.horizon, NVLBLOCK_SOURCE_DIR);
    FailureSource failures =
        FailureSource::model(parse_failure_model("mtbi=150h,mttr=6h,rack_mtbf=1500h,rack_mttr=4h", 4), o.shape.racks,
                             o.shape.nodes_per_rack, seed);
    failures.set_kinds(o.kinds, seed);
    Simulator sim(o, policy, std::make_unique<SyntheticWorkload>(spec, o.shape.nodes(), seed), std::move(failures),
                  hooks);
    const PolicyResult r = sim.run();
    // One definition of "in place": the simulator's metric, its own ledger
    // and the plugin's ledger count the same restarts.
    c.t.sim_in_place = r.multi_node_in_place;
    c.t.sim_ledger_in_place = r.ledger_in_place;
    c.t.sim_after_end = r.ledger_after_end;
    std::vector<std::uint8_t> end_states;
    for (NodeState st : sim.world().cluster().states())
        end_states.push_back(static_cast<std::uint8_t>(st));
    if (char* json = c.capi.report(c.planner, end_states.data(), end_states.size(), 0, NVLB_REPORT_JSON)) {
        c.t.capi_in_place = json_counter(json, "in_place");
        c.t.capi_after_end = json_counter(json, "after_end");
        c.capi.free_text(json);
    }
}

Tally replay(const Capi& capi, PolicyKind kind, QueueMode queue, std::uint64_t seed) {
    const SimOptions o = replay_options(kind, queue, seed);
    const PolicyConfig policy = make_policy(kind, o.shape, o.preemption);
    const LoadedPolicy loaded = load_policy(capi, policy);
    if (!loaded.planner)
        return {};
    nvlb_planner_t* planner = loaded.planner;
    capi.set_requeue_delay(planner, o.requeue_delay);
    const bool nvlblock_selector = policy.topology_format == nvlblock::SourceFormat::kYaml;

    Tally t;
    std::vector<std::uint32_t> buffer;
    const ReplayContext c{capi, planner, policy, loaded.sim_topo, nvlblock_selector, t, buffer};
    SimHooks hooks;
    install_placement_hooks(hooks, c);
    install_reclaim_hooks(hooks, c);
    install_advance_hook(hooks, c);
    install_preemptible_hook(hooks, c);
    install_job_hooks(hooks, c);
    run_simulation(o, policy, hooks, seed, c);
    capi.free_planner(planner);
    return t;
}

class PluginParity : public ::testing::TestWithParam<PolicyKind> {};

TEST_P(PluginParity, EveryDecisionMatchesTheCAbi) {
    static const Capi capi;
    ASSERT_TRUE(capi.ok()) << "cannot load " << NVLBLOCK_LIBRARY << ": " << dlerror();
    std::size_t fallbacks = 0;
    for (QueueMode q : {QueueMode::kEasy, QueueMode::kFifo}) {
        const Tally t = replay(capi, GetParam(), q, 21);
        EXPECT_EQ(t.mismatches, 0u);
        EXPECT_GT(t.decisions, 500u);
        EXPECT_GT(t.placed, 100u);
        EXPECT_GT(t.decisions, t.placed); // refusals are compared too
        if (q == QueueMode::kEasy) {
            EXPECT_GT(t.hypothetical, 0u);
        }
        if (make_policy(GetParam(), ClusterShape{}, PreemptionMode::kLend).recovery) {
            EXPECT_GT(t.in_place, 0u);
        }
        if (GetParam() == PolicyKind::kNvlblockLend) {
            EXPECT_GT(t.with_available, 0u); // preemption offers nodes of preemptible jobs
        }
        if (GetParam() == PolicyKind::kRecommended) {
            EXPECT_GT(t.reclaims, 0u); // spares reclaimed from running work
            EXPECT_GT(t.reclaim_plans, t.reclaims);
            EXPECT_GT(q == QueueMode::kEasy ? t.victims_preempted : t.victims_requeued, 0u);
        }
        EXPECT_GT(t.submissions, 100u);
        EXPECT_GT(t.preemptible_jobs, 0u);
        EXPECT_GT(t.decisions_with_lent_nodes, 0u); // preemptible work runs on LENT nodes, lending or not
        if (make_policy(GetParam(), ClusterShape{}, PreemptionMode::kLend).recovery) {
            EXPECT_GT(t.advances, 0u);
            EXPECT_EQ(t.sim_in_place, t.sim_ledger_in_place);
            EXPECT_EQ(t.sim_ledger_in_place, t.capi_in_place);
            EXPECT_GT(t.capi_in_place, 0u);
            // Faults with the node up reach the core as the plugin's epilog
            // hook reports them: watched when the Epilog drains the node
            // later (EASY), opened at once when the job's script drained it
            // (FIFO); the drains after the end open the same recoveries.
            EXPECT_GT(t.job_ends, 0u);
            EXPECT_GT(q == QueueMode::kEasy ? t.ends_watched : t.ends_opened, 0u);
            EXPECT_EQ(t.sim_after_end, t.capi_after_end);
            if (q == QueueMode::kEasy) {
                EXPECT_GT(t.sim_after_end, 0u);
            }
        }
        fallbacks += t.fallbacks;
    }
    if (make_policy(GetParam(), ClusterShape{}, PreemptionMode::kLend).recovery) {
        EXPECT_GT(fallbacks, 0u) << "no job fell back: the clock's rule went untested";
    }
}

// Whether a job could ever run, for every shape up to beyond the cluster:
// the simulator's answer (it rejects such jobs at submission) is what the
// plugin answers Slurm's test-only question with (every node offered).
// Under idle spares a job needing the spares can never run.
TEST_P(PluginParity, CouldEverRunMatchesSlurmsQuestion) {
    static const Capi capi;
    ASSERT_TRUE(capi.ok());
    SimOptions o;
    o.shape.racks = 6;
    const PolicyConfig policy = make_policy(GetParam(), o.shape, PreemptionMode::kLend);
    const std::string dir = "/tmp/nvlblock-sim-ever-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    const std::string path = write_policy_files(policy, dir);
    nvlb_planner_t* planner = nullptr;
    nvlb_error_t err{};
    ASSERT_EQ(capi.load(path.c_str(), nullptr, 0, 0, &planner, &err), NVLB_OK) << err.message;
    std::filesystem::remove_all(dir);
    const World world(o, policy);
    std::size_t yes = 0, no = 0;
    for (std::uint32_t n = 1; n <= o.shape.nodes() + 1; ++n)
        for (std::uint32_t segment : {0u, 4u, 16u})
            for (bool preemptible : {false, true}) {
                if (segment && n % segment)
                    continue;
                nvlblock::Request r;
                r.job_id = n;
                r.min_nodes = r.max_nodes = n;
                r.segment = segment;
                r.preemptible = preemptible;
                const bool sim = world.planner().can_ever_run(r);
                const std::vector<NodeState> idle(world.planner().topology().node_count(), NodeState::kFree);
                EXPECT_EQ(slurm_ever_question(capi, planner, idle, r, 0), sim) << n << " nodes, segment " << segment;
                (sim ? yes : no)++;
            }
    EXPECT_GT(yes, 0u);
    EXPECT_GT(no, 0u);
    capi.free_planner(planner);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PluginParity,
                         ::testing::Values(PolicyKind::kFullRack, PolicyKind::kBlock, PolicyKind::kNvlblock,
                                           PolicyKind::kNvlblockLend, PolicyKind::kRecommended,
                                           PolicyKind::kBlockExpedite, PolicyKind::kNvrx),
                         [](const auto& info) {
                             std::string n = policy_name(info.param);
                             for (char& c : n)
                                 if (c == '-' || c == '+')
                                     c = '_';
                             return n;
                         });

} // namespace
} // namespace nvlblock::sim
