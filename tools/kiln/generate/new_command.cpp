// kiln new: writes a project that builds and runs with one command (`make run`).
#include <unistd.h>

#include <cstdio>
#include <string>
#include <system_error>

#include <kiln/view.hpp>

#include "generate/commands.hpp"
#include "generate/file_plan.hpp"
#include "generate/names.hpp"
#include "generate/resource.hpp"
#include "kiln_gen_templates.hpp"

#ifndef KILN_SOURCE_DIR
#error "KILN_SOURCE_DIR must name the kiln source tree (tools/kiln/CMakeLists.txt sets it)"
#endif

namespace kiln::gen {
namespace fs = std::filesystem;
namespace t = kiln_gen_templates::project;

namespace {

constexpr const char* kUsage = "usage: kiln new NAME [--dir PARENT] [--kiln-source DIR]\n";

int refuse(const std::string& why) {
    std::fprintf(stderr, "kiln new: %s\n", why.c_str());
    return 2;
}

std::string self_path() {
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("kiln");
}

FilePlan project_files(const ProjectInfo& p) {
    FilePlan plan;
    plan.add("CMakeLists.txt", render_to_string(t::cmakelists{.p = p}));
    plan.add("Makefile", render_to_string(t::makefile{.p = p}));
    plan.add("kiln.toml", render_to_string(t::kiln_toml{.p = p}));
    plan.add(".gitignore", render_to_string(t::gitignore{}));
    plan.add("main.cpp", render_to_string(t::main_cpp{.p = p}));
    plan.add("app.hpp", render_to_string(t::app_hpp{.p = p}));
    plan.add("app.cpp", render_to_string(t::app_cpp{.p = p}));
    plan.add("routes.hpp", render_to_string(t::routes_hpp{.p = p}));
    plan.add("lib/database.hpp", render_to_string(t::database_hpp{.p = p}));
    plan.add("lib/database.cpp", render_to_string(t::database_cpp{.p = p}));
    plan.add("views/layouts/app.html", render_to_string(t::layout{.p = p}));
    plan.add("views/home/index.html", render_to_string(t::home{.p = p}));
    plan.add("public/app.css", render_to_string(t::app_css{}));
    plan.add("tests/test_app.py", render_to_string(t::test_app{.p = p}));
    plan.add("tests/app_test.cpp", render_to_string(t::app_test{.p = p}));
    plan.add("db/migrations/.gitkeep", "");  // git keeps no empty directory, and migrate() needs this one
    return plan;
}

}  // namespace

int new_main(const Args& args) {
    std::string name, parent = ".", kiln_source = KILN_SOURCE_DIR;
    for (size_t i = 0; i < args.size(); ++i) {
        std::string_view a = args[i];
        if (a == "--dir" || a == "--kiln-source") {
            if (i + 1 == args.size()) return refuse(std::string(a) + ": missing value\n" + kUsage);
            (a == "--dir" ? parent : kiln_source) = std::string(args[++i]);
        } else if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a.starts_with("-") || !name.empty()) {
            std::fprintf(stderr, "kiln new: unexpected argument '%.*s'\n%s", static_cast<int>(a.size()), a.data(), kUsage);
            return 2;
        } else {
            name = std::string(a);
        }
    }
    if (name.empty()) return refuse(std::string("no project name given\n") + kUsage);
    if (!is_identifier(name) || name.starts_with("_") || name.find("__") != name.npos)
        return refuse("'" + name + "' is not a valid project name: it must be a C++ identifier "
                      "(letters, digits and '_', starting with a letter; not a keyword)");
    if (name == "kiln" || name == "kilnc" || name.starts_with("kiln_") || name.starts_with("kilnc_"))
        return refuse("'" + name + "' is a name of kiln's own build targets; pick another project name");
    fs::path dir = fs::path(parent) / name;
    std::error_code ec;
    if (fs::exists(dir, ec)) {
        if (!fs::is_directory(dir, ec)) return refuse(dir.string() + " exists and is not a directory");
        if (!fs::is_empty(dir, ec)) return refuse(dir.string() + " exists and is not empty; pick another name or --dir");
    }
    if (!fs::exists(fs::path(kiln_source) / "include" / "kiln" / "kiln.hpp", ec))
        std::fprintf(stderr, "kiln new: warning: %s does not look like the kiln source tree; the project will need "
                     "an installed kiln or -DKILN_SOURCE_DIR=...\n", kiln_source.c_str());

    ProjectInfo info{name, fs::absolute(kiln_source, ec).lexically_normal().string(), self_path()};
    fs::create_directories(dir, ec);
    if (ec) {
        std::fprintf(stderr, "kiln new: cannot create %s: %s\n", dir.c_str(), ec.message().c_str());
        return 1;
    }
    std::printf("kiln new: creating %s\n", dir.c_str());
    if (std::string e = project_files(info).write(dir, stdout); !e.empty()) {
        std::fprintf(stderr, "kiln new: %s\n", e.c_str());
        return 1;
    }
    std::printf("next: cd %s && make run   (then open http://127.0.0.1:8080)\n", dir.c_str());
    return 0;
}

}  // namespace kiln::gen
