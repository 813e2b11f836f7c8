// SPDX-License-Identifier: GPL-2.0-or-later
//
// The planner ties the pieces together for a caller that lives through time:
// the topology, the ledger of jobs restarting after failures, and the rules
// for when a restart stops waiting for its block. The Slurm plugin, the
// simulator and the C ABI all decide through it, so no rule exists twice.
#pragma once

#include "model/topology.hpp"
#include "placement/engine.hpp"
#include "placement/tally_cache.hpp"
#include "recovery/reclaim.hpp"
#include "state/ledger.hpp"

#include <memory>
#include <span>

namespace nvlblock {

class Planner {
public:
    explicit Planner(Topology topology);

    const Topology& topology() const { return *topology_; }
    Ledger& ledger() { return ledger_; }
    const Ledger& ledger() const { return ledger_; }

    // Seconds after a requeue before Slurm considers the job again
    // (cred_expire + 1 and a scheduling pass); holds last at least this long.
    void set_requeue_delay(std::int64_t seconds) { requeue_delay_ = seconds; }
    std::int64_t requeue_delay() const { return requeue_delay_; }

    // Decide for one request. A job in the ledger is first placed back in
    // place; if its block cannot take it and its wait is over (or the block
    // is down) it falls back and is placed like any other job.
    Placement place(std::span<const NodeState> states, Request request, std::int64_t now);

    // For a job waiting to restart in place (`request` as for place()): which
    // of `running` to requeue so that it fits its block(s) now, on blocks
    // whose spares are reclaimed. Changes nothing.
    std::optional<Reclaim> plan_reclaim(std::span<const NodeState> states, Request request,
                                        std::span<const RunningJob> running, std::int64_t now) const;
    // The caller requeued the jobs of `plan` for `job_id`: logged, and no new
    // round for the job until the requeue delay has passed.
    void reclaim_started(std::uint32_t job_id, const Reclaim& plan, std::int64_t now);

    // The snapshot place() would use, for callers that want the tallies.
    Snapshot snapshot(std::span<const NodeState> states, std::int64_t now) const;

    void job_failed(std::uint32_t job_id, std::span<const NodeIndex> nodes, std::span<const NodeIndex> failed,
                    std::int64_t now);
    void job_started(std::uint32_t job_id, std::span<const NodeIndex> nodes, std::int64_t now);
    void job_gone(std::uint32_t job_id, std::int64_t now);

    // Reconfigure: swap the topology, keeping the ledger by node name.
    void replace_topology(Topology topology);

private:
    std::shared_ptr<const Topology> topology_;
    Ledger ledger_;
    std::int64_t requeue_delay_ = 0;
    // Claims recomputed only when the ledger or the time changes; place() is
    // called many times per scheduling pass.
    mutable std::vector<RecoveryClaim> claims_cache_;
    // Block tallies recounted only where node states changed between calls.
    mutable TallyCache tally_cache_;
};

} // namespace nvlblock
