// Cerflet's "Hello World" (seeds/004, Maya Posch, 2016) on kiln: a handler class, one
// object per request, routed at "/", answering the same 99-byte page as text/html.
// Cerflet's handler also logged every request to its console; kiln's access log is off
// by default, as here (--access-log stdout turns it on). bench/cerflet.sh measures it
// with Cerflet's `ab -n 100000 -c 5`, beside Spring Boot and Go (bench/peers/cerflet/).
#include <kiln/kiln.hpp>

#include <string_view>

namespace {

constexpr std::string_view kPage =
    "<!DOCTYPE html><html><head><title>Hello World</title></head>"
    "<body><p>Hello World!</p></body></html>";

struct Hello {
    void handle(kiln::Request&, kiln::Response& res) { res.send(kPage, "text/html"); }
};

}  // namespace

int main(int argc, char** argv) {
    kiln::App app;
    app.get<Hello>("/");
    return app.run(argc, argv);  // kiln.toml, then flags: --port --workers --mpm --help ...
}
