// SPDX-License-Identifier: GPL-2.0-or-later
#include "writers/json_writer.hpp"

#include <cmath>
#include <cstdio>

namespace nvlblock {

std::string JsonWriter::escape(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    return out + "\"";
}

void JsonWriter::newline() {
    if (!pretty_)
        return;
    out_ += '\n';
    out_.append(stack_.size() * 2, ' ');
}

void JsonWriter::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (stack_.empty())
        return;
    Level& l = stack_.back();
    if (!l.first)
        out_ += ',';
    l.first = false;
    newline();
}

JsonWriter& JsonWriter::begin_object() {
    before_value();
    out_ += '{';
    stack_.push_back({false});
    return *this;
}

JsonWriter& JsonWriter::end_object() {
    const bool empty = stack_.back().first;
    stack_.pop_back();
    if (!empty)
        newline();
    out_ += '}';
    if (stack_.empty() && pretty_)
        out_ += '\n';
    return *this;
}

JsonWriter& JsonWriter::begin_array() {
    before_value();
    out_ += '[';
    stack_.push_back({true});
    return *this;
}

JsonWriter& JsonWriter::end_array() {
    const bool empty = stack_.back().first;
    stack_.pop_back();
    if (!empty)
        newline();
    out_ += ']';
    return *this;
}

JsonWriter& JsonWriter::key(const std::string& k) {
    before_value();
    out_ += escape(k);
    out_ += pretty_ ? ": " : ":";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::value(const std::string& s) {
    before_value();
    out_ += escape(s);
    return *this;
}

JsonWriter& JsonWriter::value(bool b) {
    before_value();
    out_ += b ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::value(std::int64_t v) {
    before_value();
    out_ += std::to_string(v);
    return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t v) {
    before_value();
    out_ += std::to_string(v);
    return *this;
}

JsonWriter& JsonWriter::value(double v, int decimals) {
    before_value();
    if (!std::isfinite(v)) {
        out_ += "null";
        return *this;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    out_ += buf;
    return *this;
}

JsonWriter& JsonWriter::null() {
    before_value();
    out_ += "null";
    return *this;
}

} // namespace nvlblock
