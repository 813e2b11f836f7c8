// SPDX-License-Identifier: GPL-2.0-or-later
//
// The placement engine: given a snapshot of the cluster and a request, choose
// the nodes, or say why not as facts (placement/refusal.hpp; the sentence is
// writers/explain.hpp's). Pure and deterministic: the same
// snapshot and request always give the same answer, which is what lets the
// simulator stand in for slurmctld. Rules (docs/placement.md):
//   1. Best fit: a job goes to the block where it leaves the least room
//      unused; small jobs fill partly used blocks first.
//   2. Segments (--segment) never cross a block and never exceed its slice.
//   3. Spares: per block, a count of healthy free nodes is withheld from
//      non-preemptible work while the block is healthy (failures use them up).
//   4. Lending: where it is on, preemptible work may use the spares too.
//   5. In-place recovery: a job restarting after a failure goes back to its
//      block(s), on its prior healthy nodes plus exactly as many spares as it
//      lost; nodes held for it are not given to anyone else meanwhile.
//   6. Degraded blocks (more failures than spares) still serve what fits.
//   7. A block fault (most of a block failed together) takes the block out.
//   8. --exclusive=topo takes blocks with no other work on them.
#pragma once

#include "placement/request.hpp"
#include "placement/snapshot.hpp"

#include <span>

namespace nvlblock {

Placement place(const Snapshot& snapshot, const Request& request);

class RoomIndex;
struct OfferCut;
// Whether place() could place `request` over the snapshot that `index`
// counts: false only where it refuses (speed only: callers that need no
// refusal's facts, such as the simulator's will-run questions, skip the
// decision). A request that is not restarting in place takes at most each
// block's room, and the index keeps their sum, over the cluster and over
// each group of the hierarchy (level_choice.hpp holding_rung: a job the
// levels hold inside one group needs a group that offers it every node),
// and the largest one block offers (a job carved whole, carving_unit, needs
// one block that offers it every node). `cuts`: blocks where other jobs'
// holds leave the request less than the index offers (held_offers.hpp).
bool may_place(const Topology& topo, const RoomIndex& index, const Request& request,
               std::span<const OfferCut> cuts = {});
// How many nodes short of may_place's yes the request is (0: it may be
// placed). Each node that becomes free raises each sum or room the bound
// compares by at most one (a block's room grows by at most its newly offered nodes), so
// while fewer nodes than this have been freed, and nothing else changed
// (failures, repairs, holds, the topology), the bound still says no.
long bound_shortfall(const Topology& topo, const RoomIndex& index, const Request& request,
                     std::span<const OfferCut> cuts = {});

} // namespace nvlblock
