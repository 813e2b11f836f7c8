// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace nvlblock::cli {

namespace {

// "-Q" -> "--quiet" where `shorts` spells it; other "-x" words are refused.
std::string long_form(const std::string& a, const std::map<char, std::string>& shorts) {
    if (a.size() < 2 || a[0] != '-' || a[1] == '-')
        return a;
    auto it = a.size() == 2 ? shorts.find(a[1]) : shorts.end();
    if (it == shorts.end())
        throw UsageError("unknown option " + a);
    return "--" + it->second;
}

} // namespace

Args::Args(int argc, char** argv, const std::vector<std::string>& options, const std::vector<std::string>& flags,
           const std::map<char, std::string>& shorts) {
    auto known = [&](const std::vector<std::string>& v, const std::string& n) {
        return std::find(v.begin(), v.end(), n) != v.end();
    };
    for (int i = 1; i < argc; ++i) {
        std::string a = long_form(argv[i], shorts);
        if (a.rfind("--", 0) != 0 || a == "--") {
            positional_.push_back(a);
            continue;
        }
        std::string name = a.substr(2), value;
        bool inline_value = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            inline_value = true;
        }
        if (known(flags, name)) {
            if (inline_value)
                throw UsageError("--" + name + " takes no value");
            values_[name] = "1";
        } else if (known(options, name)) {
            if (!inline_value) {
                if (i + 1 >= argc)
                    throw UsageError("--" + name + " needs a value");
                value = argv[++i];
            }
            values_[name] = value;
        } else {
            throw UsageError("unknown option --" + name);
        }
    }
}

std::string Args::str(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
}

long long Args::integer(const std::string& name, long long fallback, long long min, long long max) const {
    if (!has(name))
        return fallback;
    const std::string v = str(name);
    char* end = nullptr;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end)
        throw UsageError("--" + name + ": '" + v + "' is not a whole number");
    if (x < min || x > max)
        throw UsageError("--" + name + ": " + v + " is out of range (" + std::to_string(min) + " to " +
                         std::to_string(max) + ")");
    return x;
}

double Args::number(const std::string& name, double fallback) const {
    if (!has(name))
        return fallback;
    const std::string v = str(name);
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || !std::isfinite(x))
        throw UsageError("--" + name + ": '" + v + "' is not a number");
    return x;
}

std::vector<std::string> Args::list(const std::string& name) const {
    const std::string v = str(name);
    return v.empty() ? std::vector<std::string>{} : split_list(v);
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (true) {
        auto comma = text.find(',', pos);
        out.push_back(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        if (comma == std::string::npos)
            return out;
        pos = comma + 1;
    }
}

std::optional<double> parse_share(const std::string& text) {
    const bool percent = !text.empty() && text.back() == '%';
    const std::string digits = percent ? text.substr(0, text.size() - 1) : text;
    char* end = nullptr;
    const double v = std::strtod(digits.c_str(), &end);
    if (digits.empty() || *end || !std::isfinite(v) || v < 0)
        return std::nullopt;
    return percent ? v / 100.0 : v;
}

std::string grouped(double value, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(value));
    std::string s = buf;
    auto dot = s.find('.');
    std::string whole = s.substr(0, dot), frac = dot == std::string::npos ? "" : s.substr(dot);
    std::string out;
    for (std::size_t i = 0; i < whole.size(); ++i) {
        if (i && (whole.size() - i) % 3 == 0)
            out += ',';
        out += whole[i];
    }
    return (value < 0 && std::fabs(value) >= 0.5 * std::pow(10.0, -decimals) ? "-" : "") + out + frac;
}

} // namespace nvlblock::cli
