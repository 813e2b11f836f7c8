// SPDX-License-Identifier: GPL-2.0-or-later
//
// Node failures over time, from a model or from a trace.
//
// Model (--failures "mtbi=980h,mttr=20h,rack_mtbf=5000h,rack_mttr=8h"): every
// node alternates between up (exponential, mean MTBI) and down (exponential,
// mean MTTR); independently every rack alternates between up (mean
// rack_mtbf) and a whole-rack fault (mean rack_mttr) that takes all its nodes
// down (a switch tray, power). A node is down while any cause holds it down.
// Processes start in their stationary state (a node is down at time 0 with
// probability MTTR / (MTBI + MTTR)), so there is no warm-up.
//
// Each process draws from its own random stream, derived from the seed and
// its index: the schedule is a pure function of (model, racks, nodes per rack,
// seed) and does not depend on how far a simulation runs, so every policy of
// a run replays exactly the same failures.
//
// Trace (--failures FILE.csv): header with node_id,down_s,up_s (other
// columns ignored); node ids 0-based in topology order (rack by rack); an
// empty up_s means the node never comes back. Overlapping intervals merge.
// An optional `kind` column (down, up or job; empty: down) says what the
// interruption at down_s is (failure_kinds.hpp): an `up` fault's node is
// drained when a check finds it and back at up_s (or a second after the
// drain, if that is later); a `job` fault ends at once (up_s ignored).
#pragma once

#include "failure_kinds.hpp"
#include "rng.hpp"
#include "sim_types.hpp"

#include <optional>
#include <string>
#include <vector>

namespace nvlblock::sim {

struct FailureModelSpec {
    double node_mtbi_s = 0; // 0: no node failures
    double node_mttr_s = 20 * 3600.0;
    double rack_mtbf_s = 0; // 0: no whole-rack faults
    double rack_mttr_s = 8 * 3600.0;
    std::string label; // as given, for reports

    double node_unavailability() const { return node_mtbi_s > 0 ? node_mttr_s / (node_mtbi_s + node_mttr_s) : 0.0; }
    double rack_unavailability() const { return rack_mtbf_s > 0 ? rack_mttr_s / (rack_mtbf_s + rack_mttr_s) : 0.0; }
};

// The Llama 3 interruption table (data/traces/llama3_interruptions.csv): 419
// unexpected interruptions in 54 days on 16,384 GPUs in 8-GPU hosts, 268 of
// them in GPU categories. Scaled to nodes of `gpus_per_node` GPUs: GPU causes
// in proportion to GPUs, the others (host, network, software, maintenance)
// once per host. Returns the per-node mean time between interruptions in
// hours (9,313 h for 4-GPU nodes; 6,334 h, i.e. 3.79 per 1,000 node-days,
// for 8-GPU hosts).
struct Llama3Table {
    int gpu_interruptions = 268;
    int other_interruptions = 151;
    double days = 54;
    int gpus = 16384;
    int gpus_per_host = 8;
};
double llama3_node_mtbi_hours(int gpus_per_node, const Llama3Table& t = {});
// Sums the table's categories the way llama3_node_mtbi_hours() does (GPU vs
// the rest); for checking the built-in numbers against the data file.
Llama3Table read_llama3_table(const std::string& path);

// Parses a model: comma-separated items, each key=value or a preset.
//   mtbi, mttr         node mean time between interruptions / to repair
//   rack_mtbf, rack_mttr  whole-rack faults (rack_mtbf absent or 0: none)
//   p                  node unavailability (0.02 or 2%): sets mtbi = mttr (1-p)/p
//   llama3             preset: mtbi from the Llama 3 table for these nodes, mttr 24h
//   none               no failures
// Durations take a unit s, m, h or d; a bare number is hours. Later items
// override earlier ones ("llama3,mttr=8h"). Throws ParseError.
FailureModelSpec parse_failure_model(const std::string& text, int gpus_per_node);

struct FailureInterval {
    std::uint32_t node = 0;
    Seconds down = 0;
    Seconds up = kNever;
    FailureKind kind = FailureKind::kDown;
};
// Reads a failure trace; throws CsvError naming file and line.
std::vector<FailureInterval> read_failure_trace(const std::string& path, std::size_t node_count);

// One change of one failure cause.
struct FailureEvent {
    Seconds at = 0;
    bool down = true;  // the cause starts (true) or ends (false)
    bool rack = false; // a whole-rack cause: `target` is a rack
    std::uint32_t target = 0;
    std::uint32_t process = 0;             // which cause, for follow()
    bool initial = false;                  // already down at time 0 (the stationary start), not a new failure
    FailureKind kind = FailureKind::kDown; // of a node's cause starting (failure_kinds.hpp)
};

class FailureSource {
  public:
    static FailureSource none();
    static FailureSource model(const FailureModelSpec& spec, int racks, int nodes_per_rack, std::uint64_t seed);
    static FailureSource trace(std::vector<FailureInterval> intervals);

    // Model only: each new interruption of a node is of a kind drawn with
    // these shares, from a stream of its own per node (so the times of the
    // interruptions do not depend on the shares). Rack faults and traces
    // stay node down. Call before initial().
    void set_kinds(const FailureKindSpec& kinds, std::uint64_t seed);

    // The first change of every cause (sorted by time is not required).
    std::vector<FailureEvent> initial();
    // The change after `e` of the same cause, if any. A node's `up` fault
    // ends where the caller says it is drained (pass `e` with that time) and
    // is repaired MTTR after; a `job` fault has nothing to repair: the next
    // interruption follows it.
    std::optional<FailureEvent> follow(const FailureEvent& e);

    std::string describe() const { return description_; }
    bool empty() const { return kind_ == Kind::kNone; }
    bool is_trace() const { return kind_ == Kind::kTrace; }
    // Whether any interruption may be of a kind other than down.
    bool has_kinds() const;

  private:
    enum class Kind { kNone, kModel, kTrace };
    Kind kind_ = Kind::kNone;
    FailureModelSpec spec_;
    int racks_ = 0, nodes_per_rack_ = 0;
    // A new node interruption's kind (kDown when every one is).
    FailureKind draw_kind(std::uint32_t node);

    std::vector<Rng> streams_; // model: one per node, then one per rack
    FailureKindSpec kinds_;
    std::vector<Rng> kind_streams_; // model with kinds: one per node
    std::vector<FailureInterval> intervals_;
    std::string description_ = "none";
};

// "--failures" argument: a file (exists, or ends in .csv) is a trace, anything
// else a model.
FailureSource make_failure_source(const std::string& arg, int racks, int nodes_per_rack, int gpus_per_node,
                                  std::uint64_t seed, FailureModelSpec* spec_out = nullptr);

} // namespace nvlblock::sim
