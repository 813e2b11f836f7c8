// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/block_fault.hpp"

#include <cmath>

namespace nvlblock {

bool is_block_fault(int size, int failed, int spares, double fraction) {
    if (failed <= spares)
        return false;
    return failed >= static_cast<int>(std::ceil(fraction * size - 1e-9));
}

} // namespace nvlblock
