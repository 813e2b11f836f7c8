// SPDX-License-Identifier: GPL-2.0-or-later
#include "json_file.hpp"

#include "common/diagnostic.hpp"
#include "readers/load_topology.hpp"

#include <json-c/json.h>

#include <algorithm>
#include <cctype>

namespace nvlblock::tool {

JsonDoc::~JsonDoc() {
    if (root_)
        json_object_put(root_);
}

JsonDoc JsonDoc::parse(const std::string& text, const std::string& label) {
    json_tokener* tok = json_tokener_new();
    if (!tok)
        throw ConfigError({label, 0}, "out of memory");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object* root = json_tokener_parse_ex(tok, text.c_str(), static_cast<int>(text.size()));
    const json_tokener_error err = json_tokener_get_error(tok);
    std::size_t offset = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    auto line_at = [&](std::size_t off) {
        off = std::min(off, text.size());
        return static_cast<unsigned>(1 +
                                     std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(off), '\n'));
    };
    if (!root || err != json_tokener_success) {
        if (root)
            json_object_put(root);
        const std::string why =
            err == json_tokener_continue ? "the text ends before the JSON value does" : json_tokener_error_desc(err);
        throw ConfigError({label, line_at(offset)}, "JSON syntax error: " + why);
    }
    while (offset < text.size() && std::isspace(static_cast<unsigned char>(text[offset])))
        ++offset;
    if (offset < text.size()) {
        json_object_put(root);
        throw ConfigError({label, line_at(offset)}, "JSON syntax error: text after the end of the JSON value");
    }
    return JsonDoc(root);
}

JsonDoc JsonDoc::load(const std::string& path) {
    return parse(read_text_file(path), path);
}

namespace json {
namespace {

const char* type_name(const json_object* o) {
    switch (json_object_get_type(o)) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "a boolean";
    case json_type_double:
    case json_type_int:
        return "a number";
    case json_type_object:
        return "an object";
    case json_type_array:
        return "an array";
    case json_type_string:
        return "a string";
    }
    return "something else";
}

[[noreturn]] void shape(const std::string& path, const std::string& what) {
    throw JsonShapeError(path + ": " + what);
}

std::string sub(const std::string& path, const char* key) {
    return path.empty() ? key : path + "." + key;
}

} // namespace

bool is_object(const json_object* o) {
    return o && json_object_is_type(o, json_type_object);
}
bool is_array(const json_object* o) {
    return o && json_object_is_type(o, json_type_array);
}
bool is_null(const json_object* o) {
    return !o || json_object_is_type(o, json_type_null);
}

json_object* member(json_object* o, const char* key, const std::string& path) {
    if (!is_object(o))
        shape(path.empty() ? "the document" : path, std::string("expected an object, found ") + type_name(o));
    json_object* v = nullptr;
    return json_object_object_get_ex(o, key, &v) ? v : nullptr;
}

json_object* required(json_object* o, const char* key, const std::string& path) {
    json_object* v = member(o, key, path);
    if (!v)
        shape(sub(path, key), "missing");
    return v;
}

std::size_t array_size(json_object* a, const std::string& path) {
    if (!is_array(a))
        shape(path, std::string("expected an array, found ") + (a ? type_name(a) : "nothing"));
    return json_object_array_length(a);
}

json_object* at(json_object* a, std::size_t i) {
    return json_object_array_get_idx(a, i);
}

std::string string_value(json_object* v, const std::string& path) {
    if (!v || !json_object_is_type(v, json_type_string))
        shape(path, std::string("expected a string, found ") + (v ? type_name(v) : "nothing"));
    return std::string(json_object_get_string(v), static_cast<std::size_t>(json_object_get_string_len(v)));
}

std::string string(json_object* o, const char* key, const std::string& path) {
    return string_value(required(o, key, path), sub(path, key));
}

std::string string_or(json_object* o, const char* key, const std::string& path, const std::string& fallback) {
    json_object* v = member(o, key, path);
    return is_null(v) ? fallback : string_value(v, sub(path, key));
}

std::int64_t integer(json_object* o, const char* key, const std::string& path) {
    json_object* v = required(o, key, path);
    if (!json_object_is_type(v, json_type_int))
        shape(sub(path, key), std::string("expected a whole number, found ") + type_name(v));
    return json_object_get_int64(v);
}

std::int64_t integer_or(json_object* o, const char* key, const std::string& path, std::int64_t fallback) {
    json_object* v = member(o, key, path);
    return is_null(v) ? fallback : integer(o, key, path);
}

double number(json_object* o, const char* key, const std::string& path) {
    json_object* v = required(o, key, path);
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        shape(sub(path, key), std::string("expected a number, found ") + type_name(v));
    return json_object_get_double(v);
}

bool boolean_or(json_object* o, const char* key, const std::string& path, bool fallback) {
    json_object* v = member(o, key, path);
    if (is_null(v))
        return fallback;
    if (!json_object_is_type(v, json_type_boolean))
        shape(sub(path, key), std::string("expected true or false, found ") + type_name(v));
    return json_object_get_boolean(v);
}

} // namespace json
} // namespace nvlblock::tool
