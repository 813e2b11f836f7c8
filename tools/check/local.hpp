// SPDX-License-Identifier: GPL-2.0-or-later
//
// `nvlblock-check --local`: what this compute node is. hwloc finds the NVIDIA
// GPUs (PCI vendor 0x10de, display or 3D controller class) and where they sit
// (NUMA nodes, CPUs, PCI bus); NVML, where the driver is present, adds each
// GPU's fabric information (cluster UUID and clique id), which says which
// NVLink domain the node belongs to. The per-node JSON report is what
// `nvlblock-check --generate` turns into a topology file.
#pragma once

#include "nvml.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvlblock::check {

inline constexpr const char* kNodeReportSchema = "nvlblock-node/1";

struct GpuReport {
    unsigned index = 0;     // hwloc (PCI) order
    std::string pci_bus_id; // "0008:01:00.0"
    unsigned vendor_id = 0, device_id = 0, class_id = 0;
    std::string model;
    std::vector<unsigned> numa_nodes;    // OS indices of the NUMA nodes local to the GPU
    std::string cpus;                    // CPUs local to the GPU, as a list ("0-71")
    double link_gbps = 0.0;              // PCI link speed in GB/s as hwloc reports it (0: unknown)
    std::vector<std::string> os_devices; // "cuda0", "nvml0", "card1", ...
    bool from_nvml_only = false;         // NVML saw it but hwloc did not
    // NVML
    std::optional<unsigned> nvml_index;
    std::string uuid;
    std::optional<FabricInfo> fabric;
    std::string fabric_error;
};

struct NvlinkDomain {
    std::string cluster_uuid;
    std::uint32_t clique_id = 0;
    unsigned gpus = 0;
};

struct NodeReport {
    std::string hostname;
    std::int64_t generated_at = 0;
    std::string hwloc_source; // "this system" or "xml:PATH"
    std::string hwloc_error;  // hwloc could not load a topology
    unsigned packages = 0, cores = 0, pus = 0, numa_nodes = 0;
    std::vector<GpuReport> gpus;
    bool nvml_loaded = false;
    std::string nvml_library, nvml_error, driver_version;
    std::optional<NvlinkDomain> domain;
    std::string domain_note;           // why there is no domain (or a remark)
    std::vector<std::string> problems; // things an operator must fix; exit status 1
};

struct LocalOptions {
    std::string hwloc_xml;    // empty: this system (or $HWLOC_XMLFILE)
    std::string nvml_library; // empty: nvml_library_path("")
    bool use_nvml = true;
    std::string hostname; // empty: hwloc's HostName, else gethostname()
    std::int64_t now = 0; // 0: time(nullptr)
};

NodeReport discover_local(const LocalOptions& opts);

// Fills domain/domain_note/problems from the GPUs' fabric information.
void decide_domain(NodeReport& r);

std::string report_text(const NodeReport& r);
std::string report_json(const NodeReport& r);

} // namespace nvlblock::check
