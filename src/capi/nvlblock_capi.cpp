// SPDX-License-Identifier: GPL-2.0-or-later
//
// The C ABI over the core. Every entry point catches every exception and
// turns it into a status code and a message: an exception escaping into
// slurmctld would abort the controller.
#include "nvlblock/nvlblock.h"

#include "core/planner.hpp"
#include "core/slurm_node_state.hpp"
#include "core/slurm_request.hpp"
#include "placement/segments.hpp"
#include "readers/load_topology.hpp"
#include "recovery/rules.hpp"
#include "state/atomic_file.hpp"
#include "writers/explain.hpp"
#include "writers/status_report.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>

#ifndef NVLBLOCK_VERSION
#define NVLBLOCK_VERSION "0.0.0"
#endif

struct nvlb_planner {
    explicit nvlb_planner(nvlblock::Topology t) : planner(std::move(t)) {}
    nvlblock::Planner planner;
    mutable std::mutex mutex;
    // Signalled (under mutex) when the ledger may have changed, or to wake a waiter.
    std::condition_variable changed;
    std::uint64_t wakes = 0;
    std::vector<nvlblock::NodeState> states; // reused between calls
    // Pending reasons by job id: sized by the jobs it holds.
    std::mutex reasons_mutex;
    std::map<std::uint32_t, std::string> reasons;
};

// The lock of a call that may change the ledger: a thread waiting in
// nvlb_state_wait() is woken when it did.
class ChangingLock {
  public:
    explicit ChangingLock(nvlb_planner_t* p) : p_(p), lock_(p->mutex), before_(p->planner.ledger().version()) {}
    ~ChangingLock() {
        if (p_->planner.ledger().version() != before_)
            p_->changed.notify_all();
    }
    ChangingLock(const ChangingLock&) = delete;
    ChangingLock& operator=(const ChangingLock&) = delete;

  private:
    nvlb_planner_t* p_;
    std::lock_guard<std::mutex> lock_;
    std::uint64_t before_;
};

struct nvlb_report_data {
    nvlblock::ClusterReport report;
    std::vector<std::string> block_lines, group_lines;
    std::string summary, recoveries;
};
// The function nvlb_report_data() hides the type's plain name.
using ReportData = struct nvlb_report_data;

namespace {

using namespace nvlblock;

void copy_str(char* dst, std::size_t cap, const std::string& src) {
    if (!dst || cap == 0)
        return;
    const std::size_t n = std::min(cap - 1, src.size());
    std::memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

nvlb_status_t set_error(nvlb_error_t* err, nvlb_status_t status, const std::string& file, unsigned line,
                        const std::string& message, unsigned count = 1) {
    if (err) {
        std::memset(err, 0, sizeof *err);
        err->status = status;
        copy_str(err->file, sizeof err->file, file);
        err->line = line;
        err->problem_count = count;
        copy_str(err->message, sizeof err->message, message);
    }
    return status;
}

nvlb_status_t from_config_error(nvlb_error_t* err, const ConfigError& e) {
    return set_error(err, NVLB_E_CONFIG, e.first().where.file, e.first().where.line, e.what(),
                     static_cast<unsigned>(e.problems().size()));
}

// Runs fn, mapping exceptions to status codes.
template <typename Fn>
nvlb_status_t guarded(nvlb_error_t* err, Fn&& fn) {
    try {
        return fn();
    } catch (const ConfigError& e) {
        return from_config_error(err, e);
    } catch (const std::system_error& e) {
        return set_error(err, NVLB_E_IO, "", 0, e.what());
    } catch (const std::bad_alloc&) {
        return set_error(err, NVLB_E_NOMEM, "", 0, "out of memory");
    } catch (const std::exception& e) {
        return set_error(err, NVLB_E_INTERNAL, "", 0, std::string("internal error: ") + e.what());
    } catch (...) {
        return set_error(err, NVLB_E_INTERNAL, "", 0, "internal error");
    }
}

// Exports that answer with a value or return nothing: whatever the core
// throws (an allocation, a mutex or condition variable that fails) ends
// here as `fallback`, never unwinding into slurmctld's C frames. Those that
// return a status report errors through guarded().
template <typename T, typename Fn>
T nothrow_or(T fallback, Fn&& fn) noexcept {
    try {
        return fn();
    } catch (...) {
        return fallback;
    }
}

template <typename Fn>
void nothrow_do(Fn&& fn) noexcept {
    try {
        fn();
    } catch (...) {
    }
}

std::optional<std::vector<std::string>> universe_of(const char* const* names, std::size_t count) {
    if (!names)
        return std::nullopt;
    std::vector<std::string> u;
    u.reserve(count);
    for (std::size_t i = 0; i < count; ++i)
        u.emplace_back(names[i] ? names[i] : "");
    return u;
}

// SLURM_VERSION_NUMBER (major << 16 | minor << 8 | micro) as the core's
// release, major * 100 + minor; 0 is the default, 24.11.
int release_of(std::uint32_t v) {
    if (v == 0)
        return kDefaultSlurmRelease;
    return static_cast<int>((v >> 16) & 0xff) * 100 + static_cast<int>((v >> 8) & 0xff);
}

Topology load(const char* path, const char* const* names, std::size_t count, std::uint32_t slurm_version) {
    auto u = universe_of(names, count);
    return load_topology(path, u ? &*u : nullptr, release_of(slurm_version));
}

NodeState state_of(std::uint8_t raw) {
    return raw <= NVLB_NODE_DRAINED ? static_cast<NodeState>(raw) : NodeState::kDown;
}

// The caller's states as the core's, unknown values as down. Runs on every
// decision over every node: the bytes are copied as they are (NodeState has
// the C ABI's values), then checked eight at a time; only a word holding a
// value that is not a node state is rewritten byte by byte.
std::span<const NodeState> states_of(nvlb_planner* p, const std::uint8_t* raw, std::size_t n) {
    static_assert(static_cast<int>(NodeState::kFree) == NVLB_NODE_FREE &&
                  static_cast<int>(NodeState::kDrained) == NVLB_NODE_DRAINED && NVLB_NODE_DRAINED == 4);
    constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL, kHigh = 0x8080808080808080ULL;
    constexpr std::uint64_t kFive = 0x7b7b7b7b7b7b7b7bULL; // bit 7 set in a byte from 5 up
    p->states.resize(n);
    std::memcpy(p->states.data(), raw, n);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, raw + i, sizeof w);
        if (((((w & kLow7) + kFive) | w) & kHigh) == 0)
            continue;
        for (std::size_t k = i; k < i + 8; ++k)
            p->states[k] = state_of(raw[k]);
    }
    for (; i < n; ++i)
        p->states[i] = state_of(raw[i]);
    return p->states;
}

} // namespace

extern "C" {

const char* nvlb_status_name(nvlb_status_t s) {
    switch (s) {
    case NVLB_OK:
        return "ok";
    case NVLB_E_INVALID:
        return "invalid argument";
    case NVLB_E_CONFIG:
        return "configuration error";
    case NVLB_E_IO:
        return "I/O error";
    case NVLB_E_STATE:
        return "corrupt state";
    case NVLB_E_NOMEM:
        return "out of memory";
    case NVLB_E_INTERNAL:
        return "internal error";
    }
    return "unknown status";
}

const char* nvlb_version(void) {
    return NVLBLOCK_VERSION;
}

nvlb_status_t nvlb_planner_load(const char* path, const char* const* node_names, size_t node_count,
                                uint32_t slurm_version_number, nvlb_planner_t** out, nvlb_error_t* err) {
    if (!path || !out)
        return set_error(err, NVLB_E_INVALID, "", 0, "nvlb_planner_load: path and out are required");
    *out = nullptr;
    return guarded(err, [&] {
        *out = new nvlb_planner(load(path, node_names, node_count, slurm_version_number));
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_planner_reload(nvlb_planner_t* p, const char* path, const char* const* node_names, size_t node_count,
                                  uint32_t slurm_version_number, nvlb_error_t* err) {
    if (!p || !path)
        return set_error(err, NVLB_E_INVALID, "", 0, "nvlb_planner_reload: planner and path are required");
    return guarded(err, [&] {
        Topology t = load(path, node_names, node_count, slurm_version_number); // may throw: the old topology stays
        ChangingLock lock(p);
        p->planner.replace_topology(std::move(t));
        return NVLB_OK;
    });
}

void nvlb_planner_free(nvlb_planner_t* p) {
    delete p;
}

namespace {
std::atomic<nvlb_planner_t*> g_process_planner{nullptr};
}

void nvlb_process_planner_set(nvlb_planner_t* p) {
    delete g_process_planner.exchange(p);
}

nvlb_planner_t* nvlb_process_planner(void) {
    return g_process_planner.load();
}

nvlb_status_t nvlb_check_file(const char* path, const char* const* node_names, size_t node_count,
                              uint32_t slurm_version_number, void (*warn)(void*, const char*), void* ctx,
                              nvlb_error_t* err) {
    if (!path)
        return set_error(err, NVLB_E_INVALID, "", 0, "nvlb_check_file: path is required");
    return guarded(err, [&] {
        Topology t = load(path, node_names, node_count, slurm_version_number);
        if (warn)
            for (const auto& w : t.warnings())
                warn(ctx, w.str().c_str());
        return NVLB_OK;
    });
}

size_t nvlb_node_count(const nvlb_planner_t* p) {
    if (!p)
        return 0;
    return nothrow_or<size_t>(0, [&]() -> size_t {
        std::lock_guard lock(p->mutex);
        return p->planner.topology().node_count();
    });
}

size_t nvlb_block_count(const nvlb_planner_t* p) {
    if (!p)
        return 0;
    return nothrow_or<size_t>(0, [&]() -> size_t {
        std::lock_guard lock(p->mutex);
        return p->planner.topology().block_count();
    });
}

int32_t nvlb_block_of(const nvlb_planner_t* p, uint32_t node) {
    if (!p)
        return -1;
    return nothrow_or<int32_t>(-1, [&]() -> int32_t {
        std::lock_guard lock(p->mutex);
        const Topology& t = p->planner.topology();
        return node < t.node_count() ? t.block_of(node) : -1;
    });
}

int32_t nvlb_find_block(const nvlb_planner_t* p, const char* name) {
    if (!p || !name)
        return -1;
    return nothrow_or<int32_t>(-1, [&]() -> int32_t {
        std::lock_guard lock(p->mutex);
        auto b = p->planner.topology().find_block(name);
        return b ? *b : -1;
    });
}

nvlb_status_t nvlb_block_info(const nvlb_planner_t* p, uint32_t block, nvlb_block_info_t* out) {
    if (!p || !out)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&]() -> nvlb_status_t {
        std::lock_guard lock(p->mutex);
        const Topology& t = p->planner.topology();
        if (block >= t.block_count())
            return NVLB_E_INVALID;
        const Block& b = t.block(static_cast<BlockIndex>(block));
        out->name = b.name.c_str();
        out->nodes = b.nodes_expr.c_str();
        out->size = static_cast<uint32_t>(b.size());
        out->slice = static_cast<uint32_t>(b.settings.slice);
        out->spares = static_cast<uint32_t>(b.settings.spares);
        out->lending = b.settings.lending;
        out->reclaim = b.settings.reserve == SpareReserve::kReclaim;
        return NVLB_OK;
    });
}

size_t nvlb_block_nodes(const nvlb_planner_t* p, uint32_t block, uint32_t* out, size_t cap) {
    if (!p)
        return 0;
    return nothrow_or<size_t>(0, [&]() -> size_t {
        std::lock_guard lock(p->mutex);
        const Topology& t = p->planner.topology();
        if (block >= t.block_count())
            return 0;
        const Block& b = t.block(static_cast<BlockIndex>(block));
        for (std::size_t i = 0; out && i < b.nodes.size() && i < cap; ++i)
            out[i] = b.nodes[i];
        return b.nodes.size();
    });
}

nvlb_status_t nvlb_policy_info(const nvlb_planner_t* p, nvlb_policy_info_t* out) {
    if (!p || !out)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&]() -> nvlb_status_t {
        std::lock_guard lock(p->mutex);
        const Topology& t = p->planner.topology();
        const ClusterPolicy& pol = t.policy();
        out->recovery_wait_s = pol.recovery.wait_seconds;
        out->recovery_reclaim_budget_s = pol.recovery.reclaim_budget_seconds;
        out->block_fault_fraction = pol.block_fault_fraction;
        out->status_interval_s = pol.status.interval_seconds;
        out->from_topology_conf = t.format() == SourceFormat::kTopologyConf;
        const std::pair<char*, const std::string*> paths[] = {{out->status_json, &pol.status.json_path},
                                                              {out->status_prometheus, &pol.status.prometheus_path},
                                                              {out->source, &t.source()},
                                                              {out->included_conf, &t.included_as_written()},
                                                              {out->included_conf_path, &t.included_path()}};
        bool fits = true;
        for (const auto& [to, from] : paths)
            fits = fits && from->size() < NVLB_PATH_MAX;
        for (const auto& [to, from] : paths)
            copy_str(to, NVLB_PATH_MAX, fits ? *from : std::string());
        return fits ? NVLB_OK : NVLB_E_INVALID;
    });
}

bool nvlb_is_preemptible(const nvlb_planner_t* p, const char* qos, const char* partition) {
    if (!p)
        return false;
    return nothrow_or<bool>(false, [&]() -> bool {
        std::lock_guard lock(p->mutex);
        return p->planner.topology().policy().preemptible.matches(qos ? qos : "", partition ? partition : "");
    });
}

void nvlb_set_requeue_delay(nvlb_planner_t* p, int64_t seconds) {
    if (!p)
        return;
    nothrow_do([&] {
        std::lock_guard lock(p->mutex);
        p->planner.set_slurm_requeue_delay(seconds);
    });
}

const char* nvlb_reason_name(nvlb_reason_t r) {
    if (r < NVLB_PLACED || r > NVLB_NO_GROUP_FITS)
        return "unknown";
    return reason_name(static_cast<Reason>(r));
}

namespace {

// Slurm's facts as the C ABI carries them; core/slurm_request.hpp shapes them.
Request request_of(const nvlb_planner_t& p, const nvlb_request_t& request, size_t node_count,
                   std::vector<std::uint8_t>& candidates) {
    SlurmJobFacts f;
    f.job_id = request.job_id;
    f.min_nodes = request.min_nodes;
    f.max_nodes = request.max_nodes;
    f.req_nodes = request.req_nodes;
    f.segment_size = request.segment;
    f.whole_topology = request.exclusive_topo;
    f.preemptible = request.preemptible;
    if (request.available)
        f.available = std::span<const std::uint8_t>(request.available, node_count);
    if (request.required)
        f.nodelist.assign(request.required, request.required + request.required_count);
    f.now = request.now;
    f.eligible_since = request.eligible_since;
    return request_from_slurm(f, p.planner.topology().policy().slurm_release, node_count, candidates);
}

} // namespace

nvlb_status_t nvlb_place(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count,
                         const nvlb_request_t* request, nvlb_placement_t* out) {
    if (!p || !node_states || !request || !out)
        return NVLB_E_INVALID;
    out->node_count = 0;
    out->spares_used = 0;
    out->recovery_in_place = false;
    out->blocks_if_spares = 0;
    out->message[0] = '\0';
    out->topology_unavailable = false;
    out->group[0] = '\0';
    out->segment = 0;
    return guarded(nullptr, [&] {
        std::lock_guard lock(p->mutex);
        if (node_count != p->planner.topology().node_count()) {
            copy_str(out->message, sizeof out->message, "node count does not match the topology");
            return NVLB_E_INVALID;
        }
        std::vector<std::uint8_t> candidates;
        const Request asked = request_of(*p, *request, node_count, candidates);
        out->segment = asked.segment;
        Placement pl = p->planner.place(states_of(p, node_states, node_count), asked, request->now);
        out->reason = static_cast<nvlb_reason_t>(pl.reason);
        out->spares_used = pl.spares_used;
        out->recovery_in_place = pl.recovery_in_place;
        out->blocks_if_spares = pl.blocks_if_spares;
        copy_str(out->message, sizeof out->message, explain(p->planner.topology(), pl));
        out->topology_unavailable = pl.topology_unavailable;
        copy_str(out->group, sizeof out->group, pl.group);
        if (pl.nodes.size() > out->nodes_capacity || (!out->nodes && !pl.nodes.empty())) {
            out->reason = NVLB_INVALID_REQUEST;
            copy_str(out->message, sizeof out->message, "placement buffer too small");
            return NVLB_E_INVALID;
        }
        std::copy(pl.nodes.begin(), pl.nodes.end(), out->nodes);
        out->node_count = pl.nodes.size();
        return NVLB_OK;
    });
}

namespace {

std::string text_of(const char* s) {
    return s ? s : "";
}

Reclaimer reclaimer_of(const nvlb_reclaimer_t* r) {
    Reclaimer out;
    if (r) {
        out.user = r->user;
        out.het_job_id = r->het_job_id;
        out.reservation = text_of(r->reservation);
        out.held = r->held;
    }
    return out;
}

PreemptMode preempt_mode_of(std::uint8_t m) {
    switch (m) {
    case NVLB_PREEMPT_REQUEUE:
        return PreemptMode::kRequeue;
    case NVLB_PREEMPT_CANCEL:
        return PreemptMode::kCancel;
    case NVLB_PREEMPT_SUSPEND:
        return PreemptMode::kSuspend;
    default:
        return PreemptMode::kOff;
    }
}

RunningJob running_job_of(const nvlb_running_job_t& r) {
    RunningJob j;
    j.job_id = r.job_id;
    j.nodes.assign(r.nodes, r.nodes + r.node_count);
    j.started = r.started;
    j.waited = r.waited;
    j.user = r.user;
    j.het_job_id = r.het_job_id;
    j.qos = text_of(r.qos);
    j.partition = text_of(r.partition);
    j.account = text_of(r.account);
    j.reservation = text_of(r.reservation);
    j.requeueable = r.requeueable;
    j.exempt = r.exempt;
    j.preemptible = r.preemptible;
    j.slurm_may_preempt = r.slurm_may_preempt;
    j.being_preempted = r.being_preempted;
    j.preempt_mode = preempt_mode_of(r.preempt_mode);
    return j;
}

// A reclaim question's answer before it is asked: no job, no message.
void clear_reclaim_answer(nvlb_reclaim_t& out) {
    out.job_count = 0;
    out.nodes = 0;
    out.lost_node_seconds = 0;
    out.budget_node_seconds = 0;
    out.blocks[0] = '\0';
    out.message[0] = '\0';
}

} // namespace

nvlb_status_t nvlb_plan_reclaim(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count,
                                const nvlb_request_t* request, const nvlb_reclaimer_t* for_job,
                                const nvlb_running_job_t* running, size_t running_count, nvlb_reclaim_t* out) {
    if (!p || !node_states || !request || !out || (!running && running_count) ||
        ((!out->jobs || !out->actions) && out->jobs_capacity))
        return NVLB_E_INVALID;
    clear_reclaim_answer(*out);
    return guarded(nullptr, [&] {
        std::lock_guard lock(p->mutex);
        if (node_count != p->planner.topology().node_count())
            return NVLB_E_INVALID;
        std::vector<RunningJob> jobs;
        jobs.reserve(running_count);
        for (size_t i = 0; i < running_count; ++i) {
            if (!running[i].nodes && running[i].node_count)
                return NVLB_E_INVALID;
            jobs.push_back(running_job_of(running[i]));
        }
        std::vector<std::uint8_t> candidates;
        const ReclaimDecision d = p->planner.plan_reclaim(states_of(p, node_states, node_count),
                                                          request_of(*p, *request, node_count, candidates),
                                                          reclaimer_of(for_job), jobs, request->now);
        if (!d.plan) {
            copy_str(out->message, sizeof out->message, describe_reclaim_refusal(request->job_id, d.refusal));
            return NVLB_OK;
        }
        if (d.plan->victims.size() > out->jobs_capacity)
            return NVLB_E_INVALID;
        for (const ReclaimVictim& v : d.plan->victims) {
            out->jobs[out->job_count] = v.job_id;
            out->actions[out->job_count++] = v.how == VictimStatus::kPreempt ? NVLB_RECLAIM_PREEMPT
                                             : v.at_once                     ? NVLB_RECLAIM_REQUEUE_NOW
                                                                             : NVLB_RECLAIM_REQUEUE;
        }
        out->nodes = d.plan->nodes;
        out->lost_node_seconds = d.plan->lost_node_seconds;
        out->budget_node_seconds = d.plan->budget_node_seconds;
        if (const RecoveryRecord* r = p->planner.ledger().find(request->job_id))
            copy_str(out->blocks, sizeof out->blocks,
                     claim_blocks(p->planner.topology(), claim_for(p->planner.topology(), *r, {})));
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_reclaim_ruled_out(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count,
                                     const nvlb_request_t* request, const nvlb_reclaimer_t* for_job,
                                     nvlb_reclaim_t* out) {
    if (!p || !node_states || !request || !out)
        return NVLB_E_INVALID;
    clear_reclaim_answer(*out);
    return guarded(nullptr, [&] {
        std::lock_guard lock(p->mutex);
        if (node_count != p->planner.topology().node_count())
            return NVLB_E_INVALID;
        std::vector<std::uint8_t> candidates;
        const std::optional<ReclaimRefusal> refusal = p->planner.reclaim_ruled_out(
            states_of(p, node_states, node_count), request_of(*p, *request, node_count, candidates),
            reclaimer_of(for_job), request->now);
        if (refusal)
            copy_str(out->message, sizeof out->message, describe_reclaim_refusal(request->job_id, *refusal));
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_reclaim_started(nvlb_planner_t* p, uint32_t job_id, const nvlb_reclaimer_t* for_job,
                                   const nvlb_reclaim_t* plan, int64_t released_by, int64_t now) {
    if (!p || !plan || ((!plan->jobs || !plan->actions) && plan->job_count))
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        Reclaim r;
        for (size_t i = 0; i < plan->job_count; ++i)
            r.victims.push_back(
                {plan->jobs[i],
                 plan->actions[i] == NVLB_RECLAIM_PREEMPT ? VictimStatus::kPreempt : VictimStatus::kRequeue, 0,
                 plan->actions[i] == NVLB_RECLAIM_REQUEUE_NOW});
        r.nodes = plan->nodes;
        r.lost_node_seconds = plan->lost_node_seconds;
        r.budget_node_seconds = plan->budget_node_seconds;
        p->planner.reclaim_started(job_id, r, reclaimer_of(for_job), released_by, now);
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_reclaim_refused(nvlb_planner_t* p, uint32_t job_id, const char* why) {
    if (!p || !why)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        p->planner.reclaim_refused(job_id, why);
        return NVLB_OK;
    });
}

namespace {
constexpr bool same_fact(SlurmNodeFact core, unsigned abi) {
    return static_cast<unsigned>(core) == abi;
}
} // namespace
static_assert(same_fact(kNodeUp, NVLB_NODE_FACT_UP) && same_fact(kNodeAvail, NVLB_NODE_FACT_AVAIL) &&
              same_fact(kNodeIdle, NVLB_NODE_FACT_IDLE) && same_fact(kNodeCompleting, NVLB_NODE_FACT_COMPLETING) &&
              same_fact(kNodeFuture, NVLB_NODE_FACT_FUTURE) &&
              same_fact(kNodePoweredDown, NVLB_NODE_FACT_POWERED_DOWN) &&
              same_fact(kNodeUnregistered, NVLB_NODE_FACT_UNREGISTERED) && same_fact(kNodeLent, NVLB_NODE_FACT_LENT));

uint8_t nvlb_node_state_of(uint32_t facts) {
    return static_cast<uint8_t>(node_state_from_slurm(facts));
}

bool nvlb_is_recovering(const nvlb_planner_t* p, uint32_t job_id) {
    if (!p)
        return false;
    return nothrow_or<bool>(false, [&]() -> bool {
        std::lock_guard lock(p->mutex);
        return p->planner.recovery().recovering(job_id);
    });
}

nvlb_status_t nvlb_advance(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count, int64_t now,
                           size_t* fell_back) {
    if (fell_back)
        *fell_back = 0;
    if (!p || !node_states)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        if (node_count != p->planner.topology().node_count())
            return NVLB_E_INVALID;
        const std::size_t n = p->planner.advance(states_of(p, node_states, node_count), now);
        if (fell_back)
            *fell_back = n;
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_observe_health(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count, int64_t now) {
    if (!p || !node_states)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p); // old node failures are forgotten: saved
        if (node_count != p->planner.topology().node_count())
            return NVLB_E_INVALID;
        p->planner.observe_health(states_of(p, node_states, node_count), now);
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_clear_lemon(nvlb_planner_t* p, const char* node_name, bool* cleared) {
    if (cleared)
        *cleared = false;
    if (!p || !node_name)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        const auto node = p->planner.topology().find_node(node_name);
        if (!node)
            return NVLB_E_INVALID;
        const bool had = p->planner.clear_lemon(*node);
        if (cleared)
            *cleared = had;
        return NVLB_OK;
    });
}

int64_t nvlb_next_deadline(const nvlb_planner_t* p, int64_t now) {
    if (!p)
        return INT64_MAX;
    return nothrow_or<int64_t>(INT64_MAX, [&]() -> int64_t {
        std::lock_guard lock(p->mutex);
        return p->planner.next_deadline(now);
    });
}

size_t nvlb_segments(const nvlb_planner_t* p, const uint32_t* nodes, size_t count, uint32_t segment_size,
                     uint32_t* segment_of) {
    if (!p || (!nodes && count))
        return 0;
    try {
        std::vector<std::vector<NodeIndex>> segs;
        {
            std::lock_guard lock(p->mutex);
            segs = segments_of(p->planner.topology(), {nodes, count}, segment_size);
        }
        if (segment_of) {
            std::map<NodeIndex, std::uint32_t> index;
            for (std::size_t s = 0; s < segs.size(); ++s)
                for (NodeIndex n : segs[s])
                    index[n] = static_cast<std::uint32_t>(s);
            for (std::size_t i = 0; i < count; ++i)
                segment_of[i] = index[nodes[i]];
        }
        return segs.size();
    } catch (...) {
        return 0;
    }
}

void nvlb_reason_note(nvlb_planner_t* p, uint32_t job_id, const char* text) {
    if (!p || !text)
        return;
    try {
        std::lock_guard lock(p->reasons_mutex);
        p->reasons[job_id] = text;
    } catch (...) {
        // out of memory: the reason is not shown again, nothing else changes
    }
}

void nvlb_reason_forget(nvlb_planner_t* p, uint32_t job_id) {
    if (!p)
        return;
    nothrow_do([&] {
        std::lock_guard lock(p->reasons_mutex);
        p->reasons.erase(job_id);
    });
}

void nvlb_reasons_clear(nvlb_planner_t* p) {
    if (!p)
        return;
    nothrow_do([&] {
        std::lock_guard lock(p->reasons_mutex);
        p->reasons.clear();
    });
}

size_t nvlb_reasons_each(nvlb_planner_t* p, bool (*fn)(void*, uint32_t, const char*), void* ctx) {
    if (!p)
        return 0;
    return nothrow_or<size_t>(0, [&]() -> size_t {
        std::lock_guard lock(p->reasons_mutex);
        if (fn)
            for (auto it = p->reasons.begin(); it != p->reasons.end();)
                it = fn(ctx, it->first, it->second.c_str()) ? std::next(it) : p->reasons.erase(it);
        return p->reasons.size();
    });
}

nvlb_status_t nvlb_job_failed(nvlb_planner_t* p, uint32_t job_id, const uint32_t* nodes, size_t node_count,
                              const uint32_t* failed, size_t failed_count, int64_t now) {
    if (!p || (!nodes && node_count) || (!failed && failed_count))
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        p->planner.job_failed(job_id, {nodes, node_count}, {failed, failed_count}, now);
        return NVLB_OK;
    });
}

// The ABI's bits are the core's (job_end.hpp), compared as numbers.
constexpr bool same_bits(unsigned core, unsigned abi) {
    return core == abi;
}
static_assert(same_bits(kEndBatch, NVLB_END_BATCH) && same_bits(kEndRequeueAllowed, NVLB_END_REQUEUE_ALLOWED) &&
              same_bits(kEndPending, NVLB_END_PENDING) && same_bits(kEndNodeFail, NVLB_END_NODE_FAIL) &&
              same_bits(kEndCompleting, NVLB_END_COMPLETING) && same_bits(kEndPreempted, NVLB_END_PREEMPTED) &&
              same_bits(kEndCancelled, NVLB_END_CANCELLED) && same_bits(kEndExitRequeues, NVLB_END_EXIT_REQUEUES) &&
              same_bits(kEndExitHolds, NVLB_END_EXIT_HOLDS));
static_assert(same_bits(kNodeMissing, NVLB_NODE_SIGN_MISSING) && same_bits(kNodeDown, NVLB_NODE_SIGN_DOWN) &&
              same_bits(kNodeNotResponding, NVLB_NODE_SIGN_NOT_RESPONDING) &&
              same_bits(kNodeFailing, NVLB_NODE_SIGN_FAILING) &&
              same_bits(kNodeNamedFailed, NVLB_NODE_SIGN_NAMED_FAILED) && same_bits(kNodeDrain, NVLB_NODE_SIGN_DRAIN));

nvlb_status_t nvlb_job_ended(nvlb_planner_t* p, const nvlb_job_end_t* end, nvlb_end_outcome_t* outcome) {
    if (outcome)
        *outcome = NVLB_END_NOTHING;
    if (!p || !end || (!end->nodes && end->node_count))
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        JobEnd e;
        e.job_id = end->job_id;
        e.facts = end->facts;
        e.ended_at = end->ended_at;
        e.started_at = end->started_at;
        for (std::size_t i = 0; i < end->node_count; ++i)
            e.nodes.push_back(
                {end->nodes[i].node, end->nodes[i].signs, end->nodes[i].reason ? end->nodes[i].reason : ""});
        ChangingLock lock(p);
        const JobEndOutcome o = p->planner.job_ended(e);
        if (outcome)
            *outcome = o == JobEndOutcome::kOpened     ? NVLB_END_OPENED
                       : o == JobEndOutcome::kWatching ? NVLB_END_WATCHING
                                                       : NVLB_END_NOTHING;
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_job_started(nvlb_planner_t* p, uint32_t job_id, const uint32_t* nodes, size_t node_count,
                               int64_t now) {
    if (!p || (!nodes && node_count))
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        p->planner.job_started(job_id, {nodes, node_count}, now);
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_job_gone(nvlb_planner_t* p, uint32_t job_id, int64_t now) {
    if (!p)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        p->planner.job_gone(job_id, now);
        return NVLB_OK;
    });
}

size_t nvlb_pending_jobs(const nvlb_planner_t* p, uint32_t* out, size_t cap) {
    if (!p)
        return 0;
    std::lock_guard lock(p->mutex);
    const auto& records = p->planner.ledger().records();
    const auto& watches = p->planner.recovery().watches();
    std::vector<std::uint32_t> ids;
    try {
        ids.reserve(records.size() + watches.size());
        for (const auto& kv : records)
            ids.push_back(kv.first);
        for (const auto& kv : watches)
            ids.push_back(kv.first);
    } catch (...) {
        return 0; // out of memory: nothing to report this time
    }
    // Each map is in job id order: one merge, each id once.
    std::inplace_merge(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(records.size()), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (out)
        std::copy_n(ids.begin(), std::min(cap, ids.size()), out);
    return ids.size();
}

size_t nvlb_reclaim_candidates(const nvlb_planner_t* p, int64_t now, uint32_t* out, size_t cap) {
    if (!p)
        return 0;
    try {
        std::lock_guard lock(p->mutex);
        const std::vector<std::uint32_t> ids = p->planner.recovery().reclaim_candidates(p->planner.topology(), now);
        if (out)
            std::copy_n(ids.begin(), std::min(cap, ids.size()), out);
        return ids.size();
    } catch (...) {
        return 0; // out of memory: no reclaim this pass
    }
}

void nvlb_note_reclaim_pass(nvlb_planner_t* p, int64_t held_us, int64_t cpu_us, size_t recoveries) {
    if (!p)
        return;
    // Not a change a waiter wakes for (no version bump): a report figure.
    nothrow_do([&] {
        std::lock_guard lock(p->mutex);
        p->planner.note_reclaim_pass(held_us, cpu_us, recoveries);
    });
}

size_t nvlb_drain_log(nvlb_planner_t* p, void (*fn)(void*, const char*), void* ctx) {
    if (!p)
        return 0;
    return nothrow_or<size_t>(0, [&]() -> size_t {
        std::vector<std::string> lines;
        {
            std::lock_guard lock(p->mutex);
            lines = p->planner.take_log();
        }
        if (fn)
            for (const auto& l : lines)
                fn(ctx, l.c_str());
        return lines.size();
    });
}

nvlb_status_t nvlb_state_save(nvlb_planner_t* p, const char* path, nvlb_error_t* err) {
    if (!p || !path)
        return set_error(err, NVLB_E_INVALID, "", 0, "nvlb_state_save: planner and path are required");
    return guarded(err, [&] {
        std::string text;
        {
            std::lock_guard lock(p->mutex);
            text = p->planner.save_state();
        }
        write_file_atomically(path, text, kPrivateFileMode);
        return NVLB_OK;
    });
}

uint64_t nvlb_state_version(const nvlb_planner_t* p) {
    if (!p)
        return 0;
    return nothrow_or<uint64_t>(0, [&]() -> uint64_t {
        std::lock_guard lock(p->mutex);
        return p->planner.ledger().version();
    });
}

bool nvlb_state_wait(nvlb_planner_t* p, uint64_t seen, int64_t until_ms) {
    if (!p)
        return false;
    return nothrow_or<bool>(false, [&]() -> bool {
        const auto until = std::chrono::system_clock::time_point(std::chrono::milliseconds(until_ms));
        std::unique_lock lock(p->mutex);
        const std::uint64_t wakes = p->wakes;
        p->changed.wait_until(lock, until, [&] { return p->planner.ledger().version() != seen || p->wakes != wakes; });
        return p->planner.ledger().version() != seen;
    });
}

void nvlb_state_wake(nvlb_planner_t* p) {
    if (!p)
        return;
    nothrow_do([&] {
        std::lock_guard lock(p->mutex);
        ++p->wakes;
        p->changed.notify_all();
    });
}

nvlb_status_t nvlb_state_load(nvlb_planner_t* p, const char* path, nvlb_error_t* err) {
    if (!p || !path)
        return set_error(err, NVLB_E_INVALID, "", 0, "nvlb_state_load: planner and path are required");
    nvlb_status_t rc = guarded(err, [&] {
        auto text = read_file_if_exists(path);
        if (!text)
            return NVLB_OK;
        ChangingLock lock(p);
        p->planner.load_state(*text, path);
        return NVLB_OK;
    });
    if (rc == NVLB_E_CONFIG) { // a malformed state file, not a configuration problem
        rc = NVLB_E_STATE;
        if (err)
            err->status = rc;
    }
    return rc;
}

nvlb_status_t nvlb_write_file(const char* path, const char* text, bool durable, nvlb_error_t* err) {
    if (!path || !text)
        return set_error(err, NVLB_E_INVALID, "", 0, "nvlb_write_file: path and text are required");
    return guarded(err, [&] {
        write_file_atomically(path, text, kReportFileMode, durable);
        return NVLB_OK;
    });
}

nvlb_report_data_t* nvlb_report_data(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count, int64_t now) {
    if (!p || !node_states)
        return nullptr;
    try {
        auto data = std::make_unique<ReportData>();
        {
            std::lock_guard lock(p->mutex);
            if (node_count != p->planner.topology().node_count())
                return nullptr;
            data->report = make_report(p->planner, states_of(p, node_states, node_count), now);
        }
        for (const auto& b : data->report.blocks)
            data->block_lines.push_back(block_line(b));
        for (const auto& g : data->report.groups)
            data->group_lines.push_back(group_line(g));
        data->summary = summary_line(data->report);
        for (const auto& line : recovery_lines(data->report))
            data->recoveries += (data->recoveries.empty() ? "" : "\n") + line;
        return data.release();
    } catch (...) {
        return nullptr;
    }
}

size_t nvlb_report_block_count(const nvlb_report_data_t* d) {
    return d ? d->report.blocks.size() : 0;
}

nvlb_status_t nvlb_report_block(const nvlb_report_data_t* d, size_t i, nvlb_block_report_t* out) {
    if (!d || !out || i >= d->report.blocks.size())
        return NVLB_E_INVALID;
    const BlockReport& b = d->report.blocks[i];
    out->name = b.name.c_str();
    out->nodes = b.nodes.c_str();
    out->failed_nodes = b.failed_nodes.c_str();
    out->line = d->block_lines[i].c_str();
    out->size = static_cast<uint32_t>(b.size);
    out->slice = static_cast<uint32_t>(b.slice);
    out->spares = static_cast<uint32_t>(b.spares);
    out->lending = b.lending;
    out->reclaim = b.reclaim;
    out->health = static_cast<nvlb_health_t>(b.health);
    out->healthy = static_cast<uint32_t>(b.healthy);
    out->failed = static_cast<uint32_t>(b.failed);
    out->busy = static_cast<uint32_t>(b.busy);
    out->lent = static_cast<uint32_t>(b.lent);
    out->free = static_cast<uint32_t>(b.free);
    out->spares_free = static_cast<uint32_t>(b.spares_free);
    out->spares_used = static_cast<uint32_t>(b.spares_used);
    out->spares_lent = static_cast<uint32_t>(b.spares_lent);
    out->held = static_cast<uint32_t>(b.held);
    out->stranded = static_cast<uint32_t>(b.stranded);
    return NVLB_OK;
}

size_t nvlb_report_group_count(const nvlb_report_data_t* d) {
    return d ? d->report.groups.size() : 0;
}

nvlb_status_t nvlb_report_group(const nvlb_report_data_t* d, size_t i, nvlb_group_report_t* out) {
    if (!d || !out || i >= d->report.groups.size())
        return NVLB_E_INVALID;
    out->name = d->report.groups[i].name.c_str();
    out->level = d->report.groups[i].level.c_str();
    out->line = d->group_lines[i].c_str();
    return NVLB_OK;
}

const char* nvlb_report_summary(const nvlb_report_data_t* d) {
    return d ? d->summary.c_str() : "";
}

const char* nvlb_report_recoveries(const nvlb_report_data_t* d) {
    return d ? d->recoveries.c_str() : "";
}

static_assert(static_cast<int>(BlockHealth::kHealthy) == NVLB_HEALTHY &&
              static_cast<int>(BlockHealth::kDegraded) == NVLB_DEGRADED &&
              static_cast<int>(BlockHealth::kDown) == NVLB_DOWN);

void nvlb_report_data_free(nvlb_report_data_t* d) {
    delete d;
}

char* nvlb_report(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count, int64_t now,
                  nvlb_report_format_t format) {
    if (!p || !node_states)
        return nullptr;
    try {
        std::string text;
        {
            std::lock_guard lock(p->mutex);
            if (node_count != p->planner.topology().node_count())
                return nullptr;
            ClusterReport r = make_report(p->planner, states_of(p, node_states, node_count), now);
            switch (format) {
            case NVLB_REPORT_JSON:
                text = report_json(r);
                break;
            case NVLB_REPORT_PROMETHEUS:
                text = report_prometheus(r);
                break;
            default:
                for (const auto& b : r.blocks)
                    text += block_line(b) + "\n";
                text += summary_line(r) + "\n";
                for (const auto& g : r.groups)
                    text += group_line(g) + "\n";
                for (const auto& line : recovery_lines(r))
                    text += line + "\n";
            }
        }
        char* out = static_cast<char*>(std::malloc(text.size() + 1));
        if (out)
            std::memcpy(out, text.c_str(), text.size() + 1);
        return out;
    } catch (...) {
        return nullptr;
    }
}

uint32_t nvlb_stranded_nodes(nvlb_planner_t* p, const uint8_t* free_mask, size_t node_count) {
    if (!p || !free_mask)
        return 0;
    try {
        std::lock_guard lock(p->mutex);
        if (node_count != p->planner.topology().node_count())
            return 0;
        std::vector<NodeState> s(node_count);
        for (std::size_t i = 0; i < node_count; ++i)
            s[i] = free_mask[i] ? NodeState::kFree : NodeState::kBusy;
        return static_cast<uint32_t>(make_report(p->planner, s, 0).stranded);
    } catch (...) {
        return 0;
    }
}

void nvlb_free(void* ptr) {
    std::free(ptr);
}

nvlb_status_t nvlb_node_topology(nvlb_planner_t* p, uint32_t node, const char* node_name, nvlb_unit_kind_t kind,
                                 const char* block, const nvlb_job_nodes_t* running, size_t running_count,
                                 bool restoring, nvlb_change_t* outcome, char* message, size_t message_cap) {
    if (!p || !node_name || !outcome || (!running && running_count) || (kind == NVLB_UNIT_BLOCK && !block) ||
        kind < NVLB_UNIT_BLOCK || kind > NVLB_UNIT_CONFIGURED)
        return NVLB_E_INVALID;
    *outcome = NVLB_CHANGE_REFUSED;
    copy_str(message, message_cap, "");
    nvlb_error_t err;
    std::memset(&err, 0, sizeof err);
    nvlb_status_t rc = guarded(&err, [&] {
        NodeAssignment asked;
        asked.node = node;
        asked.node_name = node_name;
        asked.target = kind == NVLB_UNIT_BLOCK  ? NodeAssignment::Target::kBlock
                       : kind == NVLB_UNIT_NONE ? NodeAssignment::Target::kNone
                                                : NodeAssignment::Target::kConfigured;
        if (block)
            asked.block = block;
        std::vector<JobNodes> jobs;
        for (size_t i = 0; i < running_count; ++i) {
            if (!running[i].nodes && running[i].node_count)
                return NVLB_E_INVALID;
            jobs.push_back({running[i].job_id, {running[i].nodes, running[i].nodes + running[i].node_count}});
        }
        std::lock_guard lock(p->mutex);
        const TopologyChange c = p->planner.change_node_block(asked, jobs, restoring);
        *outcome = c.outcome == TopologyChange::Outcome::kChanged   ? NVLB_CHANGE_APPLIED
                   : c.outcome == TopologyChange::Outcome::kRefused ? NVLB_CHANGE_REFUSED
                                                                    : NVLB_CHANGE_NONE;
        copy_str(message, message_cap, c.message);
        return NVLB_OK;
    });
    if (rc != NVLB_OK)
        copy_str(message, message_cap, err.message);
    return rc;
}

} // extern "C"
