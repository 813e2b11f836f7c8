// SPDX-License-Identifier: GPL-2.0-or-later
#include "local.hpp"

#include "writers/json_writer.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <sstream>

namespace nvlblock::check {
namespace {

constexpr unsigned kNvidiaVendor = 0x10de;

std::string short_host(std::string h) {
    if (auto dot = h.find('.'); dot != std::string::npos)
        h.resize(dot);
    return h;
}

std::string bitmap_list(hwloc_const_bitmap_t b) {
    if (!b || hwloc_bitmap_iszero(b))
        return "";
    char* s = nullptr;
    if (hwloc_bitmap_list_asprintf(&s, b) < 0 || !s)
        return "";
    std::string out = s;
    std::free(s);
    return out;
}

class HwlocTopology {
  public:
    HwlocTopology() { ok_ = hwloc_topology_init(&t_) == 0; }
    ~HwlocTopology() {
        if (ok_)
            hwloc_topology_destroy(t_);
    }
    HwlocTopology(const HwlocTopology&) = delete;
    HwlocTopology& operator=(const HwlocTopology&) = delete;

    std::string load(const std::string& xml) {
        if (!ok_)
            return "hwloc_topology_init failed";
        if (!xml.empty() && hwloc_topology_set_xml(t_, xml.c_str()) < 0)
            return "cannot use " + xml + " as an hwloc XML topology";
        // GPUs are "important" I/O devices: kept with their bridges.
        hwloc_topology_set_io_types_filter(t_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
        if (hwloc_topology_load(t_) < 0)
            return xml.empty() ? "hwloc cannot load this system's topology"
                               : "hwloc cannot load " + xml + " (not an hwloc XML topology?)";
        loaded_ = true;
        return "";
    }
    hwloc_topology_t get() const { return t_; }
    bool loaded() const { return loaded_; }

  private:
    hwloc_topology_t t_ = nullptr;
    bool ok_ = false;
    bool loaded_ = false;
};

unsigned count(hwloc_topology_t t, hwloc_obj_type_t type) {
    int n = hwloc_get_nbobjs_by_type(t, type);
    return n > 0 ? static_cast<unsigned>(n) : 0;
}

void hwloc_gpus(hwloc_topology_t t, NodeReport& r) {
    unsigned index = 0;
    for (hwloc_obj_t obj = nullptr; (obj = hwloc_get_next_pcidev(t, obj));) {
        const auto& pci = obj->attr->pcidev;
        // Class 0x03xx: display controllers (VGA 0x0300, 3D 0x0302). NVSwitch
        // and NVIDIA bridges (0x0680, 0x0604) are not GPUs.
        if (pci.vendor_id != kNvidiaVendor || (pci.class_id >> 8) != 0x03)
            continue;
        GpuReport g;
        g.index = index++;
        char bus[32];
        std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.%x", static_cast<unsigned>(pci.domain), pci.bus, pci.dev,
                      pci.func);
        g.pci_bus_id = bus;
        g.vendor_id = pci.vendor_id;
        g.device_id = pci.device_id;
        g.class_id = pci.class_id;
        g.link_gbps = pci.linkspeed;
        if (const char* m = hwloc_obj_get_info_by_name(obj, "PCIDevice"))
            g.model = m;
        for (hwloc_obj_t os = obj->io_first_child; os; os = os->next_sibling) {
            if (os->type != HWLOC_OBJ_OS_DEVICE || !os->name)
                continue;
            g.os_devices.push_back(os->name);
            if (const char* m = hwloc_obj_get_info_by_name(os, "GPUModel"))
                g.model = m;
        }
        if (hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, obj)) {
            g.cpus = bitmap_list(anc->cpuset);
            if (anc->nodeset) {
                for (int i = hwloc_bitmap_first(anc->nodeset); i >= 0; i = hwloc_bitmap_next(anc->nodeset, i))
                    g.numa_nodes.push_back(static_cast<unsigned>(i));
            }
        }
        r.gpus.push_back(std::move(g));
    }
}

void merge_nvml(NodeReport& r, const NvmlResult& nv) {
    r.nvml_loaded = nv.loaded;
    r.nvml_library = nv.library;
    r.nvml_error = nv.error;
    r.driver_version = nv.driver_version;
    std::vector<bool> used(nv.gpus.size(), false);
    for (auto& g : r.gpus) {
        for (std::size_t i = 0; i < nv.gpus.size(); ++i) {
            if (used[i] || nv.gpus[i].pci_bus_id.empty() || nv.gpus[i].pci_bus_id != g.pci_bus_id)
                continue;
            used[i] = true;
            g.nvml_index = nv.gpus[i].index;
            g.uuid = nv.gpus[i].uuid;
            g.fabric = nv.gpus[i].fabric;
            g.fabric_error = nv.gpus[i].fabric_error;
            if (g.model.empty())
                g.model = nv.gpus[i].name;
            break;
        }
        if (!g.nvml_index && nv.loaded)
            g.fabric_error = "NVML does not list this GPU";
    }
    for (std::size_t i = 0; i < nv.gpus.size(); ++i) {
        if (used[i])
            continue;
        GpuReport g;
        g.index = static_cast<unsigned>(r.gpus.size());
        g.from_nvml_only = true;
        g.pci_bus_id = nv.gpus[i].pci_bus_id;
        g.vendor_id = kNvidiaVendor;
        g.model = nv.gpus[i].name;
        g.nvml_index = nv.gpus[i].index;
        g.uuid = nv.gpus[i].uuid;
        g.fabric = nv.gpus[i].fabric;
        g.fabric_error = nv.gpus[i].fabric_error;
        r.gpus.push_back(std::move(g));
    }
}

std::string gpu_label(const GpuReport& g) {
    return "GPU" + std::to_string(g.index) + (g.pci_bus_id.empty() ? "" : " (" + g.pci_bus_id + ")");
}

std::string hex4(unsigned v) {
    char b[8];
    std::snprintf(b, sizeof b, "%04x", v);
    return b;
}

std::string join_uints(const std::vector<unsigned>& v, const char* sep = ",") {
    std::string out;
    for (unsigned x : v)
        out += (out.empty() ? "" : sep) + std::to_string(x);
    return out;
}

} // namespace

void decide_domain(NodeReport& r) {
    r.domain.reset();
    if (r.gpus.empty()) {
        r.domain_note = "no NVIDIA GPU found: this node is in no NVLink domain";
        return;
    }
    if (!r.nvml_loaded) {
        r.domain_note = "NVML is not available, so the NVLink domain cannot be determined here";
        return;
    }
    std::map<std::pair<std::string, std::uint32_t>, std::vector<unsigned>> domains;
    unsigned unsupported = 0;
    bool trouble = false;
    for (const auto& g : r.gpus) {
        if (!g.fabric) {
            r.problems.push_back(gpu_label(g) + ": " +
                                 (g.fabric_error.empty() ? "no fabric information" : g.fabric_error));
            trouble = true;
            continue;
        }
        const FabricInfo& f = *g.fabric;
        switch (static_cast<FabricState>(f.state)) {
        case FabricState::kNotSupported:
            ++unsupported;
            break;
        case FabricState::kNotStarted:
        case FabricState::kInProgress:
            r.problems.push_back(gpu_label(g) + ": NVLink fabric registration is " + fabric_state_name(f.state) +
                                 "; is the fabric manager (nvidia-fabricmanager or NMX) running? run again when it "
                                 "has completed");
            trouble = true;
            break;
        case FabricState::kCompleted:
            if (f.status != 0) {
                r.problems.push_back(gpu_label(g) + ": NVLink fabric registration failed: " + f.status_text);
                trouble = true;
            } else if (f.cluster_uuid == "00000000-0000-0000-0000-000000000000") {
                r.problems.push_back(gpu_label(g) + ": the fabric reports an all-zero cluster UUID");
                trouble = true;
            } else {
                domains[{f.cluster_uuid, f.clique_id}].push_back(g.index);
            }
            break;
        default:
            r.problems.push_back(gpu_label(g) + ": unknown NVLink fabric state " + std::to_string(f.state));
            trouble = true;
        }
    }
    if (unsupported == r.gpus.size()) {
        r.domain_note = "the GPUs report no NVLink fabric: this node is in no NVLink domain (an ordinary GPU "
                        "server; leave it outside every block)";
        return;
    }
    if (unsupported) {
        r.problems.push_back(std::to_string(unsupported) + " of " + std::to_string(r.gpus.size()) +
                             " GPUs report no NVLink fabric while others do");
        trouble = true;
    }
    if (domains.size() > 1) {
        std::string msg = "the GPUs are in different NVLink domains:";
        for (const auto& [key, idx] : domains)
            msg += std::string(idx.size() == 1 ? " GPU " : " GPUs ") + join_uints(idx) + " in cluster " + key.first +
                   " clique " + std::to_string(key.second) + ";";
        msg.pop_back();
        r.problems.push_back(msg);
        trouble = true;
    }
    if (trouble || domains.empty()) {
        r.domain_note = "the NVLink domain is not known until the problems above are fixed";
        return;
    }
    const auto& [key, idx] = *domains.begin();
    r.domain = NvlinkDomain{key.first, key.second, static_cast<unsigned>(idx.size())};
    r.domain_note.clear();
}

NodeReport discover_local(const LocalOptions& opts) {
    NodeReport r;
    r.generated_at = opts.now ? opts.now : static_cast<std::int64_t>(std::time(nullptr));
    std::string xml = opts.hwloc_xml;
    HwlocTopology topo;
    r.hwloc_error = topo.load(xml);
    if (xml.empty()) {
        const char* env = std::getenv("HWLOC_XMLFILE");
        r.hwloc_source = env && *env ? std::string("xml:") + env + " (HWLOC_XMLFILE)" : "this system";
    } else {
        r.hwloc_source = "xml:" + xml;
    }
    std::string host = opts.hostname;
    if (topo.loaded()) {
        hwloc_topology_t t = topo.get();
        r.packages = count(t, HWLOC_OBJ_PACKAGE);
        r.cores = count(t, HWLOC_OBJ_CORE);
        r.pus = count(t, HWLOC_OBJ_PU);
        r.numa_nodes = count(t, HWLOC_OBJ_NUMANODE);
        hwloc_gpus(t, r);
        if (host.empty())
            if (const char* h = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t), "HostName"))
                host = h;
    } else {
        r.problems.push_back(r.hwloc_error);
    }
    if (host.empty()) {
        char buf[256] = {};
        if (gethostname(buf, sizeof buf - 1) == 0)
            host = buf;
    }
    r.hostname = opts.hostname.empty() ? short_host(host) : host;
    if (opts.use_nvml) {
        merge_nvml(r, query_nvml(nvml_library_path(opts.nvml_library)));
    } else {
        r.nvml_error = "not used (--no-nvml)";
    }
    decide_domain(r);
    return r;
}

std::string report_text(const NodeReport& r) {
    std::ostringstream o;
    o << "node " << r.hostname << "\n";
    o << "  hwloc:   " << r.hwloc_source;
    if (r.hwloc_error.empty())
        o << ": " << r.packages << " package" << (r.packages == 1 ? "" : "s") << ", " << r.cores << " cores, " << r.pus
          << " PUs, " << r.numa_nodes << " NUMA node" << (r.numa_nodes == 1 ? "" : "s");
    o << "\n";
    if (r.nvml_loaded)
        o << "  NVML:    " << r.nvml_library << (r.driver_version.empty() ? "" : ", driver " + r.driver_version)
          << "\n";
    else
        o << "  NVML:    not available: " << r.nvml_error << "\n";
    o << "  GPUs:    " << r.gpus.size() << " NVIDIA\n";
    for (const auto& g : r.gpus) {
        o << "    GPU" << g.index << "  " << (g.pci_bus_id.empty() ? "(bus unknown)" : g.pci_bus_id) << "  "
          << (g.model.empty() ? "NVIDIA GPU" : g.model) << " [" << hex4(g.vendor_id) << ":" << hex4(g.device_id) << "]";
        if (g.from_nvml_only)
            o << "  (seen by NVML only)";
        else
            o << "  NUMA " << (g.numa_nodes.empty() ? "-" : join_uints(g.numa_nodes)) << "  CPUs "
              << (g.cpus.empty() ? "-" : g.cpus);
        if (!g.os_devices.empty()) {
            o << " ";
            for (const auto& d : g.os_devices)
                o << " " << d;
        }
        o << "\n";
        if (g.fabric) {
            const FabricInfo& f = *g.fabric;
            o << "          fabric " << fabric_state_name(f.state);
            if (f.state == static_cast<unsigned>(FabricState::kCompleted))
                o << ", cluster " << f.cluster_uuid << ", clique " << f.clique_id
                  << (f.status ? ", status " + f.status_text : "");
            if (!g.uuid.empty())
                o << "  (" << g.uuid << ")";
            o << "\n";
        } else if (!g.fabric_error.empty()) {
            o << "          fabric unknown: " << g.fabric_error << "\n";
        }
    }
    if (r.domain)
        o << "NVLink domain: cluster " << r.domain->cluster_uuid << ", clique " << r.domain->clique_id << " ("
          << r.domain->gpus << " of " << r.gpus.size() << " GPUs)\n";
    else
        o << "NVLink domain: none: " << r.domain_note << "\n";
    for (const auto& p : r.problems)
        o << "problem: " << p << "\n";
    return o.str();
}

std::string report_json(const NodeReport& r) {
    JsonWriter w;
    w.begin_object();
    w.field("schema", kNodeReportSchema);
    w.field("hostname", r.hostname);
    w.field("generated_at", r.generated_at);
    w.key("hwloc").begin_object();
    w.field("source", r.hwloc_source);
    if (r.hwloc_error.empty()) {
        w.key("error").null();
        w.field("packages", r.packages).field("cores", r.cores).field("pus", r.pus).field("numa_nodes", r.numa_nodes);
    } else {
        w.field("error", r.hwloc_error);
    }
    w.end_object();
    w.key("nvml").begin_object();
    w.field("available", r.nvml_loaded).field("library", r.nvml_library);
    if (r.nvml_loaded)
        w.key("error").null();
    else
        w.field("error", r.nvml_error);
    w.field("driver_version", r.driver_version);
    w.end_object();
    w.key("gpus").begin_array();
    for (const auto& g : r.gpus) {
        w.begin_object();
        w.field("index", g.index).field("pci_bus_id", g.pci_bus_id);
        w.field("vendor_id", "0x" + hex4(g.vendor_id)).field("device_id", "0x" + hex4(g.device_id));
        w.field("model", g.model);
        w.key("numa_nodes").begin_array();
        for (unsigned n : g.numa_nodes)
            w.value(n);
        w.end_array();
        w.field("cpus", g.cpus);
        w.field("pci_link_gbps", g.link_gbps, 2);
        w.key("os_devices").begin_array();
        for (const auto& d : g.os_devices)
            w.value(d);
        w.end_array();
        w.field("seen_by_hwloc", !g.from_nvml_only);
        if (g.nvml_index)
            w.field("nvml_index", *g.nvml_index);
        else
            w.key("nvml_index").null();
        w.field("uuid", g.uuid);
        if (g.fabric) {
            const FabricInfo& f = *g.fabric;
            w.key("fabric").begin_object();
            w.field("state", fabric_state_name(f.state));
            w.field("status", f.status_text);
            w.field("cluster_uuid", f.cluster_uuid).field("clique_id", static_cast<std::uint64_t>(f.clique_id));
            if (f.health_mask)
                w.field("health_mask", static_cast<std::uint64_t>(*f.health_mask));
            w.field("api", f.api);
            w.end_object();
        } else {
            w.key("fabric").null();
        }
        if (!g.fabric_error.empty())
            w.field("fabric_error", g.fabric_error);
        w.end_object();
    }
    w.end_array();
    if (r.domain) {
        w.key("nvlink_domain").begin_object();
        w.field("cluster_uuid", r.domain->cluster_uuid);
        w.field("clique_id", static_cast<std::uint64_t>(r.domain->clique_id));
        w.field("gpus", r.domain->gpus);
        w.end_object();
    } else {
        w.key("nvlink_domain").null();
    }
    w.field("note", r.domain_note);
    w.key("problems").begin_array();
    for (const auto& p : r.problems)
        w.value(p);
    w.end_array();
    w.end_object();
    return w.str() + "\n";
}

} // namespace nvlblock::check
