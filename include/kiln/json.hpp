// JSON in and out of handlers, on nlohmann::json (Debian's nlohmann-json3-dev):
//     res.json(post);                      // any value nlohmann::json converts: to_json
//                                          // (or, faster, a type with write_json:
//                                          // <kiln/json_writer.hpp>)
//     auto in = req.json<NewPost>();       // through from_json; 400 when it does not fit
// Response::json(std::string_view) stays what it was: a body that is already JSON.
// Invalid UTF-8 in a string is written as U+FFFD rather than failing the response.
// A separate header because nlohmann/json.hpp is large: request.hpp and response.hpp
// only declare these (kiln.hpp includes this one).
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <kiln/app.hpp>  // HttpError
#include <kiln/json_writer.hpp>
#include <kiln/request.hpp>
#include <kiln/response.hpp>

namespace kiln {

template <class T>
    requires(!std::is_convertible_v<const T&, std::string_view>)
void Response::json(const T& value) {
    if constexpr (detail::json_writable<T>()) {  // write_json, numbers, strings, ranges of them
        json(std::string_view());
        JsonWriter(body()).value(value);
    } else {
        nlohmann::json j = value;
        json(std::string_view(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
    }
}

template <class T>
T Request::json() const {
    try {
        return json().get<T>();
    } catch (const nlohmann::json::exception& e) {
        // e.what() names nlohmann's error id and where ("[json.exception.type_error.302]
        // type must be number, but is string"): useful to a client, nothing internal.
        throw HttpError(400, std::string("JSON body does not fit: ") + e.what());
    }
}

}  // namespace kiln
