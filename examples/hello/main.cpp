// The smallest kiln app: the TechEmpower plaintext and JSON tests, and Klone's
// "hello NAME" page, rendered by a compiled template (views/hello.html) that
// HTML-escapes the name.
#include <kiln/kiln.hpp>

#include "views/hello.hpp"

int main(int argc, char** argv) {
    kiln::App app;
    app.get("/plaintext", [](kiln::Request&, kiln::Response& res) {
        res.send("Hello, World!", "text/plain");
    });
    app.get("/json", [](kiln::Request&, kiln::Response& res) {
        res.json(R"({"message":"Hello, World!"})");
    });
    app.get("/hello", [](kiln::Request& req, kiln::Response& res) {
        kiln::render(res, views::hello{.name = req.query("name").value_or("no name given")});
    });
    return app.run(argc, argv);
}
