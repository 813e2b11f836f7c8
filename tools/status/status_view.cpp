// SPDX-License-Identifier: GPL-2.0-or-later
#include "status_view.hpp"

#include "cli.hpp"

#include "common/diagnostic.hpp"
#include "json_file.hpp"
#include "readers/load_topology.hpp"
#include "writers/status_schema.hpp"
#include "writers/time_text.hpp"

#include <json-c/json.h>

#include <cstdio>
#include <initializer_list>
#include <sstream>
#include <stdexcept>

namespace nvlblock::status {
namespace {

using tool::JsonDoc;
namespace key = status_schema::key;
namespace json = tool::json;

std::string idx(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

// A whole-number member and where it goes.
struct Count {
    const char* key;
    std::int64_t* field;
};

// Reads required whole-number members of `o`, in the order given (the first
// one missing or of the wrong type is the one reported).
void counts(json_object* o, const std::string& path, std::initializer_list<Count> members) {
    for (const Count& m : members)
        *m.field = json::integer(o, m.key, path);
}

void parse_cluster(json_object* root, Status& s) {
    json_object* c = json::required(root, key::cluster, "");
    counts(c, key::cluster,
           {{key::nodes, &s.nodes},
            {key::nodes_in_blocks, &s.nodes_in_blocks},
            {key::healthy, &s.healthy},
            {key::failed, &s.failed},
            {key::busy, &s.busy},
            {key::lent, &s.lent},
            {key::free, &s.free},
            {key::ordinary_free, &s.ordinary_free},
            {key::stranded, &s.stranded}});
    s.fragmentation = json::number(c, key::fragmentation, key::cluster);
}

Pending parse_pending(json_object* p, const std::string& path) {
    Pending x;
    x.job_id = json::integer(p, key::job_id, path);
    x.blocks = json::string(p, key::blocks, path);
    counts(p, path, {{key::lost, &x.lost}, {key::failed_at, &x.failed_at}, {key::fallback_at, &x.fallback_at}});
    x.fallback = json::boolean_or(p, key::fallback, path, false);
    return x;
}

Event parse_event(json_object* e, const std::string& path) {
    Event x;
    counts(e, path, {{key::at, &x.at}, {key::job_id, &x.job_id}});
    x.outcome = json::string(e, key::outcome, path);
    x.blocks = json::string(e, key::blocks, path);
    counts(e, path, {{key::lost, &x.lost}, {key::spares_used, &x.spares_used}, {key::seconds, &x.seconds}});
    return x;
}

void parse_recoveries(json_object* root, Status& s) {
    json_object* r = json::required(root, key::recoveries, "");
    counts(r, key::recoveries,
           {{key::failures, &s.failures},
            {key::in_place, &s.in_place},
            {key::fallbacks, &s.fallbacks},
            {key::abandoned, &s.abandoned}});
    json_object* pending = json::required(r, key::pending, key::recoveries);
    for (std::size_t i = 0, n = json::array_size(pending, "recoveries.pending"); i < n; ++i)
        s.pending.push_back(parse_pending(json::at(pending, i), idx("recoveries.pending", i)));
    if (json_object* recent = json::member(r, key::recent, key::recoveries); !json::is_null(recent))
        for (std::size_t i = 0, n = json::array_size(recent, "recoveries.recent"); i < n; ++i)
            s.recent.push_back(parse_event(json::at(recent, i), idx("recoveries.recent", i)));
}

Block parse_block(json_object* b, const std::string& path) {
    Block x;
    x.name = json::string(b, key::name, path);
    x.nodes = json::string(b, key::nodes, path);
    counts(b, path, {{key::size, &x.size}, {key::slice, &x.slice}, {key::spares, &x.spares}});
    x.lending = json::boolean_or(b, key::lending, path, false);
    x.health = json::string(b, key::health, path);
    counts(b, path, {{key::healthy, &x.healthy}, {key::failed, &x.failed}});
    x.failed_nodes = json::string_or(b, key::failed_nodes, path, "");
    counts(b, path,
           {{key::busy, &x.busy},
            {key::lent, &x.lent},
            {key::free, &x.free},
            {key::spares_free, &x.spares_free},
            {key::spares_used, &x.spares_used},
            {key::spares_lent, &x.spares_lent},
            {key::held, &x.held}});
    x.ordinary_free = json::integer_or(b, key::ordinary_free, path, 0);
    x.stranded = json::integer(b, key::stranded, path);
    return x;
}

Lemon parse_lemon(json_object* l, const std::string& path) {
    Lemon x;
    x.node = json::string(l, key::node, path);
    x.block = json::string_or(l, key::block, path, "");
    counts(l, path, {{key::failures, &x.failures}, {key::last_failure, &x.last_failure}});
    x.in_service = json::boolean_or(l, key::in_service, path, false);
    return x;
}

Status parse_root(json_object* root) {
    Status s;
    const std::string schema = json::string(root, key::schema, "");
    if (schema != kStatusSchema)
        throw tool::JsonShapeError("schema: '" + schema + "' is not " + kStatusSchema);
    s.generated_at = json::integer(root, key::generated_at, "");
    parse_cluster(root, s);
    parse_recoveries(root, s);
    json_object* blocks = json::required(root, key::blocks, "");
    for (std::size_t i = 0, n = json::array_size(blocks, key::blocks); i < n; ++i)
        s.blocks.push_back(parse_block(json::at(blocks, i), idx(key::blocks, i)));
    if (json_object* lemons = json::member(root, key::lemons, ""); !json::is_null(lemons))
        for (std::size_t i = 0, n = json::array_size(lemons, key::lemons); i < n; ++i)
            s.lemons.push_back(parse_lemon(json::at(lemons, i), idx(key::lemons, i)));
    return s;
}

using cli::plural;

// A table with left-aligned text and right-aligned number columns.
class Table {
  public:
    struct Column {
        std::string title;
        bool right;
    };
    explicit Table(std::vector<Column> cols) : cols_(std::move(cols)) {
        for (const auto& c : cols_)
            width_.push_back(c.title.size());
    }
    void row(std::vector<std::string> cells) {
        for (std::size_t i = 0; i < cells.size(); ++i)
            width_[i] = std::max(width_[i], cells[i].size());
        rows_.push_back(std::move(cells));
    }
    std::string str() const {
        std::string out;
        std::vector<std::string> titles;
        for (const auto& c : cols_)
            titles.push_back(c.title);
        line(out, titles);
        for (const auto& r : rows_)
            line(out, r);
        return out;
    }

  private:
    void line(std::string& out, const std::vector<std::string>& cells) const {
        std::string l;
        for (std::size_t i = 0; i < cells.size(); ++i) {
            const std::string& c = cells[i];
            const std::string pad(width_[i] - c.size(), ' ');
            if (i)
                l += "  ";
            l += cols_[i].right ? pad + c : c + pad;
        }
        while (!l.empty() && l.back() == ' ')
            l.pop_back();
        out += l + "\n";
    }
    std::vector<Column> cols_;
    std::vector<std::size_t> width_;
    std::vector<std::vector<std::string>> rows_;
};

std::string num(std::int64_t v) {
    return std::to_string(v);
}

std::string spares_cell(std::int64_t f, std::int64_t u, std::int64_t l) {
    return num(f) + "/" + num(u) + "/" + num(l);
}

std::string health_cell(const std::string& h) {
    if (h == "healthy")
        return h;
    std::string up = h;
    for (auto& c : up)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return up; // DEGRADED, DOWN: stand out in a column of "healthy"
}

std::string percent(double f) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f%%", 100.0 * f);
    return b;
}

} // namespace

std::string format_age(std::int64_t s) {
    char b[64];
    if (s < 0)
        s = 0;
    if (s < 60)
        std::snprintf(b, sizeof b, "%lld s", static_cast<long long>(s));
    else if (s < 3600)
        std::snprintf(b, sizeof b, "%lldm %02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
    else if (s < 86400)
        std::snprintf(b, sizeof b, "%lldh %02lldm", static_cast<long long>(s / 3600),
                      static_cast<long long>(s % 3600 / 60));
    else
        std::snprintf(b, sizeof b, "%lldd %lldh", static_cast<long long>(s / 86400),
                      static_cast<long long>(s % 86400 / 3600));
    return b;
}

// Local time in ISO 8601, as Slurm prints its own (StartTime=2026-12-05T21:40:12),
// so that a line here and one of squeue or slurmctld's log compare at a glance.
std::string format_time(std::int64_t t) {
    return time_text(t, "%Y-%m-%dT%H:%M:%S", TimeZone::kLocal);
}

Status parse_status(const std::string& text, const std::string& label) {
    JsonDoc doc = JsonDoc::parse(text, label);
    try {
        return parse_root(doc.root());
    } catch (const tool::JsonShapeError& e) {
        throw std::runtime_error(label + ": not an nvlblock status file: " + e.what());
    }
}

Status load_status(const std::string& path) {
    return parse_status(read_text_file(path), path);
}

bool is_stale(const Status& s, const RenderOptions& o) {
    return o.now - s.generated_at > o.stale_after;
}

namespace {

void render_header(std::ostream& out, const Status& s, const std::string& path, const RenderOptions& o) {
    const std::int64_t age = o.now - s.generated_at;
    out << "nvlblock status from " << path << "\n";
    out << "generated " << format_time(s.generated_at) << ", "
        << (age < 0 ? format_age(-age) + " in the future (clock skew?)" : format_age(age) + " ago") << "\n";
    if (is_stale(s, o))
        out << "WARNING: stale: older than " << format_age(o.stale_after)
            << "; is slurmctld running and writing it (nvlblock.yaml status.interval)?\n";
    out << "\n";
}

// One row per block (with --problems, only those with failed or held
// nodes or not healthy) and the totals of them all.
void render_blocks(std::ostream& out, const Status& s, const RenderOptions& o) {
    Table t({{"BLOCK", false},
             {"HEALTH", false},
             {"NODES", true},
             {"HEALTHY", true},
             {"FAILED", true},
             {"BUSY", true},
             {"LENT", true},
             {"FREE", true},
             {"SPARES F/U/L", true},
             {"HELD", true},
             {"STRANDED", true},
             {"FAILED NODES", false}});
    std::int64_t sf = 0, su = 0, sl = 0, held = 0, hidden = 0;
    for (const auto& b : s.blocks) {
        sf += b.spares_free;
        su += b.spares_used;
        sl += b.spares_lent;
        held += b.held;
        if (o.problems_only && b.health == "healthy" && b.failed == 0 && b.held == 0) {
            ++hidden;
            continue;
        }
        t.row({b.name, health_cell(b.health), num(b.size), num(b.healthy), num(b.failed), num(b.busy), num(b.lent),
               num(b.free), spares_cell(b.spares_free, b.spares_used, b.spares_lent), num(b.held), num(b.stranded),
               b.failed_nodes.empty() ? "-" : b.failed_nodes});
    }
    t.row({"TOTAL", "", num(s.nodes_in_blocks), num(s.healthy), num(s.failed), num(s.busy), num(s.lent), num(s.free),
           spares_cell(sf, su, sl), num(held), num(s.stranded), ""});
    out << t.str();
    if (hidden)
        out << "(" << plural(hidden, "healthy block") << " without failed or held nodes not shown)\n";
    out << "\n";
}

void render_summary(std::ostream& out, const Status& s) {
    int degraded = 0, down = 0;
    for (const auto& b : s.blocks) {
        degraded += b.health == "degraded";
        down += b.health == "down";
    }
    out << "blocks:        " << plural(static_cast<std::int64_t>(s.blocks.size()), "block") << ": "
        << (static_cast<std::int64_t>(s.blocks.size()) - degraded - down) << " healthy, " << degraded << " degraded, "
        << down << " down\n";
    out << "nodes:         " << s.nodes_in_blocks << " of " << s.nodes << " in blocks";
    if (s.nodes > s.nodes_in_blocks)
        out << " (" << (s.nodes - s.nodes_in_blocks) << " outside every block)";
    out << "\n";
    out << "fragmentation: " << percent(s.fragmentation) << " (" << s.stranded << " stranded of " << s.ordinary_free
        << " free nodes ordinary work can use)\n";
}

void render_recoveries(std::ostream& out, const Status& s, const RenderOptions& o) {
    out << "recoveries:    " << plural(s.failures, "job") << " hit by node failures: " << s.in_place << " in place, "
        << plural(s.fallbacks, "fallback") << ", " << s.abandoned << " abandoned, " << s.pending.size() << " pending\n";
    for (const auto& p : s.pending) {
        out << "  pending JobId=" << p.job_id << " (" << (p.blocks.empty() ? "-" : p.blocks) << "): lost "
            << plural(p.lost, "node") << ", failed " << format_age(o.now - p.failed_at) << " ago, ";
        if (p.fallback)
            out << "fallback: may start on any block";
        else if (p.fallback_at <= o.now)
            out << "fallback due now";
        else
            out << "fallback in " << format_age(p.fallback_at - o.now);
        out << "\n";
    }
    for (const auto& l : s.lemons)
        out << "lemon:         " << l.node << " (" << (l.block.empty() ? "-" : l.block)
            << "): " << plural(l.failures, "failure") << " under jobs, the last " << format_age(o.now - l.last_failure)
            << " ago; " << (l.in_service ? "in service, taken last" : "out of service")
            << " (nvlblock-status --clear-lemon " << l.node << " forgets it)\n";
}

// The last o.recent recovery outcomes, oldest first.
void render_recent(std::ostream& out, const Status& s, const RenderOptions& o) {
    if (s.recent.empty() || o.recent == 0)
        return;
    out << "recent:\n";
    const std::size_t first = s.recent.size() > o.recent ? s.recent.size() - o.recent : 0;
    for (std::size_t i = first; i < s.recent.size(); ++i) {
        const Event& e = s.recent[i];
        out << "  " << format_time(e.at) << "  JobId=" << e.job_id;
        const std::string where = e.blocks.empty() ? "-" : e.blocks;
        if (e.outcome == "in_place")
            out << " restarted in place on " << where << " after " << format_age(e.seconds) << ": lost "
                << plural(e.lost, "node") << ", " << plural(e.spares_used, "spare") << " used\n";
        else if (e.outcome == "elsewhere")
            out << " restarted elsewhere (fallback) after " << format_age(e.seconds) << ": lost "
                << plural(e.lost, "node") << " on " << where << "\n";
        else if (e.outcome == "abandoned")
            out << " left the queue before restarting: lost " << plural(e.lost, "node") << " on " << where << "\n";
        else
            out << " " << e.outcome << " (" << where << ")\n";
    }
}

} // namespace

std::string render(const Status& s, const std::string& path, const RenderOptions& o) {
    std::ostringstream out;
    render_header(out, s, path, o);
    render_blocks(out, s, o);
    render_summary(out, s);
    render_recoveries(out, s, o);
    render_recent(out, s, o);
    return out.str();
}

} // namespace nvlblock::status
