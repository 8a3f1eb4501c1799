// Request::form() and Request::json(): typed views of the request body.
#include <kiln/app.hpp>
#include <kiln/request.hpp>

#include <nlohmann/json.hpp>

#include "app/app_impl.hpp"
#include "app/body.hpp"
#include "http/form.hpp"
#include "http/parser.hpp"

namespace kiln {
namespace {
constexpr size_t kMaxJsonDepth = 256;

std::string_view media_type(std::string_view content_type) {
    std::string_view t = content_type.substr(0, content_type.find(';'));
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    return t;
}

// Before nlohmann's parser runs (it recurses per nesting level, and allocates per
// value): returns if the text nests at most kMaxJsonDepth deep and holds at most
// max_values values (at most one more than its commas, colons and brackets outside
// strings); else throws: 400 past the depth, 413 past the values. A parsed value
// costs 16 bytes and more (an object or an array its container too, about 80 bytes
// for "{}" of 3): 8 MiB of "[{},{},..." would take about 200 MB.
void check_json_size(std::string_view text, size_t max_values) {
    size_t depth = 0, values = 1;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth) throw HttpError(400, "JSON nested too deeply");
            ++values;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        } else if (c == ',' || c == ':') {
            ++values;
        }
        if (values > max_values)
            throw HttpError(413, "JSON body holds too many values (" + std::to_string(max_values) + " at most)");
    }
}
}  // namespace

namespace app {
bool has_media_type(const Request& req, std::string_view type) {
    auto h = req.header("content-type");
    return h && http::iequals(media_type(*h), type);
}

bool is_form_body(const Request& req) {
    return has_media_type(req, "application/x-www-form-urlencoded") || has_media_type(req, "multipart/form-data");
}
}  // namespace app

void Request::set_form(Form&& form) { form_.emplace(std::move(form)); }

const Form& Request::form() const {
    if (form_) return *form_;
    Form form;
    if (app::has_media_type(*this, "application/x-www-form-urlencoded")) {
        std::vector<http::FormField> fields;
        if (http::FormError e = http::parse_form(body(), fields); e != http::FormError::None)
            throw HttpError(http::status_for(e), "malformed form body: " + std::string(http::describe(e)));
        form.fields_.reserve(fields.size());
        for (auto& f : fields) form.fields_.push_back({std::move(f.name), std::move(f.value)});
    }
    form_ = std::move(form);  // kept once read: a body that cannot be is refused again at each call
    return *form_;
}

const nlohmann::json& Request::json() const {
    if (json_) return *json_;
    auto type = media_type(header("content-type").value_or(""));
    bool is_json = http::iequals(type, "application/json") ||
                   (type.size() > 5 && http::iequals(type.substr(type.size() - 5), "+json"));
    if (!is_json) throw HttpError(415, "expected a JSON body (Content-Type: application/json)");
    check_json_size(body(), route_ ? static_cast<const Route*>(route_)->options.max_json_values
                                   : RouteOptions{}.max_json_values);
    auto parsed = std::make_shared<nlohmann::json>(nlohmann::json::parse(body(), nullptr, false));
    if (parsed->is_discarded()) throw HttpError(400, "malformed JSON body");
    json_ = std::move(parsed);
    return *json_;
}

}  // namespace kiln
