// SPDX-License-Identifier: GPL-2.0-or-later
//
// Minimal command-line parsing shared by the nvlblock tools: --name value,
// --name=value and boolean --flag, with errors that name the option.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvlblock::cli {

class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class Args {
  public:
    // `flags`: options that take no value; every other --option takes one.
    // `shorts`: one-letter spellings, as Slurm's commands have them ('Q' ->
    // "quiet"); any other "-x" is refused ("-" alone is an argument).
    Args(int argc, char** argv, const std::vector<std::string>& options, const std::vector<std::string>& flags,
         const std::map<char, std::string>& shorts = {});

    bool has(const std::string& name) const { return values_.count(name) != 0; }
    std::string str(const std::string& name, const std::string& fallback = "") const;
    long long integer(const std::string& name, long long fallback, long long min, long long max) const;
    double number(const std::string& name, double fallback) const;
    std::vector<std::string> list(const std::string& name) const; // split_list(), none when absent or empty
    const std::vector<std::string>& positional() const { return positional_; }

  private:
    std::map<std::string, std::string> values_;
    std::vector<std::string> positional_;
};

// "a,,b" -> {"a", "", "b"}: every comma-separated item, empty ones
// included, so a caller can refuse them; "" is one empty item.
std::vector<std::string> split_list(const std::string& text);

// "1 block", "3 blocks": a count and its word for people.
template <class Count>
std::string plural(Count n, const std::string& word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// "2257.9" -> "2,257.9": thousands separators for people.
std::string grouped(double value, int decimals);

// A share written as a fraction or a percentage ("0.02", "2%"), as
// nvlblock.yaml takes it: the fraction, or nullopt when `text` is not a
// non-negative number (with or without '%'). Each caller bounds it.
std::optional<double> parse_share(const std::string& text);

} // namespace nvlblock::cli
