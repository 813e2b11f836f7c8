// SPDX-License-Identifier: GPL-2.0-or-later
//
// libFuzzer targets for everything that parses operator or disk input: the
// YAML and topology.conf readers, hostlist expressions and saved state. A
// parser may reject input only with ConfigError/HostlistError; any other
// exception, crash, leak or sanitizer report is a bug. Built by
// test/fuzz/run with clang; the NVLBLOCK_FUZZ_TARGET environment variable
// selects the parser (yaml, conf, hostlist, state), so one binary serves all.
#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"
#include "recovery/ledger.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace nvlblock;

namespace {

const Topology& state_topology() {
    static const Topology t = build_topology(read_topology_spec_text(
        "blocks:\n  - name: r1\n    nodes: gb[01-18]\n  - name: r2\n    nodes: gb[19-36]\n", "fuzz.yaml",
        SourceFormat::kYaml));
    return t;
}

int target() {
    static const int t = [] {
        const char* e = std::getenv("NVLBLOCK_FUZZ_TARGET");
        if (!e || !std::strcmp(e, "yaml"))
            return 1;
        if (!std::strcmp(e, "conf"))
            return 2;
        if (!std::strcmp(e, "hostlist"))
            return 3;
        return 4;
    }();
    return t;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        switch (target()) {
        case 1:
            (void)build_topology(read_topology_spec_text(text, "fuzz.yaml", SourceFormat::kYaml));
            break;
        case 2:
            (void)build_topology(read_topology_spec_text(text, "topology.conf", SourceFormat::kTopologyConf));
            break;
        case 3:
            (void)hostlist::compress(hostlist::expand(text));
            break;
        default: {
            Ledger l;
            l.deserialize(state_topology(), text, "nvlblock_state");
            (void)l.serialize(state_topology());
        }
        }
    } catch (const ConfigError&) {
    } catch (const hostlist::HostlistError&) {
    }
    return 0;
}
