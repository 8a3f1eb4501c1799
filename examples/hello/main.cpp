// The smallest kiln app: the TechEmpower plaintext and JSON tests, and Klone's
// "hello NAME" page with the name HTML-escaped.
#include <kiln/kiln.hpp>

int main(int argc, char** argv) {
    kiln::App app;
    app.get("/plaintext", [](kiln::Request&, kiln::Response& res) {
        res.send("Hello, World!", "text/plain");
    });
    app.get("/json", [](kiln::Request&, kiln::Response& res) {
        res.json(R"({"message":"Hello, World!"})");
    });
    app.get("/hello", [](kiln::Request& req, kiln::Response& res) {
        std::string page = "<h1>hello ";
        kiln::append_html_escaped(page, req.query("name").value_or("no name given"));
        page += "</h1>";
        res.html(page);
    });
    return app.run(argc, argv);
}
