// SPDX-License-Identifier: GPL-2.0-or-later
//
// A YAML file loaded with libyaml's document API, for every reader of a YAML
// format (nvlblock.yaml; Slurm's topology.yaml in nvlblock-check): one place
// for the parser's life cycle and for turning its errors into file:line.
#pragma once

#include "common/diagnostic.hpp"

#include <yaml.h>

#include <string>

namespace nvlblock::yaml {

// RAII over libyaml's document API. libyaml keeps the line of every node, so
// each error can point at the exact line of the offending value.
class Document {
  public:
    Document(const std::string& text, const std::string& label) : label_(label) {
        yaml_parser_t parser;
        if (!yaml_parser_initialize(&parser))
            throw ConfigError({label, 0}, "cannot initialise the YAML parser");
        yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
        const int ok = yaml_parser_load(&parser, &doc_);
        if (!ok) {
            std::string msg = parser.problem ? parser.problem : "invalid YAML";
            if (parser.context)
                msg = std::string(parser.context) + ": " + msg;
            const unsigned line = static_cast<unsigned>(parser.problem_mark.line) + 1;
            yaml_parser_delete(&parser);
            throw ConfigError({label, line}, "YAML syntax error: " + msg);
        }
        yaml_parser_delete(&parser);
        loaded_ = true;
    }
    ~Document() {
        if (loaded_)
            yaml_document_delete(&doc_);
    }
    Document(const Document&) = delete;
    Document& operator=(const Document&) = delete;

    yaml_node_t* root() { return yaml_document_get_root_node(&doc_); }
    yaml_node_t* node(int id) { return yaml_document_get_node(&doc_, id); }
    SourceLocation where(const yaml_node_t* n) const { return {label_, static_cast<unsigned>(n->start_mark.line) + 1}; }

  private:
    std::string label_;
    yaml_document_t doc_{};
    bool loaded_ = false;
};

inline const char* kind(const yaml_node_t* n) {
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return "a value";
    case YAML_SEQUENCE_NODE:
        return "a list";
    case YAML_MAPPING_NODE:
        return "a mapping";
    default:
        return "nothing";
    }
}

inline std::string scalar(const yaml_node_t* n) {
    return std::string(reinterpret_cast<const char*>(n->data.scalar.value), n->data.scalar.length);
}

} // namespace nvlblock::yaml
