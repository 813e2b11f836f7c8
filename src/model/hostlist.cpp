// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/hostlist.hpp"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>

namespace nvlblock::hostlist {
namespace {

[[noreturn]] void fail(std::string_view expr, const std::string& what) {
    throw HostlistError("bad hostlist '" + std::string(expr) + "': " + what);
}

struct NumberToken {
    std::uint64_t value = 0;
    std::size_t width = 0; // digits as written; leading zeros set the padding
};

NumberToken parse_number(std::string_view expr, std::string_view text) {
    if (text.empty())
        fail(expr, "empty number in range");
    if (text.size() > 18)
        fail(expr, "number '" + std::string(text) + "' is too long");
    for (char c : text)
        if (!std::isdigit(static_cast<unsigned char>(c)))
            fail(expr, "'" + std::string(text) + "' is not a number or range");
    NumberToken t;
    std::from_chars(text.data(), text.data() + text.size(), t.value);
    t.width = text.size();
    return t;
}

std::string pad(std::uint64_t v, std::size_t width) {
    std::string s = std::to_string(v);
    if (s.size() < width)
        s.insert(0, width - s.size(), '0');
    return s;
}

// "001-016,018" -> {"001", ..., "016", "018"}
std::vector<std::string> expand_bracket(std::string_view expr, std::string_view body) {
    std::vector<std::string> out;
    if (body.empty())
        fail(expr, "empty brackets");
    std::size_t pos = 0;
    while (pos <= body.size()) {
        std::size_t comma = body.find(',', pos);
        std::string_view item =
            body.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        if (item.empty())
            fail(expr, "empty item in brackets");
        std::size_t dash = item.find('-');
        if (dash == std::string_view::npos) {
            NumberToken n = parse_number(expr, item);
            out.push_back(pad(n.value, n.width));
        } else {
            NumberToken lo = parse_number(expr, item.substr(0, dash));
            NumberToken hi = parse_number(expr, item.substr(dash + 1));
            if (hi.value < lo.value)
                fail(expr, "range " + std::string(item) + " runs backwards");
            if (hi.value - lo.value + 1 > kMaxHosts)
                fail(expr, "range " + std::string(item) + " is too large");
            for (std::uint64_t v = lo.value; v <= hi.value; ++v)
                out.push_back(pad(v, lo.width));
        }
        if (out.size() > kMaxHosts)
            fail(expr, "expands to too many hosts");
        if (comma == std::string_view::npos)
            break;
        pos = comma + 1;
    }
    return out;
}

// One host pattern without top-level commas: "rack[1-2]-n[01-18]".
void expand_pattern(std::string_view expr, std::string_view pattern, std::vector<std::string>& out) {
    std::vector<std::string> partial{""};
    std::size_t pos = 0;
    while (pos < pattern.size()) {
        std::size_t open = pattern.find('[', pos);
        std::string_view literal =
            pattern.substr(pos, open == std::string_view::npos ? std::string_view::npos : open - pos);
        if (literal.find(']') != std::string_view::npos)
            fail(expr, "']' without '['");
        for (auto& p : partial)
            p.append(literal);
        if (open == std::string_view::npos)
            break;
        std::size_t close = pattern.find(']', open);
        if (close == std::string_view::npos)
            fail(expr, "missing ']'");
        std::string_view body = pattern.substr(open + 1, close - open - 1);
        if (body.find('[') != std::string_view::npos)
            fail(expr, "nested '['");
        std::vector<std::string> suffixes = expand_bracket(expr, body);
        if (partial.size() * suffixes.size() > kMaxHosts)
            fail(expr, "expands to too many hosts");
        std::vector<std::string> next;
        next.reserve(partial.size() * suffixes.size());
        for (const auto& p : partial)
            for (const auto& s : suffixes)
                next.push_back(p + s);
        partial = std::move(next);
        pos = close + 1;
    }
    for (auto& p : partial) {
        if (p.empty())
            fail(expr, "empty host name");
        for (char c : p)
            if (std::isspace(static_cast<unsigned char>(c)))
                fail(expr, "white space in host name '" + p + "'");
        out.push_back(std::move(p));
    }
    if (out.size() > kMaxHosts)
        fail(expr, "expands to too many hosts");
}

} // namespace

std::vector<std::string> expand(std::string_view expr) {
    std::vector<std::string> out;
    if (expr.empty())
        fail(expr, "empty");
    // Split at commas outside brackets.
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= expr.size(); ++i) {
        char c = i < expr.size() ? expr[i] : ',';
        if (c == '[') {
            ++depth;
        } else if (c == ']') {
            if (--depth < 0)
                fail(expr, "']' without '['");
        } else if (c == ',' && depth == 0) {
            std::string_view pattern = expr.substr(start, i - start);
            if (pattern.empty())
                fail(expr, "empty host name between commas");
            expand_pattern(expr, pattern, out);
            start = i + 1;
        }
    }
    if (depth != 0)
        fail(expr, "missing ']'");
    return out;
}

namespace {

struct Split {
    std::string prefix;
    std::string suffix;
    std::optional<std::uint64_t> number;
    std::size_t width = 0;
};

// "gb0017" -> {"gb", "", 17, 4}, "n3-ib" -> {"n", "-ib", 3, 1}: the last run
// of digits is the number.
Split split_name(const std::string& name) {
    std::size_t end = name.size();
    while (end > 0 && !std::isdigit(static_cast<unsigned char>(name[end - 1])))
        --end;
    std::size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1])))
        --begin;
    Split s;
    if (begin == end || end - begin > 18) {
        s.prefix = name;
        return s;
    }
    s.prefix = name.substr(0, begin);
    s.suffix = name.substr(end);
    std::uint64_t v = 0;
    std::from_chars(name.data() + begin, name.data() + end, v);
    s.number = v;
    s.width = end - begin;
    return s;
}

// No leading zero: "9", "10", "0"; not "09".
bool is_unpadded(const Split& s) {
    return s.number && s.width == std::to_string(*s.number).size();
}

} // namespace

std::string compress(const std::vector<std::string>& names) {
    std::string out;
    std::size_t i = 0;
    while (i < names.size()) {
        Split first = split_name(names[i]);
        if (!out.empty())
            out += ',';
        if (!first.number) {
            out += names[i++];
            continue;
        }
        // Gather a run of names sharing prefix and suffix and either one digit
        // width ("n08", "n09", "n10") or no zero padding at all ("n9", "n10",
        // as Slurm writes n[9-10]), then print its ranges.
        std::vector<std::uint64_t> nums{*first.number};
        bool same_width = true, unpadded = is_unpadded(first);
        std::size_t j = i + 1;
        for (; j < names.size(); ++j) {
            Split s = split_name(names[j]);
            if (!s.number || s.prefix != first.prefix || s.suffix != first.suffix)
                break;
            const bool width_ok = same_width && s.width == first.width;
            const bool unpadded_ok = unpadded && is_unpadded(s);
            if (!width_ok && !unpadded_ok)
                break;
            same_width = width_ok;
            unpadded = unpadded_ok;
            nums.push_back(*s.number);
        }
        const std::size_t width = same_width ? first.width : 1;
        if (nums.size() == 1) {
            out += names[i];
            i = j;
            continue;
        }
        out += first.prefix + "[";
        for (std::size_t k = 0; k < nums.size();) {
            std::size_t m = k;
            while (m + 1 < nums.size() && nums[m + 1] == nums[m] + 1)
                ++m;
            if (k)
                out += ',';
            out += pad(nums[k], width);
            if (m > k)
                out += "-" + pad(nums[m], width);
            k = m + 1;
        }
        out += "]" + first.suffix;
        i = j;
    }
    return out;
}

} // namespace nvlblock::hostlist
