// SPDX-License-Identifier: GPL-2.0-or-later
#include "nvml.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nvlblock::check {
namespace {

// ---- The subset of nvml.h we use (layouts as in NVIDIA's public header) ----

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;

constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
constexpr nvmlReturn_t NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25;

constexpr int NVML_GPU_FABRIC_UUID_LEN = 16;
constexpr int NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
constexpr int NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;
constexpr int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
constexpr int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
constexpr int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;

using nvmlGpuFabricState_t = unsigned char;

struct nvmlGpuFabricInfo_t {
    unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
    nvmlReturn_t status;
    unsigned int cliqueId;
    nvmlGpuFabricState_t state;
};

struct nvmlGpuFabricInfo_v2_t {
    unsigned int version;
    unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
    nvmlReturn_t status;
    unsigned int cliqueId;
    nvmlGpuFabricState_t state;
    unsigned int healthMask;
};
// NVML_STRUCT_VERSION(GpuFabricInfo, 2)
constexpr unsigned int nvmlGpuFabricInfo_v2 = static_cast<unsigned int>(sizeof(nvmlGpuFabricInfo_v2_t)) | (2u << 24);
static_assert(sizeof(nvmlGpuFabricInfo_v2_t) == 36, "nvmlGpuFabricInfo_v2_t layout");

struct nvmlPciInfo_t {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
};

struct Api {
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    const char* (*error_string)(nvmlReturn_t) = nullptr;
    nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
    nvmlReturn_t (*count)(unsigned*) = nullptr;
    nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
    nvmlReturn_t (*fabric_v)(nvmlDevice_t, nvmlGpuFabricInfo_v2_t*) = nullptr;
    nvmlReturn_t (*fabric)(nvmlDevice_t, nvmlGpuFabricInfo_t*) = nullptr;
};

class Library {
  public:
    explicit Library(const std::string& path) : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        if (!handle_) {
            const char* e = dlerror();
            error_ = e ? e : "dlopen failed";
        }
    }
    ~Library() {
        if (handle_)
            dlclose(handle_);
    }
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;

    bool ok() const { return handle_ != nullptr; }
    const std::string& error() const { return error_; }

    template <typename F>
    void bind(F& fn, const char* symbol) {
        fn = reinterpret_cast<F>(dlsym(handle_, symbol));
    }

  private:
    void* handle_;
    std::string error_;
};

std::string errstr(const Api& api, nvmlReturn_t rc) {
    const char* s = api.error_string ? api.error_string(rc) : nullptr;
    return s ? std::string(s) : "NVML error " + std::to_string(rc);
}

// What both generations of the fabric structure report.
template <class Info>
FabricInfo fabric_of(const Api& api, const Info& info, const char* call) {
    FabricInfo f;
    f.api = call;
    f.state = info.state;
    f.status = info.status;
    f.status_text = errstr(api, info.status);
    f.cluster_uuid = format_uuid(info.clusterUuid);
    f.clique_id = info.cliqueId;
    return f;
}

void query_fabric(const Api& api, nvmlDevice_t dev, NvmlGpu& gpu) {
    nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (api.fabric_v) {
        nvmlGpuFabricInfo_v2_t v2{};
        v2.version = nvmlGpuFabricInfo_v2;
        rc = api.fabric_v(dev, &v2);
        if (rc == NVML_SUCCESS) {
            FabricInfo f = fabric_of(api, v2, "nvmlDeviceGetGpuFabricInfoV");
            f.health_mask = v2.healthMask;
            gpu.fabric = f;
            return;
        }
    }
    // The unversioned call (drivers before the versioned one, R535-R545),
    // also tried when the versioned one rejects our structure version.
    if (api.fabric && (rc == NVML_ERROR_FUNCTION_NOT_FOUND || rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH)) {
        nvmlGpuFabricInfo_t v1{};
        rc = api.fabric(dev, &v1);
        if (rc == NVML_SUCCESS) {
            gpu.fabric = fabric_of(api, v1, "nvmlDeviceGetGpuFabricInfo");
            return;
        }
    }
    if (rc == NVML_ERROR_NOT_SUPPORTED) {
        // No NVLink fabric behind this GPU (an 8-GPU server, a PCIe card).
        FabricInfo f;
        f.state = static_cast<unsigned>(FabricState::kNotSupported);
        f.status = rc;
        f.status_text = errstr(api, rc);
        gpu.fabric = f;
        return;
    }
    gpu.fabric_error = rc == NVML_ERROR_FUNCTION_NOT_FOUND && !api.fabric_v && !api.fabric
                           ? "this NVML has no nvmlDeviceGetGpuFabricInfo (driver older than R535)"
                           : "fabric query failed: " + errstr(api, rc);
}

} // namespace

const char* fabric_state_name(unsigned state) {
    switch (state) {
    case 0:
        return "not_supported";
    case 1:
        return "not_started";
    case 2:
        return "in_progress";
    case 3:
        return "completed";
    default:
        return "unknown";
    }
}

std::string format_uuid(const unsigned char b[16]) {
    char out[37];
    std::snprintf(out, sizeof out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                  b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return out;
}

std::string normalize_pci_bus_id(const std::string& id) {
    unsigned domain = 0, bus = 0, dev = 0, fn = 0;
    char tail = 0;
    if (std::sscanf(id.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) != 4)
        return "";
    char out[32];
    std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
    return out;
}

std::string nvml_library_path(const std::string& option) {
    if (!option.empty())
        return option;
    const char* env = std::getenv(kNvmlLibraryEnv);
    return env && *env ? env : kDefaultNvmlLibrary;
}

NvmlResult query_nvml(const std::string& path) {
    NvmlResult r;
    r.library = path;
    Library lib(path);
    if (!lib.ok()) {
        r.error = "cannot load " + path + " (" + lib.error() + "); is the NVIDIA driver installed?";
        return r;
    }
    Api api;
    lib.bind(api.init, "nvmlInit_v2");
    lib.bind(api.shutdown, "nvmlShutdown");
    lib.bind(api.error_string, "nvmlErrorString");
    lib.bind(api.driver_version, "nvmlSystemGetDriverVersion");
    lib.bind(api.count, "nvmlDeviceGetCount_v2");
    lib.bind(api.handle, "nvmlDeviceGetHandleByIndex_v2");
    lib.bind(api.uuid, "nvmlDeviceGetUUID");
    lib.bind(api.name, "nvmlDeviceGetName");
    lib.bind(api.pci, "nvmlDeviceGetPciInfo_v3");
    lib.bind(api.fabric_v, "nvmlDeviceGetGpuFabricInfoV");
    lib.bind(api.fabric, "nvmlDeviceGetGpuFabricInfo");
    if (!api.init || !api.shutdown || !api.count || !api.handle) {
        r.error = path + " lacks nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2 or "
                         "nvmlDeviceGetHandleByIndex_v2; is it NVML?";
        return r;
    }
    if (nvmlReturn_t rc = api.init(); rc != NVML_SUCCESS) {
        r.error = "nvmlInit failed: " + errstr(api, rc);
        return r;
    }
    r.loaded = true;
    if (api.driver_version) {
        char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
        if (api.driver_version(buf, sizeof buf) == NVML_SUCCESS)
            r.driver_version = buf;
    }
    unsigned count = 0;
    if (nvmlReturn_t rc = api.count(&count); rc != NVML_SUCCESS) {
        r.error = "nvmlDeviceGetCount failed: " + errstr(api, rc);
        api.shutdown();
        return r;
    }
    for (unsigned i = 0; i < count; ++i) {
        NvmlGpu gpu;
        gpu.index = i;
        nvmlDevice_t dev = nullptr;
        if (nvmlReturn_t rc = api.handle(i, &dev); rc != NVML_SUCCESS) {
            gpu.fabric_error = "nvmlDeviceGetHandleByIndex failed: " + errstr(api, rc);
            r.gpus.push_back(std::move(gpu));
            continue;
        }
        if (api.name) {
            char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
            if (api.name(dev, buf, sizeof buf) == NVML_SUCCESS)
                gpu.name = buf;
        }
        if (api.uuid) {
            char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
            if (api.uuid(dev, buf, sizeof buf) == NVML_SUCCESS)
                gpu.uuid = buf;
        }
        if (api.pci) {
            nvmlPciInfo_t pci{};
            if (api.pci(dev, &pci) == NVML_SUCCESS) {
                char buf[32];
                std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", pci.domain, pci.bus, pci.device);
                gpu.pci_bus_id = buf;
            }
        }
        query_fabric(api, dev, gpu);
        r.gpus.push_back(std::move(gpu));
    }
    api.shutdown();
    return r;
}

} // namespace nvlblock::check
