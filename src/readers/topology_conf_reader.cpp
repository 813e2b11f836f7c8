// SPDX-License-Identifier: GPL-2.0-or-later
#include "readers/topology_conf_reader.hpp"
#include "common/warning_names.hpp"

#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"
#include "readers/slurm_syntax.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>

namespace nvlblock {
namespace {

using namespace slurm_syntax;

// topology.conf keys are words of letters, digits, '_' and '.'; a value is
// never empty, and a quoted one ends at white space.
bool conf_key_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}
constexpr PairRules kTopologyConfPairs{conf_key_char, true, true};

// One pair from the front of `rest`; advances it. False when `rest` does not
// start with a Key=Value pair.
bool next_pair(std::string_view& rest, KeyValue& kv) {
    return slurm_syntax::next_pair(rest, kv, kTopologyConfPairs) == PairScan::kPair;
}

class ConfReader {
  public:
    TopologySpec read(const std::string& text, const std::string& label, const std::string& base_dir,
                      int slurm_release) {
        spec_.source = label;
        spec_.policy.slurm_release = slurm_release;
        spec_.format = SourceFormat::kTopologyConf;
        parse(text, label, base_dir, 0);
        finish(label);
        problems_.throw_if_any();
        return std::move(spec_);
    }

  private:
    void parse(const std::string& text, const std::string& label, const std::string& base_dir, int depth) {
        for (const LogicalLine& l : logical_lines(text)) {
            if (l.text.empty() || only_space(l.text))
                continue;
            SourceLocation where{label, l.line};
            std::string_view rest = skip_space(l.text);
            if (auto target = include_target(rest); target && !target->empty()) {
                include(std::string(*target), where, base_dir, depth);
                continue;
            }
            KeyValue kv;
            if (!next_pair(rest, kv)) {
                problems_.add(where, "cannot parse '" + std::string(rest) + "': expected Key=Value");
                continue;
            }
            const std::string key = lower(kv.key);
            if (key == "blockname") {
                block(kv.value, rest, where);
            } else if (key == "blocksizes") {
                if (!only_space(rest))
                    problems_.add(where, "unexpected text after BlockSizes: '" + trim(rest) + "'");
                block_sizes_text_ = kv.value;
                block_sizes_where_ = where;
            } else if (key == "switchname") {
                problems_.add(where, "unknown key 'SwitchName': that is topology/tree syntax; "
                                     "nvlblock reads the block syntax (BlockName=, BlockSizes=)");
            } else {
                problems_.add(where, "unknown key '" + kv.key + "' (known: BlockName, BlockSizes, Nodes)");
            }
        }
    }

    void include(std::string path, const SourceLocation& where, const std::string& base_dir, int depth) {
        path = trim(path);
        if (depth >= kMaxIncludeDepth) {
            problems_.add(where, "Include nested more than " + std::to_string(kMaxIncludeDepth) + " deep");
            return;
        }
        std::string full = path_in(base_dir, path);
        try {
            std::string text = read_text_file(full);
            parse(text, full, dirname_of(full), depth + 1);
        } catch (const ConfigError& e) {
            problems_.add(where, "Include " + path + ": " + e.first().message);
        }
    }

    void block(const std::string& name, std::string_view rest, const SourceLocation& where) {
        BlockSpec b;
        b.name = name;
        b.where = where;
        bool have_nodes = false;
        KeyValue kv;
        while (next_pair(rest, kv)) {
            if (lower(kv.key) == "nodes") {
                b.nodes_expr = kv.value;
                have_nodes = true;
            } else {
                problems_.add(where, "unknown key '" + kv.key + "' in BlockName=" + name + " (known: Nodes)");
                return;
            }
        }
        if (!only_space(rest)) {
            problems_.add(where, "cannot parse '" + trim(rest) + "' in BlockName=" + name);
            return;
        }
        if (!have_nodes) {
            problems_.add(where, "block '" + name + "' has no Nodes=");
            return;
        }
        try {
            b.node_names = hostlist::expand(b.nodes_expr);
        } catch (const hostlist::HostlistError& e) {
            problems_.add(where, "block '" + name + "': " + e.what());
            return;
        }
        spec_.blocks.push_back(std::move(b));
    }

    // Slurm's rules: the first size is the base block size; every later size
    // is the base times a power of two, at most 2^15; sizes must be positive.
    // Empty items ("18,,36", a trailing comma) are skipped, as Slurm's
    // strtok_r() does; a list with no size at all is invalid.
    void parse_block_sizes() {
        std::size_t pos = 0;
        const std::string& s = block_sizes_text_;
        while (pos <= s.size()) {
            std::size_t comma = s.find(',', pos);
            std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
            if (item.empty() && !(spec_.block_sizes.empty() && comma == std::string::npos)) {
                if (comma == std::string::npos)
                    break;
                pos = comma + 1;
                continue;
            }
            std::uint32_t v = 0;
            int level = 0;
            auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
            if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v == 0) {
                problems_.add(block_sizes_where_,
                              "invalid BlockSizes value '" + item + "': sizes are positive node counts");
                return;
            }
            if (!spec_.block_sizes.empty()) {
                const std::uint32_t base = spec_.block_sizes.front();
                const std::uint32_t ratio = v / base;
                const bool power_of_two = v % base == 0 && ratio != 0 && (ratio & (ratio - 1)) == 0;
                if (!power_of_two) {
                    problems_.add(block_sizes_where_, "invalid BlockSizes value '" + item +
                                                          "': each size must be the base size " + std::to_string(base) +
                                                          " times a power of two");
                    return;
                }
                while ((1u << level) < ratio && level <= kMaxBlockLevel)
                    ++level;
                if (level > kMaxBlockLevel) {
                    problems_.add(block_sizes_where_,
                                  "invalid BlockSizes value '" + item + "': more than 2^15 times the base size");
                    return;
                }
            }
            spec_.block_sizes.push_back(v);
            spec_.hierarchy.level_mask |= 1u << level;
            if (comma == std::string::npos)
                break;
            pos = comma + 1;
        }
    }

    void finish(const std::string& label) {
        if (block_sizes_where_.line)
            parse_block_sizes();
        if (spec_.blocks.empty()) {
            spec_.warnings.push_back({{label, 0},
                                      "no blocks configured; every node is scheduled without topology",
                                      warning_name::kNoBlocks});
            return;
        }
        // The base block size: BlockSizes' first value, else the first block's size.
        const std::size_t base =
            spec_.block_sizes.empty() ? spec_.blocks.front().node_names.size() : spec_.block_sizes.front();
        // Slurm's levels: those BlockSizes lists, else 1x to 16x the base.
        spec_.hierarchy.base_nodes = static_cast<std::uint32_t>(base);
        if (spec_.block_sizes.empty())
            spec_.hierarchy.level_mask = kDefaultBlockLevelMask;
        spec_.hierarchy.where = block_sizes_where_.line ? block_sizes_where_ : SourceLocation{label, 0};
        // 24.11 refuses to start with a block smaller than the base; 25.05
        // and later accept it as a base block with fewer nodes.
        const bool small_blocks_ok = spec_.policy.slurm_release >= 2505;
        for (auto& b : spec_.blocks) {
            if (small_blocks_ok && !b.node_names.empty() && b.node_names.size() < base)
                b.slice = static_cast<int>(b.node_names.size()); // its slice is what it has
            if (!small_blocks_ok && !b.node_names.empty() && b.node_names.size() < base)
                problems_.add(b.where,
                              "block '" + b.name + "' has " + std::to_string(b.node_names.size()) +
                                  " nodes, fewer than the base block size " + std::to_string(base) +
                                  (spec_.block_sizes.empty()
                                       ? " (the size of the first block; set BlockSizes= to allow smaller blocks)"
                                       : " (BlockSizes)"));
        }
        // Plain topology/block behaviour: slices of the base size, no spares.
        spec_.defaults.slice = static_cast<int>(base);
        spec_.defaults.spares = 0;
        spec_.defaults.lending = false;
    }

    TopologySpec spec_;
    Diagnostics problems_;
    std::string block_sizes_text_;
    SourceLocation block_sizes_where_;
};

} // namespace

TopologySpec read_topology_conf(const std::string& text, const std::string& label, const std::string& base_dir,
                                int slurm_release) {
    return ConfReader().read(text, label, base_dir, slurm_release);
}

} // namespace nvlblock
