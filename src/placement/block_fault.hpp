// SPDX-License-Identifier: GPL-2.0-or-later
//
// Block faults (docs/placement.md rule 7): when a switch tray or a rack's
// power fails, most of a block fails together, and rack-local spares cannot
// help. Such a block is down as a whole: nothing is placed there, and the
// jobs waiting to restart on it go elsewhere at once.
#pragma once

namespace nvlblock {

// Whether a block with `failed` of `size` nodes failed is down as a whole:
// more failures than its spares absorb, and at least `fraction` of its nodes
// (the topology's block_fault.fraction).
bool is_block_fault(int size, int failed, int spares, double fraction);

} // namespace nvlblock
