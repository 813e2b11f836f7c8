// SPDX-License-Identifier: GPL-2.0-or-later
//
// A fake libnvidia-ml for the nvlblock-check tests: exports the handful of
// NVML calls the tool makes and answers from environment variables, so that
// tests can play any GPU fabric situation without a GPU.
//
//   FAKE_NVML_INIT_RC           nvmlInit_v2 return code (default 0; 9 = driver not loaded)
//   FAKE_NVML_GPUS              device count (default 4)
//   FAKE_NVML_BUS_IDS           comma list of PCI bus ids, NVML style ("00000008:01:00.0")
//   FAKE_NVML_NAME              device name (default "NVIDIA GB200")
//   FAKE_NVML_FABRIC_RC         return code of the fabric calls (default 0; 3 = not supported)
//   FAKE_NVML_STATE             not_supported|not_started|in_progress|completed (default completed)
//   FAKE_NVML_STATUS            fabric status code when completed (default 0)
//   FAKE_NVML_CLUSTER_UUID      cluster UUID, 32 hex digits, dashes allowed
//   FAKE_NVML_CLIQUE            clique id (default 32766)
//   FAKE_NVML_HEALTH_MASK       health mask of the versioned call (default 0)
// Per device, FAKE_NVML_STATE_<i>, FAKE_NVML_CLUSTER_UUID_<i> and
// FAKE_NVML_CLIQUE_<i> override the above. Built twice: with the versioned
// nvmlDeviceGetGpuFabricInfoV and, with FAKE_NVML_LEGACY_ONLY, without it (an
// R535-R545 driver).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;

typedef struct {
    unsigned char clusterUuid[16];
    nvmlReturn_t status;
    unsigned int cliqueId;
    unsigned char state;
} nvmlGpuFabricInfo_t;

typedef struct {
    unsigned int version;
    unsigned char clusterUuid[16];
    nvmlReturn_t status;
    unsigned int cliqueId;
    unsigned char state;
    unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;

typedef struct {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

#define MAX_GPUS 64
static struct nvmlDevice_st { int index; } devices[MAX_GPUS];
static int initialized;

static const char* env(const char* name, int index) {
    char key[64];

    if (index >= 0) {
        snprintf(key, sizeof(key), "%s_%d", name, index);
        if (getenv(key))
            return getenv(key);
    }
    return getenv(name);
}

static long env_long(const char* name, int index, long fallback) {
    const char* v = env(name, index);

    return v && *v ? strtol(v, NULL, 0) : fallback;
}

static int gpu_count(void) {
    long n = env_long("FAKE_NVML_GPUS", -1, 4);

    return n < 0 ? 0 : (n > MAX_GPUS ? MAX_GPUS : (int)n);
}

static int index_of(nvmlDevice_t dev) {
    if (!dev || dev < devices || dev >= devices + gpu_count())
        return -1;
    return dev->index;
}

EXPORT const char* nvmlErrorString(nvmlReturn_t rc) {
    switch (rc) {
    case 0:
        return "Success";
    case 1:
        return "Uninitialized";
    case 3:
        return "Not Supported";
    case 9:
        return "Driver Not Loaded";
    case 25:
        return "Argument Version Mismatch";
    default:
        return "Unknown Error";
    }
}

EXPORT nvmlReturn_t nvmlInit_v2(void) {
    nvmlReturn_t rc = (nvmlReturn_t)env_long("FAKE_NVML_INIT_RC", -1, 0);

    if (rc == 0)
        initialized = 1;
    return rc;
}

EXPORT nvmlReturn_t nvmlShutdown(void) {
    if (!initialized)
        return 1;
    initialized = 0;
    return 0;
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* buf, unsigned int len) {
    if (!initialized)
        return 1;
    snprintf(buf, len, "%s", "570.124.06");
    return 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
    if (!initialized)
        return 1;
    *count = (unsigned int)gpu_count();
    return 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* dev) {
    if (!initialized)
        return 1;
    if ((int)i >= gpu_count())
        return 2;
    devices[i].index = (int)i;
    *dev = &devices[i];
    return 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char* buf, unsigned int len) {
    if (index_of(dev) < 0)
        return 2;
    snprintf(buf, len, "%s", env("FAKE_NVML_NAME", -1) ? env("FAKE_NVML_NAME", -1) : "NVIDIA GB200");
    return 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char* buf, unsigned int len) {
    int i = index_of(dev);

    if (i < 0)
        return 2;
    snprintf(buf, len, "GPU-00000000-0000-0000-0000-0000000000%02x", i);
    return 0;
}

/* The i-th item of the comma list FAKE_NVML_BUS_IDS, or a made-up id. */
static void bus_id(int i, char* out, size_t len) {
    const char* list = env("FAKE_NVML_BUS_IDS", -1);

    snprintf(out, len, "00000000:%02x:00.0", 0x10 + i);
    for (int k = 0; list && *list; k++) {
        const char* comma = strchr(list, ',');
        size_t n = comma ? (size_t)(comma - list) : strlen(list);

        if (k == i) {
            snprintf(out, len, "%.*s", (int)n, list);
            return;
        }
        list = comma ? comma + 1 : list + n;
    }
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t* pci) {
    int i = index_of(dev);
    char id[32];

    if (i < 0)
        return 2;
    memset(pci, 0, sizeof(*pci));
    bus_id(i, id, sizeof(id));
    snprintf(pci->busId, sizeof(pci->busId), "%s", id);
    if (sscanf(id, "%x:%x:%x", &pci->domain, &pci->bus, &pci->device) != 3)
        return 999;
    pci->pciDeviceId = 0x294110de;
    return 0;
}

static unsigned char state_of(int i) {
    const char* s = env("FAKE_NVML_STATE", i);

    if (!s || !strcmp(s, "completed"))
        return 3;
    if (!strcmp(s, "not_supported"))
        return 0;
    if (!strcmp(s, "not_started"))
        return 1;
    if (!strcmp(s, "in_progress"))
        return 2;
    return (unsigned char)strtol(s, NULL, 0);
}

static void uuid_of(int i, unsigned char out[16]) {
    const char* s = env("FAKE_NVML_CLUSTER_UUID", i);
    int n = 0;

    if (!s)
        s = "6f1c2a9b-0d3e-4b5a-9c8d-7e6f5a4b3c2d";
    memset(out, 0, 16);
    for (; *s && n < 32; s++) {
        unsigned v;
        char c = *s;

        if (c == '-')
            continue;
        if (c >= '0' && c <= '9')
            v = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v = (unsigned)(c - 'A' + 10);
        else
            break;
        out[n / 2] |= (unsigned char)(n % 2 ? v : v << 4);
        n++;
    }
}

static nvmlReturn_t fabric_rc(nvmlDevice_t dev, int* i) {
    *i = index_of(dev);
    if (!initialized)
        return 1;
    if (*i < 0)
        return 2;
    return (nvmlReturn_t)env_long("FAKE_NVML_FABRIC_RC", -1, 0);
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t dev, nvmlGpuFabricInfo_t* info) {
    int i;
    nvmlReturn_t rc = fabric_rc(dev, &i);

    if (rc)
        return rc;
    memset(info, 0, sizeof(*info));
    uuid_of(i, info->clusterUuid);
    info->status = (nvmlReturn_t)env_long("FAKE_NVML_STATUS", i, 0);
    info->cliqueId = (unsigned int)env_long("FAKE_NVML_CLIQUE", i, 32766);
    info->state = state_of(i);
    return 0;
}

#ifndef FAKE_NVML_LEGACY_ONLY
EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t dev, nvmlGpuFabricInfo_v2_t* info) {
    int i;
    nvmlReturn_t rc = fabric_rc(dev, &i);

    if (rc)
        return rc;
    /* nvmlGpuFabricInfo_v2 = sizeof(nvmlGpuFabricInfo_v2_t) | 2 << 24 */
    if (info->version != (0x24u | (2u << 24)))
        return 25;
    memset(info->clusterUuid, 0, sizeof(info->clusterUuid));
    uuid_of(i, info->clusterUuid);
    info->status = (nvmlReturn_t)env_long("FAKE_NVML_STATUS", i, 0);
    info->cliqueId = (unsigned int)env_long("FAKE_NVML_CLIQUE", i, 32766);
    info->state = state_of(i);
    info->healthMask = (unsigned int)env_long("FAKE_NVML_HEALTH_MASK", i, 0);
    return 0;
}
#endif
