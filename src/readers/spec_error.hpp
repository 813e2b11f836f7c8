// SPDX-License-Identifier: GPL-2.0-or-later
//
// A topology file with problems, and what could still be read of it: the
// blocks whose entries read cleanly and every setting that did. A checker
// builds that part too, so that the blocks' problems with each other and with
// slurm.conf come in the same pass as the file's own (nvlblock-check; config.md
// promises every problem at once). Nothing loads it: slurmctld takes the
// ConfigError it is.
#pragma once

#include "common/diagnostic.hpp"
#include "model/topology.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace nvlblock {

class SpecError : public ConfigError {
  public:
    // `partial`: absent where the blocks could not be read (an include that
    // failed); its hierarchy is left out where a block or a level was damaged.
    // `defaults_damaged`: a value of `defaults:` was wrong, so a problem
    // blamed on the defaults may come from the value put in its place.
    SpecError(std::vector<Diagnostic> problems, std::optional<TopologySpec> partial, bool defaults_damaged)
        : ConfigError(std::move(problems)), partial_(std::move(partial)), defaults_damaged_(defaults_damaged) {}

    const std::optional<TopologySpec>& partial() const { return partial_; }
    bool defaults_damaged() const { return defaults_damaged_; }

  private:
    std::optional<TopologySpec> partial_;
    bool defaults_damaged_ = false;
};

} // namespace nvlblock
