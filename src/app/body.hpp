// What kind of body a request carries, by its Content-Type's media type (parameters
// ignored, compared case-insensitively). Shared by Request::form()/json() and App's
// _method override.
#pragma once
#include <string_view>

#include <kiln/request.hpp>

namespace kiln::app {

bool has_media_type(const Request& req, std::string_view type);
// application/x-www-form-urlencoded or multipart/form-data: what an HTML form posts.
bool is_form_body(const Request& req);

}  // namespace kiln::app
