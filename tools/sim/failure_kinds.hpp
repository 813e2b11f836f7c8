// SPDX-License-Identifier: GPL-2.0-or-later
//
// What an interruption does to the node and to its job (--failure-kinds).
// Three kinds, drawn per interruption of a node's failure process:
//   down  the host dies (power, CPU, memory, maintenance): Slurm sets the
//         node DOWN, ends the job NODE_FAIL and requeues it; the node comes
//         back after its repair time (MTTR);
//   up    a GPU or network fault with the host up (XID, HBM, NVLink, NIC):
//         the job's processes die and its batch script exits non-zero while
//         the node looks healthy to Slurm until a health check drains it
//         (the job's node Epilog, `epilog` seconds after the job's end, or
//         the periodic HealthCheckProgram, every `periodic` seconds). Until
//         then a job started on the node fails on it too. Drained, it is
//         repaired as a down node is (MTTR). The job is requeued only if the
//         site requeues its exit status (RequeueExit: `requeue`, a share);
//   job   a fault of the job itself (software, NCCL timeout): it exits
//         non-zero, no node is faulty, nothing is drained or repaired; it is
//         requeued as for `up`.
// Whole-rack faults and failure traces (--failures FILE.csv) stay `down`.
#pragma once

#include "sim_types.hpp"

#include <array>
#include <cstdint>
#include <string>

namespace nvlblock::sim {

enum class FailureKind : std::uint8_t { kDown = 0, kUp = 1, kJob = 2 };
inline constexpr std::size_t kFailureKindCount = 3;
const char* failure_kind_name(FailureKind k);

// How the Llama 3 table's root causes split into the kinds (the table's
// `component` column; docs/sim.md "Failure kinds" gives the reasons).
// Throws ParseError for a component it does not know, so that a new row in
// the data file cannot be counted silently.
FailureKind llama3_component_kind(const std::string& component);

// The table's interruptions by kind, the GPU category apart (its rate scales
// with GPUs per node, as llama3_node_mtbi_hours scales it).
struct Llama3Kinds {
    std::array<int, kFailureKindCount> gpu{}, other{};
};
// Built in, as read from data/traces/llama3_interruptions.csv (a unit test
// checks the two agree): GPU 268 up; others 43 down, 45 up, 63 job.
Llama3Kinds llama3_kinds();
Llama3Kinds read_llama3_kinds(const std::string& path);
// Shares of the kinds for nodes of `gpus_per_node` GPUs: the GPU rows
// weighted by gpus_per_node / 8 (the table's hosts), the others by 1.
std::array<double, kFailureKindCount> llama3_kind_shares(int gpus_per_node, const Llama3Kinds& t = llama3_kinds());

struct FailureKindSpec {
    std::array<double, kFailureKindCount> share{1.0, 0.0, 0.0}; // down, up, job; sums to 1
    // Detection of an `up` fault. epilog: seconds from the job's end until
    // its node Epilog has drained the node (the node completes meanwhile; 0:
    // the job's own script drains it before it exits); -1: no Epilog check.
    // periodic: HealthCheckInterval (0: none); the check runs on every node
    // at a phase of its own.
    Seconds epilog = 5;
    Seconds periodic = 300;
    double requeue = 1.0; // share of failed jobs whose exit status the site requeues (RequeueExit)
    std::string label = "down";

    bool all_down() const { return share[0] >= 1.0; }
};

// The default for a failure model: the Llama 3 shares for the `llama3`
// preset (rate and kinds from the same table), every interruption a node
// down for the others (p=, mtbi=: defined as node unavailability).
FailureKindSpec default_failure_kinds(const std::string& failures_arg, int gpus_per_node);

// Parses --failure-kinds: comma-separated items applied in order to `base`:
//   llama3 | down | up | job     shares: the Llama 3 table's, or all of one kind
//   down=W,up=W,job=W            weights (normalised; kinds not named: 0)
//   epilog=S|off  periodic=S|off  requeue=F (0.9 or 90%)
// Durations take a unit s, m, h or d; a bare number is seconds. Throws ParseError.
FailureKindSpec parse_failure_kinds(const std::string& text, int gpus_per_node, FailureKindSpec base);

// One line for reports (without the shares: a trace's kinds are its own).
std::string describe_failure_kinds(const FailureKindSpec& s, bool shares = true);

} // namespace nvlblock::sim
