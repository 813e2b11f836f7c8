// SPDX-License-Identifier: GPL-2.0-or-later
//
// The C ABI, reports face (include/nvlblock/reports.h): `scontrol show
// topology`'s data and lines, the status and metrics files' text.
#include "capi/abi_support.hpp"

#include "writers/status_report.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>

using namespace nvlblock;
using namespace nvlblock::capi;

struct nvlb_report_data {
    nvlblock::ClusterReport report;
    std::vector<std::string> block_lines, group_lines;
    std::string summary, recoveries;
};
// The function nvlb_report_data() hides the type's plain name.
using ReportData = struct nvlb_report_data;

extern "C" {

nvlb_report_data_t* nvlb_report_data(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count, int64_t now) {
    if (!p || !node_states)
        return nullptr;
    try {
        auto data = std::make_unique<ReportData>();
        {
            std::lock_guard lock(p->mutex);
            if (node_count != p->planner.topology().node_count())
                return nullptr;
            data->report = make_report(p->planner, states_of(p, node_states, node_count), now);
        }
        for (const auto& b : data->report.blocks)
            data->block_lines.push_back(block_line(b));
        for (const auto& g : data->report.groups)
            data->group_lines.push_back(group_line(g));
        data->summary = summary_line(data->report);
        for (const auto& line : recovery_lines(data->report))
            data->recoveries += (data->recoveries.empty() ? "" : "\n") + line;
        return data.release();
    } catch (...) {
        return nullptr;
    }
}

size_t nvlb_report_block_count(const nvlb_report_data_t* d) {
    return d ? d->report.blocks.size() : 0;
}

nvlb_status_t nvlb_report_block(const nvlb_report_data_t* d, size_t i, nvlb_block_report_t* out) {
    if (!d || !out || i >= d->report.blocks.size())
        return NVLB_E_INVALID;
    const BlockReport& b = d->report.blocks[i];
    out->name = b.name.c_str();
    out->nodes = b.nodes.c_str();
    out->failed_nodes = b.failed_nodes.c_str();
    out->line = d->block_lines[i].c_str();
    out->size = static_cast<uint32_t>(b.size);
    out->slice = static_cast<uint32_t>(b.slice);
    out->spares = static_cast<uint32_t>(b.spares);
    out->lending = b.lending;
    out->reclaim = b.reclaim;
    out->health = static_cast<nvlb_health_t>(b.health);
    out->healthy = static_cast<uint32_t>(b.healthy);
    out->failed = static_cast<uint32_t>(b.failed);
    out->busy = static_cast<uint32_t>(b.busy);
    out->lent = static_cast<uint32_t>(b.lent);
    out->free = static_cast<uint32_t>(b.free);
    out->spares_free = static_cast<uint32_t>(b.spares_free);
    out->spares_used = static_cast<uint32_t>(b.spares_used);
    out->spares_lent = static_cast<uint32_t>(b.spares_lent);
    out->held = static_cast<uint32_t>(b.held);
    out->stranded = static_cast<uint32_t>(b.stranded);
    return NVLB_OK;
}

size_t nvlb_report_group_count(const nvlb_report_data_t* d) {
    return d ? d->report.groups.size() : 0;
}

nvlb_status_t nvlb_report_group(const nvlb_report_data_t* d, size_t i, nvlb_group_report_t* out) {
    if (!d || !out || i >= d->report.groups.size())
        return NVLB_E_INVALID;
    out->name = d->report.groups[i].name.c_str();
    out->level = d->report.groups[i].level.c_str();
    out->line = d->group_lines[i].c_str();
    return NVLB_OK;
}

const char* nvlb_report_summary(const nvlb_report_data_t* d) {
    return d ? d->summary.c_str() : "";
}

const char* nvlb_report_recoveries(const nvlb_report_data_t* d) {
    return d ? d->recoveries.c_str() : "";
}

static_assert(static_cast<int>(BlockHealth::kHealthy) == NVLB_HEALTHY &&
              static_cast<int>(BlockHealth::kDegraded) == NVLB_DEGRADED &&
              static_cast<int>(BlockHealth::kDown) == NVLB_DOWN);

void nvlb_report_data_free(nvlb_report_data_t* d) {
    delete d;
}

char* nvlb_report(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count, int64_t now,
                  nvlb_report_format_t format) {
    if (!p || !node_states)
        return nullptr;
    try {
        std::string text;
        {
            std::lock_guard lock(p->mutex);
            if (node_count != p->planner.topology().node_count())
                return nullptr;
            ClusterReport r = make_report(p->planner, states_of(p, node_states, node_count), now);
            switch (format) {
            case NVLB_REPORT_JSON:
                text = report_json(r);
                break;
            case NVLB_REPORT_PROMETHEUS:
                text = report_prometheus(r);
                break;
            default:
                for (const auto& b : r.blocks)
                    text += block_line(b) + "\n";
                text += summary_line(r) + "\n";
                for (const auto& g : r.groups)
                    text += group_line(g) + "\n";
                for (const auto& line : recovery_lines(r))
                    text += line + "\n";
            }
        }
        char* out = static_cast<char*>(std::malloc(text.size() + 1));
        if (out)
            std::memcpy(out, text.c_str(), text.size() + 1);
        return out;
    } catch (...) {
        return nullptr;
    }
}

uint32_t nvlb_stranded_nodes(nvlb_planner_t* p, const uint8_t* free_mask, size_t node_count) {
    if (!p || !free_mask)
        return 0;
    try {
        std::lock_guard lock(p->mutex);
        if (node_count != p->planner.topology().node_count())
            return 0;
        std::vector<NodeState> s(node_count);
        for (std::size_t i = 0; i < node_count; ++i)
            s[i] = free_mask[i] ? NodeState::kFree : NodeState::kBusy;
        return static_cast<uint32_t>(make_report(p->planner, s, 0).stranded);
    } catch (...) {
        return 0;
    }
}

void nvlb_free(void* ptr) {
    std::free(ptr);
}

} // extern "C"
