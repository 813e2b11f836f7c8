// SPDX-License-Identifier: GPL-2.0-or-later
//
// libFuzzer targets for everything that parses operator or disk input: the
// YAML and topology.conf readers, hostlist expressions, saved state,
// slurm.conf (nvlblock-check), the JSON status file (nvlblock-status) and the
// simulator's input files (traces, failure logs, tables, model strings). A
// parser may reject input only with its documented error (ConfigError,
// HostlistError, CsvError, ParseError, the status reader's runtime_error);
// any other exception,
// crash, leak or sanitizer report is a bug. Built by test/fuzz/run with clang;
// the NVLBLOCK_FUZZ_TARGET environment variable selects the parser (yaml,
// conf, hostlist, state, slurmconf, status, simfiles), so one binary serves
// all. (The packed data clients unpack is fuzz_packed.c's.)
#include "csv.hpp"
#include "failure_model.hpp"
#include "json_file.hpp"
#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"
#include "recovery/ledger.hpp"
#include "slurm_conf.hpp"
#include "state/ledger_file.hpp"
#include "status_view.hpp"
#include "synthetic.hpp"
#include "trace_reader.hpp"
#include "units.hpp"

#include <fstream>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace nvlblock;

namespace {

const Topology& state_topology() {
    static const Topology t = build_topology(
        read_topology_spec_text("blocks:\n  - name: r1\n    nodes: gb[01-18]\n  - name: r2\n    nodes: gb[19-36]\n",
                                "fuzz.yaml", SourceFormat::kYaml));
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
        if (!std::strcmp(e, "slurmconf"))
            return 5;
        if (!std::strcmp(e, "status"))
            return 6;
        if (!std::strcmp(e, "simfiles"))
            return 7;
        return 4;
    }();
    return t;
}

// The simulator reads its inputs from files: one per process, on tmpfs.
std::string sim_input_path() {
    static const std::string p = "/dev/shm/nvlblock-fuzz-" + std::to_string(::getpid()) + ".csv";
    return p;
}

void simfiles(const std::string& text) {
    {
        std::ofstream out(sim_input_path(), std::ios::binary | std::ios::trunc);
        out << text;
    }
    const std::string& path = sim_input_path();
    auto guarded = [](auto&& fn) {
        try {
            fn();
        } catch (const sim::CsvError&) {
        } catch (const sim::ParseError&) {
        }
    };
    guarded([&] { (void)sim::read_trace(path); });
    guarded([&] { (void)sim::read_failure_trace(path, 36); });
    guarded([&] { (void)sim::read_llama3_table(path); });
    guarded([&] { (void)sim::read_shares(path); });
    const std::string line = text.substr(0, text.find('\n'));
    guarded([&] { (void)sim::parse_failure_model(line, 4); });
    guarded([&] { (void)sim::parse_synthetic(line); });
    guarded([&] { (void)sim::parse_seconds(line, 's', "fuzz"); });
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
        case 5: {
            // Includes resolve in a directory that does not exist.
            const tool::SlurmConf c = tool::read_slurm_conf_text(text, "slurm.conf", "/nonexistent-fuzz-dir");
            (void)c.node_names();
            break;
        }
        case 6:
            try {
                (void)status::parse_status(text, "status.json");
            } catch (const std::runtime_error& e) {
                // Its documented refusal of a wrong shape: "file: not an nvlblock status file: ...".
                if (std::string(e.what()).rfind("status.json: ", 0) != 0)
                    throw;
            }
            break;
        case 7:
            simfiles(text);
            break;
        default: {
            Ledger l;
            load_ledger_state(l, state_topology(), text, "nvlblock_state");
            (void)ledger_state_text(l, state_topology());
        }
        }
    } catch (const ConfigError&) {
    } catch (const hostlist::HostlistError&) {
    } catch (const tool::JsonShapeError&) {
    }
    return 0;
}
