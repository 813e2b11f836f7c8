// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-status --clear-lemon NODES: leaves one request per node for
// slurmctld in <StateSaveLocation>/nvlblock-requests (clear-lemon.NODE,
// written under a dot name and renamed into place), which the plugin's file
// writer takes while in control (plugin/topology/operator_requests.c). The
// directory belongs to SlurmUser, who removes the requests: created so
// when this runs as root.
#pragma once

#include <string>
#include <vector>

namespace nvlblock::status {

// Writes the requests; returns the paths written. Throws std::runtime_error
// naming the path on failure.
std::vector<std::string> request_clear_lemons(const std::string& state_save_location,
                                              const std::vector<std::string>& nodes, const std::string& slurm_user);

} // namespace nvlblock::status
