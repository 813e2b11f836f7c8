// SPDX-License-Identifier: GPL-2.0-or-later
//
// The C ABI, configuration face (include/nvlblock/config.h): loading and
// reloading a topology, the process planner, checking a file, the topology
// and policy a planner holds, and topology changes at run time.
#include "capi/abi_support.hpp"

#include "readers/load_topology.hpp"
#include "writers/topology_change_text.hpp"

#include <atomic>
#include <cstring>
#include <optional>

using namespace nvlblock;
using namespace nvlblock::capi;

namespace {

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

std::atomic<nvlb_planner_t*> g_process_planner{nullptr};

} // namespace

extern "C" {

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
        copy_str(message, message_cap, topology_change_text(p->planner.topology(), asked, c));
        return NVLB_OK;
    });
    if (rc != NVLB_OK)
        copy_str(message, message_cap, err.message);
    return rc;
}

} // extern "C"
