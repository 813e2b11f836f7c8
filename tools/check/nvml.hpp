// SPDX-License-Identifier: GPL-2.0-or-later
//
// NVML, loaded at run time with dlopen() so that nvlblock-check runs (and says
// so) on a machine without the NVIDIA driver. Only the handful of calls the
// tool needs are declared here, with the layouts of NVIDIA's public nvml.h;
// no NVIDIA header or library is needed to build.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nvlblock::check {

// Library the tool opens unless told otherwise: --nvml-library, or the
// NVLBLOCK_NVML_LIBRARY environment variable (tests point it at a fake).
inline constexpr const char* kDefaultNvmlLibrary = "libnvidia-ml.so.1";
inline constexpr const char* kNvmlLibraryEnv = "NVLBLOCK_NVML_LIBRARY";

// nvmlGpuFabricState_t values.
enum class FabricState { kNotSupported = 0, kNotStarted = 1, kInProgress = 2, kCompleted = 3 };

struct FabricInfo {
    unsigned state = 0;       // FabricState, or an unknown value as reported
    int status = 0;           // nvmlReturn_t; meaningful when completed
    std::string status_text;  // nvmlErrorString(status)
    std::string cluster_uuid; // 8-4-4-4-12 lower-case hex
    std::uint32_t clique_id = 0;
    std::optional<std::uint32_t> health_mask; // from the versioned call only
    std::string api;                          // "nvmlDeviceGetGpuFabricInfoV" or "nvmlDeviceGetGpuFabricInfo"
};

const char* fabric_state_name(unsigned state);

struct NvmlGpu {
    unsigned index = 0;
    std::string name;
    std::string uuid;
    std::string pci_bus_id; // normalised "dddd:bb:dd.f", empty when unknown
    std::optional<FabricInfo> fabric;
    std::string fabric_error; // why there is no fabric info
};

struct NvmlResult {
    bool loaded = false; // the library was opened and initialised
    std::string library;
    std::string error; // why not, or a failing call
    std::string driver_version;
    std::vector<NvmlGpu> gpus;
};

// Opens `library`, initialises NVML, queries every device and shuts NVML
// down again. Never throws: failures are described in the result.
NvmlResult query_nvml(const std::string& library);

// The library to use: `option` if not empty, else $NVLBLOCK_NVML_LIBRARY,
// else kDefaultNvmlLibrary.
std::string nvml_library_path(const std::string& option);

// "00000008:01:00.0" or "0008:01:00.0" -> "0008:01:00.0"; empty if unparsable.
std::string normalize_pci_bus_id(const std::string& id);

// 16 bytes -> "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string format_uuid(const unsigned char bytes[16]);

} // namespace nvlblock::check
