// The smallest kiln app: the TechEmpower plaintext and JSON tests, Klone's
// "hello NAME" page, rendered by a compiled template (views/hello.html) that
// HTML-escapes the name, and a WebSocket echo at /echo (bench/websocket.sh).
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
    app.ws("/echo", kiln::WsHandlers{.message = [](kiln::WebSocket& ws, std::string_view data, bool binary) {
        binary ? ws.send_binary(data) : ws.send(data);
    }});
    return app.run(argc, argv);
}
