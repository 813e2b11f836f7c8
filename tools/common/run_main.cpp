// SPDX-License-Identifier: GPL-2.0-or-later
#include "run_main.hpp"

#include "cli.hpp"

#include <cstdio>
#include <cstring>
#include <exception>

namespace nvlblock::cli {

#ifndef NVLBLOCK_VERSION
#define NVLBLOCK_VERSION "0.0.0"
#endif
#ifndef NVLBLOCK_BUILT_FOR_SLURM
#define NVLBLOCK_BUILT_FOR_SLURM ""
#endif

std::string built_for_slurm() {
    return NVLBLOCK_BUILT_FOR_SLURM;
}

std::string version_line(const char* tool) {
    const std::string slurm = built_for_slurm();
    return std::string(tool) + " " + NVLBLOCK_VERSION + " (nvlblock, " +
           (slurm.empty() ? std::string("built without the Slurm plugins") : "built for Slurm " + slurm) + ")";
}

int run_main(const char* tool, int (*run)(int, char**), int argc, char** argv) {
    static char help[] = "--help";
    if (argc == 2 && (std::strcmp(argv[1], "-V") == 0 || std::strcmp(argv[1], "--version") == 0)) {
        std::printf("%s\n", version_line(tool).c_str());
        return 0;
    }
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "-h") == 0)
            argv[i] = help;
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
