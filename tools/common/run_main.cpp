// SPDX-License-Identifier: GPL-2.0-or-later
#include "run_main.hpp"

#include "cli.hpp"

#include <cstdio>
#include <exception>

namespace nvlblock::cli {

int run_main(const char* tool, int (*run)(int, char**), int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: %s\n(try --help)\n", tool, e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", tool, e.what());
        return 1;
    }
}

} // namespace nvlblock::cli
