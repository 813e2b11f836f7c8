// SPDX-License-Identifier: GPL-2.0-or-later
#include "writers/time_text.hpp"

#include <ctime>

namespace nvlblock {

std::string time_text(std::int64_t unix_seconds, const char* format, TimeZone zone) {
    const std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    if (zone == TimeZone::kUtc)
        gmtime_r(&t, &tm);
    else
        localtime_r(&t, &tm);
    char buf[64];
    return std::string(buf, std::strftime(buf, sizeof buf, format, &tm)); // "" when it does not fit
}

} // namespace nvlblock
