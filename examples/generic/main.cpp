// The session study's "generic web application" (see bench/study.sh): a page that
// prints the visitor's session id after five lorem-ipsum paragraphs and links a
// stylesheet and an image, and an upload endpoint. The same app exists for every
// peer in bench/peers/, so the numbers compare frameworks, not apps.
//
// Files: lorem.html and public/ next to this source (GENERIC_ROOT overrides).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <kiln/kiln.hpp>

namespace {
std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::cerr << "generic: cannot read " << path << "\n";
        std::exit(2);
    }
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}
}  // namespace

int main(int argc, char** argv) {
    const char* env_root = std::getenv("GENERIC_ROOT");
    const std::string root = env_root ? env_root : GENERIC_ROOT;
    const std::string page_head =
        "<!DOCTYPE html><html><head><meta charset=\"UTF-8\">"
        "<link rel=\"stylesheet\" type=\"text/css\" href=\"/bootstrap.css\">"
        "<title>Generic Web Application</title></head><body>"
        "<h1>Generic Web Application</h1><img src=\"/servers.jpg\" width=\"700\">"
        "<h2>Lorem Ipsum</h2>" + read_file(root + "/lorem.html") + "<p>";
    const std::string page_tail = "</p></body></html>";

    kiln::App app;
    app.get("/", [&](kiln::Request& req, kiln::Response& res) {
        std::string_view id = req.session().id();
        res.header("Content-Type", "text/html; charset=utf-8").header("Cache-Control", "no-store");
        std::string& body = res.body();
        body.reserve(page_head.size() + id.size() + page_tail.size());
        body.append(page_head).append(id).append(page_tail);
    });
    app.post("/upload", [](kiln::Request& req, kiln::Response& res) {
        (void)req.session().id();  // as in the study's apps: the upload belongs to the visitor's session
        res.text("Data accepted");
    }, {.max_body = 1 << 20, .max_files = 1});
    app.files("/", root + "/public");
    return app.run(argc, argv);
}
