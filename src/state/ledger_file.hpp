// SPDX-License-Identifier: GPL-2.0-or-later
//
// The recovery ledger's saved form (recovery/ledger.hpp holds the data;
// this writes and reads it): what slurmctld saves across restarts and a
// backup controller reads at takeover. Nodes and blocks by name, so that a
// reconfigure that renumbers nodes is safe. The format is described in
// ledger_file.cpp; state/atomic_file.hpp writes the file.
#pragma once

#include "model/topology.hpp"
#include "recovery/held_blocks.hpp"
#include "recovery/ledger.hpp"

#include <string>

namespace nvlblock {

// The ledger as text.
std::string ledger_state_text(const Ledger& ledger, const Topology& topo);

// Replaces the ledger's contents with what `text` holds. Records naming
// unknown nodes lose those nodes; records left with no block node are
// dropped (a note for the log). Throws ConfigError (label:line) on a
// malformed file, leaving the contents as they were.
void load_ledger_state(Ledger& ledger, const Topology& topo, const std::string& text, const std::string& label);

// A held block's saved form: one token, "<name>=<host list>" (names have no
// blanks or '='), and back; parse_held_block returns false on a bad token.
std::string held_block_token(const HeldBlock& b);
bool parse_held_block(const std::string& token, HeldBlock& out);

} // namespace nvlblock
