// SPDX-License-Identifier: GPL-2.0-or-later
#include "json_output.hpp"

#include "writers/json_writer.hpp"

namespace nvlblock::sim {

namespace {

void wait_object(nvlblock::JsonWriter& w, const WaitStats& s) {
    w.begin_object();
    w.field("count", static_cast<std::uint64_t>(s.count));
    w.field("mean", s.mean, 1).field("p50", s.p50, 1).field("p95", s.p95, 1).field("p99", s.p99, 1);
    w.field("max", s.max, 1);
    w.end_object();
}

void by_class(nvlblock::JsonWriter& w, const char* name, const std::vector<WaitStats>& stats) {
    w.key(name).begin_object();
    for (const WaitStats& s : stats) {
        w.key(s.size_class);
        wait_object(w, s);
    }
    w.end_object();
}

// What the jobs that lost their nodes to in-place restarts paid.
void victims_object(nvlblock::JsonWriter& w, const PolicyResult& r) {
    w.key("victims").begin_object();
    w.field("moved", r.reclaims);
    w.field("moved_per_1000_jobs", r.moved_per_1000_jobs(), 3);
    w.field("requeued", r.reclaim_requeues).field("checkpointed", r.victims_checkpointed);
    w.field("checkpointed_share", r.checkpointed_share(), 4);
    w.field("most_moves_one_job", r.most_moves_one_job);
    w.field("lost_node_hours", r.lost_reclaim_node_hours, 1);
    w.key("extra_response_s");
    wait_object(w, r.reclaimed_extra_response);
    w.end_object();
    // Slurm's own preemption (not for a reclaim): the jobs it requeued.
    w.key("preemption_victims").begin_object();
    w.field("jobs", r.preempted_jobs).field("most_times_one_job", r.most_preemptions_one_job);
    w.field("lost_node_hours", r.lost_preempted_node_hours, 1);
    w.key("extra_response_s");
    wait_object(w, r.preempted_extra_response);
    w.end_object();
}

} // namespace

namespace {

// The run's settings, as given.
void run_object(nvlblock::JsonWriter& w, const RunInfo& run) {
    const SimOptions& o = run.options;
    w.key("run").begin_object();
    w.field("trace", run.trace).field("workload", run.workload);
    w.field("failures", run.failures_arg).field("failure_model", run.failures);
    w.field("seed", run.seed);
    w.field("racks", o.shape.racks).field("nodes_per_rack", o.shape.nodes_per_rack);
    w.field("slice", o.shape.slice).field("spares", o.shape.spares).field("gpus_per_node", o.shape.gpus_per_node);
    w.field("queue", queue_name(o.queue)).field("preemption", preemption_name(o.preemption));
    w.field("checkpoint_interval_s", o.checkpoint_interval).field("requeue_delay_s", o.requeue_delay);
    w.field("requeue_order", o.requeue_order == RequeueOrder::kRequeue ? "requeue" : "submit");
    w.field("recovery_wait_s", o.shape.recovery_wait).field("reclaim_budget_s", o.shape.reclaim_budget);
    w.field("failure_window_s", o.shape.failure_window);
    w.key("failure_kinds").begin_object();
    w.field("down", o.kinds.share[0], 4).field("up", o.kinds.share[1], 4).field("job", o.kinds.share[2], 4);
    w.field("epilog_s", o.kinds.epilog).field("periodic_s", o.kinds.periodic).field("requeue", o.kinds.requeue, 4);
    w.end_object();
    w.field("bf_interval_s", o.bf_interval).field("bf_max_job_test", o.bf_max_job_test);
    w.field("horizon_s", o.horizon).field("window_start_s", o.window_start).field("window_end_s", o.window_end);
    w.field("bucket_s", o.bucket).field("in_job_restart_s", o.in_job_restart);
    w.key("hierarchy").begin_array();
    for (int per : o.shape.hierarchy)
        w.value(static_cast<std::int64_t>(per));
    w.end_array();
    w.field("crossing_s", o.shape.crossing);
    w.key("reclaim_from_qos").begin_array();
    for (const std::string& q : o.shape.reclaim_from_qos)
        w.value(q);
    w.end_array();
    w.field("grace_time_s", o.victims.grace_time).field("kill_wait_s", o.victims.kill_wait);
    w.field("checkpoint_on_signal", o.victims.checkpoint_on_signal, 4);
    w.field("checkpoint_write_s", o.victims.checkpoint_write)
        .field("requeueable_share", o.victims.requeueable_share, 4);
    w.field("checkpoint_share", o.victims.checkpoint_share, 4)
        .field("checkpoint_restore_s", o.victims.checkpoint_restore);
    w.end_object();
}

// A policy's topology and what the cluster delivered under it.
void usage_fields(nvlblock::JsonWriter& w, const PolicyResult& r) {
    w.key("topology").begin_object();
    w.field("slice", r.policy.slice).field("spares", r.policy.spares).field("lending", r.policy.lending);
    w.field("reclaim", r.policy.reclaim).field("recovery", r.policy.recovery).field("preemption", r.policy.preemption);
    w.field("standbys", r.policy.standbys).field("expedite", r.policy.expedite);
    w.end_object();
    w.field("nodes", r.nodes).field("gpus_per_node", r.gpus_per_node);
    w.field("window_start_s", r.window_start).field("window_end_s", r.window_end).field("sim_end_s", r.sim_end);
    w.field("capacity_gpu_hours", r.capacity_gpu_hours, 1);
    w.field("healthy_gpu_hours", r.healthy_gpu_hours, 1);
    w.field("busy_gpu_hours", r.busy_gpu_hours, 1);
    w.field("busy_preemptible_gpu_hours", r.busy_preemptible_gpu_hours, 1);
    w.field("useful_gpu_hours", r.useful_gpu_hours, 1);
    w.field("standby_gpu_hours", r.standby_gpu_hours, 1);
    w.field("lost_failure_gpu_hours", r.lost_failure_gpu_hours, 1);
    w.field("lost_preemption_gpu_hours", r.lost_preemption_gpu_hours, 1);
    w.field("utilization", r.utilization, 5).field("goodput", r.goodput, 5);
    w.field("healthy_nodes_mean", r.healthy_nodes_mean, 2).field("busy_nodes_mean", r.busy_nodes_mean, 2);
    w.field("idle_nodes_mean", r.idle_nodes_mean, 2).field("stranded_nodes_mean", r.stranded_nodes_mean, 2);
    w.field("waiting_time_fraction", r.waiting_time_fraction, 5);
}

void jobs_fields(nvlblock::JsonWriter& w, const PolicyResult& r) {
    w.key("jobs").begin_object();
    w.field("submitted", r.jobs_submitted).field("started", r.jobs_started).field("completed", r.jobs_completed);
    w.field("never_started", r.jobs_unstarted).field("rejected", r.jobs_rejected);
    w.field("completed_gpu_hours", r.completed_gpu_hours, 1);
    w.end_object();
    by_class(w, "wait_s", r.waits);
    by_class(w, "response_s", r.responses);
    by_class(w, "bounded_slowdown", r.slowdowns);
    w.key("spread");
    if (r.hierarchy) {
        w.begin_object();
        w.field("multi_rack_jobs", r.spread.multi_rack).field("fit_one_su", r.spread.fit_one_su);
        w.field("confined_of_fit", r.spread.confined).field("confined_of_all", r.spread.confined_any);
        w.field("mean_sus_spanned", r.spread.mean_sus(), 3);
        w.end_object();
    } else {
        w.null();
    }
}

// How failed jobs came back, and the recovery ledger's account of it.
void restarts_object(nvlblock::JsonWriter& w, const PolicyResult& r) {
    w.key("restarts").begin_object();
    w.field("failure_requeues", r.failure_requeues).field("restarts", r.restarts);
    w.field("in_place", r.restarts_in_place).field("elsewhere", r.restarts - r.restarts_in_place);
    w.key("delay_s");
    wait_object(w, r.restart_delay);
    w.key("multi_node").begin_object();
    w.field("restarts", r.multi_node_restarts).field("in_place", r.multi_node_in_place);
    w.key("delay_s");
    wait_object(w, r.multi_node_restart_delay);
    w.end_object();
    w.field("preemptions", r.preemptions).field("reclaims", r.reclaims);
    w.field("in_job", r.in_job_restarts).field("standbys_used", r.standbys_used);
    w.key("ledger");
    if (r.ledger) {
        w.begin_object();
        w.field("failures", r.ledger_failures).field("in_place", r.ledger_in_place);
        w.field("elsewhere", r.ledger_elsewhere);
        w.field("node_down", r.ledger_node_down).field("drained", r.ledger_drained);
        w.field("after_end", r.ledger_after_end);
        w.end_object();
    } else {
        w.null();
    }
    w.end_object();
}

void policy_object(nvlblock::JsonWriter& w, const PolicyResult& r, bool timing) {
    w.begin_object();
    w.field("policy", r.policy.name);
    usage_fields(w, r);
    jobs_fields(w, r);
    restarts_object(w, r);
    victims_object(w, r);
    w.key("failures").begin_object();
    w.field("node_failures", r.node_failures).field("rack_faults", r.rack_faults);
    w.field("node_repairs", r.node_repairs);
    w.field("up_faults", r.up_faults).field("job_faults", r.job_faults);
    w.field("fault_ends", r.fault_ends).field("hidden_fault_hits", r.hidden_fault_hits);
    w.field("jobs_not_requeued", r.jobs_not_requeued).field("not_requeued_gpu_hours", r.not_requeued_gpu_hours, 1);
    w.end_object();
    w.key("simulation").begin_object();
    w.field("events", r.events).field("passes", r.passes).field("backfill_passes", r.backfill_passes);
    w.field("place_calls", r.place_calls).field("reservations", r.reservations);
    w.end_object();
    if (timing) {
        w.key("performance").begin_object();
        w.field("wall_s", r.wall_seconds, 3);
        w.field("events_per_s", r.wall_seconds > 0 ? static_cast<double>(r.events) / r.wall_seconds : 0.0, 0);
        w.end_object();
    }
    w.end_object();
}

} // namespace

std::string results_json(const RunInfo& run, const std::vector<PolicyResult>& results, bool timing) {
    nvlblock::JsonWriter w;
    w.begin_object();
    w.field("tool", "nvlblock-sim").field("schema", 1);
    run_object(w, run);
    w.key("policies").begin_array();
    for (const PolicyResult& r : results)
        policy_object(w, r, timing);
    w.end_array();
    if (timing) {
        w.key("performance").begin_object();
        w.field("wall_s", run.wall_seconds, 3).field("threads", run.threads);
        w.end_object();
    }
    w.end_object();
    return w.str();
}

} // namespace nvlblock::sim
