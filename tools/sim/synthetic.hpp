// SPDX-License-Identifier: GPL-2.0-or-later
//
// The synthetic large-job mix: slice jobs whose sizes follow the GPU-count
// shares of an LLM cluster (data/traces/gpu_size_shares_from_acme_figure.csv,
// read from the AcmeTrace figure), plus small preemptible jobs.
//
// --trace "synthetic:KEY=VALUE,..." with keys
//   load=X          slice-job offered load, as a fraction of the cluster's nodes
//                   (Poisson arrivals); "saturate" keeps `queue` slice jobs
//                   pending at all times instead (closed loop, the queue never runs dry)
//   queue=N         pending slice jobs kept in saturate mode (default 16)
//   small_load=X    offered load of small preemptible jobs (default 0.08), Poisson
//   small_nodes=N   nodes per small job (default 1)
//   hours=H         arrivals stop after H hours (default: --horizon, else 336)
//   mean_hours=H    mean run time of slice jobs on 16-node slices (default 12), exponential
//   small_mean_hours=H  mean run time of small jobs (default 1), exponential
//   min_minutes=M   shortest run time of any job (default 10)
//   shares=NAME     row of the shares file: Kalos (default), Seren, Helios, Philly, PAI
//   weight=W        gpu_time (default): job sizes drawn so that each size bin gets
//                   the figure's share of GPU time; jobs: the figure's share of jobs
//   shares_file=P   the shares CSV (default data/traces/gpu_size_shares_from_acme_figure.csv,
//                   relative to the working directory, then to the source tree)
//   max_slices=N    largest job, in slices (default racks / 4, at least 1)
//
// Size bins of jobs of 64 GPUs or more, and the slices a job of each bin asks for
// (LLM jobs are sized in powers of two): [64,128) -> 1, [128,256) -> 2,
// [256,512) -> 4, [512,1024) -> 8, >= 1024 -> 16 (each capped at max_slices).
#pragma once

#include "rng.hpp"
#include "workload.hpp"

#include <array>
#include <string>

namespace nvlblock::sim {

// One row of the shares file: percent of jobs (or of GPU time) at or above each size.
struct SharesRow {
    std::string trace, weight;
    double le1 = 0, ge8 = 0, ge16 = 0, ge32 = 0, ge64 = 0, ge72 = 0, ge128 = 0, ge256 = 0, ge512 = 0, ge1024 = 0;
};
std::vector<SharesRow> read_shares(const std::string& path);

struct SyntheticSpec {
    bool saturate = false;
    double load = 0.9;
    int queue = 16;
    double small_load = 0.08;
    std::uint32_t small_nodes = 1;
    double hours = 0; // 0: from --horizon, else 336
    double mean_hours = 12;
    double small_mean_hours = 1;
    double min_minutes = 10;
    std::string shares = "Kalos";
    std::string weight = "gpu_time";
    std::string shares_file;
    std::uint32_t max_slices = 0; // 0: racks / 4

    // Probability of each size bin (1, 2, 4, 8, 16 slices), filled by resolve().
    std::array<double, 5> bin_p{};
    std::array<std::uint32_t, 5> bin_slices{1, 2, 4, 8, 16};
};

// Parses the part after "synthetic:"; throws ParseError.
SyntheticSpec parse_synthetic(const std::string& text);
// Reads the shares and fixes the defaults that depend on the cluster.
// `source_dir`: the source tree, the fallback for the default shares file.
void resolve_synthetic(SyntheticSpec& spec, int racks, Seconds horizon, const std::string& source_dir);

class SyntheticWorkload : public Workload {
  public:
    SyntheticWorkload(SyntheticSpec spec, std::size_t cluster_nodes, std::uint64_t seed);
    std::optional<JobSpec> next_open() override;
    int closed_target() const override { return spec_.saturate ? spec_.queue : 0; }
    JobSpec next_closed(Seconds now) override;
    Seconds last_open_submit() const override;
    std::string describe() const override;
    std::unique_ptr<Workload> clone() const override;

    const SyntheticSpec& spec() const { return spec_; }
    double mean_slices() const;

  private:
    JobSpec draw_slice_job(Seconds submit);
    JobSpec draw_small_job(Seconds submit);
    Seconds draw_duration(Rng& r, double mean_s);

    SyntheticSpec spec_;
    std::size_t nodes_;
    std::uint64_t seed_;
    Rng slice_rng_, small_rng_, slice_arrivals_, small_arrivals_;
    Seconds end_ = 0;
    double slice_rate_ = 0, small_rate_ = 0; // arrivals per second
    Seconds next_slice_ = kNever, next_small_ = kNever;
    std::uint64_t slice_count_ = 0, small_count_ = 0;
};

} // namespace nvlblock::sim
