// SPDX-License-Identifier: GPL-2.0-or-later
//
// What reclaiming (rule 3b) has done lately: each job nvlblock made room
// with, when, and for whose failed job. The limits read it (a job moved once
// is not moved again within recovery.reclaim_cooldown; at most
// reclaim_limits.per_user_per_day for one user's recoveries and per_hour in
// the cluster), and the ledger saves it, so the limits hold across slurmctld
// restarts. Data only: the rules are reclaim_eligibility.hpp's and
// reclaim.hpp's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace nvlblock {

struct ReclaimMove {
    std::uint32_t victim = 0;   // the job requeued or preempted
    std::int64_t at = 0;        // when
    std::uint32_t for_user = 0; // the user whose failed job it made room for
};

class ReclaimHistory {
  public:
    // Moves older than this are dropped: the longest window a limit looks at
    // is a day (a cooldown longer than that keeps its moves as long).
    static constexpr std::int64_t kDay = 24 * 3600;

    void record(ReclaimMove m, std::int64_t keep_seconds);
    // Whether `job` was moved at or after `since`.
    bool moved_since(std::uint32_t job, std::int64_t since) const;
    std::size_t moves_since(std::int64_t since) const;
    std::size_t moves_for_user_since(std::uint32_t user, std::int64_t since) const;

    const std::deque<ReclaimMove>& moves() const { return moves_; }
    void replace(std::deque<ReclaimMove> moves) { moves_ = std::move(moves); }

  private:
    std::deque<ReclaimMove> moves_; // oldest first
};

} // namespace nvlblock
