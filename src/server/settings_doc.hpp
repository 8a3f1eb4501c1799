// What every setting is, for people: its key, flag, one line of help and its default
// (read from a default ServerOptions, so server.hpp's initializers are the one place
// a default is written). --help's flag lines and the table of docs/configuration.md
// (--config-reference; a test keeps the page equal to it) are generated from here;
// config.cpp's key table holds the rules, and a test checks the two name the same
// keys.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/server.hpp>

namespace kiln::server {

struct SettingDoc {
    std::string_view key;   // "timeouts.header_ms"
    std::string_view flag;  // "--header-timeout", or empty
    std::string_view meta;  // the flag's value: "MS"
    std::string_view help;
    std::function<std::string(const ServerOptions&)> show;  // the value as the docs print it
};

const std::vector<SettingDoc>& setting_docs();
// The key a flag sets, or empty.
std::string_view setting_for_flag(std::string_view flag);
// --help's lines for the flags that set a key.
std::string flags_help();
// The Markdown table of every setting (docs/configuration.md).
std::string settings_reference();

}  // namespace kiln::server
