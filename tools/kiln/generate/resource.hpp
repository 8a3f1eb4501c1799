// What the generator templates (generate/templates/) are given: the project, a
// resource (scaffold, model) or a controller, with every name already validated as an
// identifier, so the templates can print them raw into C++, SQL and HTML.
#pragma once
#include <string>
#include <vector>

#include "generate/fields.hpp"
#include "generate/names.hpp"

namespace kiln::gen {

struct ProjectInfo {
    std::string name;             // the app: directory, binary, database file
    std::string kiln_source_dir;  // the kiln tree to build against without an installed kiln
    std::string kiln_binary;      // this kiln, for the Makefile's `watch`
};

struct Resource {
    Names names;
    std::vector<Field> fields;
    std::string command;    // the command line that generated it, for the files' comments
    std::string migration;  // "002_create_posts"
    // A scaffold made in a project with accounts (lib/auth.hpp): each row has an owner
    // (user_id, set from the log-in at create, never from the form), and only the
    // owner may change or delete it.
    bool owned = false;
};

struct ControllerSpec {
    Names names;
    std::vector<std::string> actions;  // "index" is served at /NAME, others at /NAME/ACTION
    std::string command;
};

}  // namespace kiln::gen
