// kiln generate scaffold|model|controller|auth: plans every file (see
// file_plan.hpp), refuses if one is in the way (unless --force), then writes them
// and adds the route registration at the marked lines of app.cpp and routes.hpp.
#include <algorithm>
#include <cstdio>
#include <string>
#include <system_error>

#include <kiln/view.hpp>

#include "generate/auth_plan.hpp"
#include "generate/commands.hpp"
#include "generate/fields.hpp"
#include "generate/file_plan.hpp"
#include "generate/migrations.hpp"
#include "generate/names.hpp"
#include "generate/project.hpp"
#include "generate/resource.hpp"
#include "kiln_gen_templates.hpp"

namespace kiln::gen {
namespace fs = std::filesystem;
namespace tpl = kiln_gen_templates;

namespace {

constexpr const char* kUsage =
    "usage: kiln generate scaffold NAME FIELD:TYPE... [--force]   model, controller, views, routes\n"
    "       kiln generate model NAME FIELD:TYPE... [--force]      migration and model\n"
    "       kiln generate controller NAME ACTION... [--force]     controller, views, routes\n"
    "       kiln generate auth [--force]                          accounts: sign-up, log-in, log-out,\n"
    "                                                             password change (kiln::auth)\n"
    "field types: string, text, integer, bigint, float, boolean, datetime\n";

int refuse(const std::string& why) {
    std::fprintf(stderr, "kiln generate: %s\n", why.c_str());
    return 2;
}

// What the command line asked for, split into words and flags.
struct Invocation {
    std::string kind;                    // scaffold, model, controller, auth
    std::string name;
    std::vector<std::string_view> rest;  // fields or actions
    bool force = false;
    std::string command;                 // for the generated files' comments
};

// app.cpp gets `register_routes_NAME(app);`, routes.hpp its declaration.
std::string add_route_hooks(FilePlan& plan, const Project& p, const std::string& group) {
    for (auto [file, marker, line] : {
             std::tuple{"routes.hpp", kDeclarationsMarker, "void register_routes_" + group + "(kiln::App& app);"},
             std::tuple{"app.cpp", kRoutesMarker, "register_routes_" + group + "(app);"},
         }) {
        auto text = read_text_file(p.root / file);
        if (!text) return std::string("cannot read ") + file + " in " + p.root.string();
        auto edited = insert_before_marker(*text, marker, line);
        if (!edited)
            return std::string(file) + " has no '" + std::string(marker) + "' line; put it back where "
                   "generated code should be added";
        plan.edit(file, *edited);
    }
    return {};
}

// The migration creating the table: the existing create_<plural> file if there is
// one (a conflict unless --force), else the next number.
void plan_model(FilePlan& plan, const Project& p, Resource& r) {
    fs::path dir = p.root / "db" / "migrations";
    auto files = list_migrations(dir);
    std::string name = "create_" + r.names.plural;
    if (auto existing = find_migration(files, name)) r.migration = existing->substr(0, existing->size() - 4);
    else r.migration = migration_stem(next_migration_number(files), name);
    plan.add("db/migrations/" + r.migration + ".sql", render_to_string(tpl::model::migration{.r = r}));
    plan.add("models/" + r.names.singular + ".hpp", render_to_string(tpl::model::model_hpp{.r = r}));
}

void plan_scaffold(FilePlan& plan, const Resource& r) {
    const Names& n = r.names;
    std::string views = "views/" + n.plural + "/";
    plan.add("controllers/" + n.controller + ".hpp", render_to_string(tpl::scaffold::controller_hpp{.r = r}));
    plan.add("controllers/" + n.controller + ".cpp", render_to_string(tpl::scaffold::controller_cpp{.r = r}));
    plan.add("routes/" + n.plural + ".cpp", render_to_string(tpl::scaffold::routes_cpp{.r = r}));
    plan.add(views + "index.html", render_to_string(tpl::scaffold::index{.r = r}));
    plan.add(views + "show.html", render_to_string(tpl::scaffold::show{.r = r}));
    plan.add(views + "new.html", render_to_string(tpl::scaffold::new_{.r = r}));
    plan.add(views + "edit.html", render_to_string(tpl::scaffold::edit{.r = r}));
    plan.add(views + "_form.html", render_to_string(tpl::scaffold::form{.r = r}));
}

void plan_controller(FilePlan& plan, const ControllerSpec& c) {
    plan.add("controllers/" + c.names.controller + ".hpp", render_to_string(tpl::controller::controller_hpp{.c = c}));
    plan.add("controllers/" + c.names.controller + ".cpp", render_to_string(tpl::controller::controller_cpp{.c = c}));
    plan.add("routes/" + c.names.plural + ".cpp", render_to_string(tpl::controller::routes_cpp{.c = c}));
    for (const std::string& a : c.actions)
        plan.add("views/" + c.names.plural + "/" + a + ".html",
                 render_to_string(tpl::controller::action{.c = c, .action = a}));
}

// kiln generate auth: every file of plan_auth (auth_plan.hpp), rendered.
void plan_auth_files(FilePlan& plan, const AuthPlan& auth) {
    namespace t = tpl::auth;
    const AuthSpec& a = auth.spec;
    for (const auto& [what, path] : auth.files) {
        std::string text;
        switch (what) {
        case AuthFile::Migration: text = render_to_string(t::migration{.a = a}); break;
        case AuthFile::PostgresqlMigration: text = render_to_string(t::migration_postgresql{.a = a}); break;
        case AuthFile::LibHpp: text = render_to_string(t::lib_hpp{.a = a}); break;
        case AuthFile::LibCpp: text = render_to_string(t::lib_cpp{.a = a}); break;
        case AuthFile::ControllerHpp: text = render_to_string(t::controller_hpp{.a = a}); break;
        case AuthFile::ControllerCpp: text = render_to_string(t::controller_cpp{.a = a}); break;
        case AuthFile::Routes: text = render_to_string(t::routes_cpp{.a = a}); break;
        case AuthFile::SignupView: text = render_to_string(t::signup{.a = a}); break;
        case AuthFile::LoginView: text = render_to_string(t::login{.a = a}); break;
        case AuthFile::PasswordView: text = render_to_string(t::password{.a = a}); break;
        case AuthFile::NavPartial: text = render_to_string(t::nav{.a = a}); break;
        }
        plan.add(path, std::move(text));
    }
}

// What to do next: the layout is the project's own file, so its header links are
// the user's to add (the lines are printed, not written).
constexpr const char* kAuthNext =
    "next: build and run (make run); accounts are at /signup, /login and /password.\n"
    "  What needs a log-in: app::needs_login in lib/auth.cpp (now /password, every write\n"
    "  but the account forms, and the /new and /edit forms; pages that read stay open).\n"
    "  A scaffold generated from now on gives each record an owner, who alone may change\n"
    "  or delete it; the records of one generated before stay anyone's to change (a\n"
    "  log-in, not ownership): see docs/getting-started.md (Generators).\n"
    "  views/layouts/app.html is yours and was left alone. For the account links in its\n"
    "  header (Sign up and Log in; or the user's name, Password and Log out), add with its\n"
    "  other params:\n"
    "    <%@ param std::string_view user = {} %>\n"
    "    <%@ param std::string_view token = {} %>\n"
    "  and inside <header>:\n"
    "    <%@ render \"accounts/_nav\" .user = user, .token = token %>\n"
    "  then a page passes them on its layout line, from `app::Viewer v = co_await\n"
    "  app::viewer(req);` (lib/auth.hpp) in its handler; views/accounts/password.html has\n"
    "  them already: add `, .user = user, .token = token` to its layout line.\n";

std::optional<std::vector<std::string>> parse_actions(const std::vector<std::string_view>& rest, std::string* error) {
    std::vector<std::string> out;
    for (std::string_view a : rest) {
        auto snake = to_snake(a);
        if (!snake || *snake != a || is_cpp_keyword(a) || a == "render" || a == "content") {
            *error = "action '" + std::string(a) + "' must be lower_snake_case and not a C++ keyword";
            return std::nullopt;
        }
        for (const std::string& seen : out)
            if (seen == a) {
                *error = "action '" + std::string(a) + "' named twice";
                return std::nullopt;
            }
        out.emplace_back(a);
    }
    if (out.empty()) *error = "name at least one action (e.g. index)";
    return out.empty() ? std::nullopt : std::optional(out);
}

}  // namespace

int generate_main(const Args& args) {
    Invocation req;
    req.command = "kiln generate";
    for (std::string_view a : args) {
        if (a == "--force" || a == "-f") {
            req.force = true;
            continue;
        }
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (a.starts_with("-")) return refuse("unknown flag '" + std::string(a) + "'\n" + kUsage);
        if (req.kind.empty()) req.kind = a;
        else if (req.name.empty()) req.name = a;
        else req.rest.push_back(a);
        req.command += " " + std::string(a);
    }
    if (req.kind != "scaffold" && req.kind != "model" && req.kind != "controller" && req.kind != "auth")
        return refuse((req.kind.empty() ? std::string("what to generate?") : "unknown generator '" + req.kind + "'") +
                      "\n" + kUsage);
    if (req.kind == "auth") {
        if (!req.name.empty()) return refuse("kiln generate auth takes no name (it writes the accounts of "
                                             "kiln::auth: users, /signup, /login, /logout, /password)");
    } else if (req.name.empty()) {
        return refuse("no name given\n" + std::string(kUsage));
    }

    std::error_code ec;
    auto project = find_project(fs::current_path(ec));
    if (!project)
        return refuse("not inside a kiln project (no CMakeLists.txt starting with '" + std::string(kAppMarker) +
                      "NAME' here or above); create one with kiln new NAME");

    FilePlan plan;
    std::string error, group;
    if (req.kind == "auth") {
        plan_auth_files(plan, plan_auth(*project, req.command));
        group = kAuthRouteGroup;
    } else if (req.kind == "controller") {
        NamesResult names = controller_names(req.name);
        if (!names.names) return refuse(names.error);
        auto actions = parse_actions(req.rest, &error);
        if (!actions) return refuse(error);
        ControllerSpec spec{*names.names, *actions, req.command};
        plan_controller(plan, spec);
        group = spec.names.plural;
    } else {
        NamesResult names = resource_names(req.name);
        if (!names.names) return refuse(names.error);
        auto fields = parse_fields(req.rest, &error);
        if (!fields) return refuse(error);
        if (fields->empty()) return refuse("name at least one field, e.g. title:string");
        Resource r{*names.names, *fields, req.command, {}};
        r.owned = req.kind == "scaffold" && fs::exists(project->root / "lib" / "auth.hpp", ec);
        if (r.owned && std::any_of(r.fields.begin(), r.fields.end(), [](const Field& f) { return f.name == "user_id"; }))
            return refuse("field 'user_id': in a project with accounts a scaffold's rows have an owner, "
                          "user_id, which kiln sets from the log-in (never from the form); name the field "
                          "otherwise");
        plan_model(plan, *project, r);
        if (req.kind == "scaffold") {
            plan_scaffold(plan, r);
            group = r.names.plural;
        }
    }
    if (!group.empty())
        if (std::string e = add_route_hooks(plan, *project, group); !e.empty()) return refuse(e);

    auto in_the_way = plan.conflicts(project->root);
    if (!in_the_way.empty() && !req.force) {
        std::string list;
        for (const std::string& f : in_the_way) list += "\n  exists: " + f;
        return refuse("these files exist with other content (nothing was written; --force overwrites them):" + list);
    }
    std::printf("kiln generate %s%s%s in %s\n", req.kind.c_str(), req.name.empty() ? "" : " ", req.name.c_str(),
                project->root.c_str());
    if (std::string e = plan.write(project->root, stdout); !e.empty()) {
        std::fprintf(stderr, "kiln generate: %s\n", e.c_str());
        return 1;
    }
    if (req.kind == "auth") std::fputs(kAuthNext, stdout);
    // A migration is applied once, by its number and name: rewritten, it does not run
    // again where it ran already, and that database keeps the old table.
    for (const std::string& f : in_the_way)
        if (f.starts_with("db/migrations/"))
            std::printf("warning: %s was rewritten; a database that applied it already will not apply it again. "
                        "To change a table that exists, add a new migration (or, in development, delete the "
                        "database).\n",
                        f.c_str());
    return 0;
}

}  // namespace kiln::gen
