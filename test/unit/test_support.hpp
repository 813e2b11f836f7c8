// SPDX-License-Identifier: GPL-2.0-or-later
//
// Helpers shared by the unit tests: build topologies from text, make node
// state arrays, name nodes.
#pragma once

#include "model/topology.hpp"
#include "placement/engine.hpp"
#include "placement/node_state.hpp"
#include "readers/load_topology.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace nvlblock::test {

inline Topology yaml_topology(const std::string& text, const std::vector<std::string>* universe = nullptr) {
    return build_topology(read_topology_spec_text(text, "test.yaml", SourceFormat::kYaml), universe);
}

inline Topology conf_topology(const std::string& text, const std::vector<std::string>* universe = nullptr) {
    return build_topology(read_topology_spec_text(text, "topology.conf", SourceFormat::kTopologyConf), universe);
}

// `racks` blocks of `per_rack` nodes gb0001..., with the given settings. The
// spares are idle (rule 3, what most of these tests are about) unless
// `extra` names another reserve; nvlblock's own default is reclaim.
inline Topology racks(int racks, int per_rack = 18, int slice = 16, int spares = 2, bool lending = false,
                      const std::string& extra = "") {
    const bool own_reserve = extra.find("  reserve:") != std::string::npos;
    std::string y = "defaults:\n  slice: " + std::to_string(slice) + "\n  spares: " + std::to_string(spares) +
                    "\n  lending: " + (lending ? "true" : "false") + "\n" + (own_reserve ? "" : "  reserve: idle\n") +
                    extra + "blocks:\n";
    int node = 1;
    for (int r = 1; r <= racks; ++r) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "  - name: rack%02d\n    nodes: gb[%04d-%04d]\n", r, node, node + per_rack - 1);
        y += buf;
        node += per_rack;
    }
    return yaml_topology(y);
}

inline std::vector<NodeState> all(const Topology& t, NodeState s = NodeState::kFree) {
    return std::vector<NodeState>(t.node_count(), s);
}

// Node indices [first, last] inclusive, 0-based.
inline std::vector<NodeIndex> range(NodeIndex first, NodeIndex last) {
    std::vector<NodeIndex> v;
    for (NodeIndex n = first; n <= last; ++n)
        v.push_back(n);
    return v;
}

// The recovery tests' job: the first 16 nodes of rack02 on 18-node racks
// (gb0019-gb0034; gb0035-gb0036 are the rack's spares).
inline const std::vector<NodeIndex> kRack02First16 = range(18, 33);

inline void set(std::vector<NodeState>& s, const std::vector<NodeIndex>& nodes, NodeState st) {
    for (NodeIndex n : nodes)
        s[n] = st;
}

// One decision of the engine on these states.
inline Placement run(const Topology& t, const std::vector<NodeState>& states, const Request& r,
                     const std::vector<RecoveryClaim>& claims = {}) {
    Snapshot snap(t, states, claims);
    return place(snap, r);
}

// A request of job `id` for `n` nodes, in segments of `segment` if given.
inline Request job(std::uint32_t id, std::uint32_t n, std::uint32_t segment = 0) {
    Request r;
    r.job_id = id;
    r.min_nodes = r.max_nodes = n;
    r.segment = segment;
    return r;
}

// The same for job 100.
inline Request nodes(std::uint32_t n, std::uint32_t segment = 0) {
    return job(100, n, segment);
}

// A scratch directory removed at the end of the test.
class TempDir {
  public:
    TempDir() {
        char tmpl[] = "/tmp/nvlblock-test-XXXXXX";
        path_ = mkdtemp(tmpl);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::string path() const { return path_; }
    std::string write(const std::string& name, const std::string& text) const {
        std::string p = path_ + "/" + name;
        std::filesystem::create_directories(std::filesystem::path(p).parent_path());
        std::ofstream(p) << text;
        return p;
    }

  private:
    std::string path_;
};

} // namespace nvlblock::test
