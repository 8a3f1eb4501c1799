// JSON in and out of handlers, on nlohmann::json (Debian's nlohmann-json3-dev):
//     res.json(post);                      // any value nlohmann::json converts: to_json
//                                          // (or, faster, a type with write_json:
//                                          // <kiln/json_writer.hpp>)
//     auto in = req.json<NewPost>();       // through from_json; 400 when it does not fit
// nlohmann converts numbers without a check (-1 into an unsigned is 4294967295, 3.9
// into an int 3): a from_json reads numbers with kiln::json_field, which refuses them.
// Response::json(std::string_view) stays what it was: a body that is already JSON.
// Invalid UTF-8 in a string is written as U+FFFD rather than failing the response.
// A separate header because nlohmann/json.hpp is large: request.hpp and response.hpp
// only declare these (kiln.hpp includes this one).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

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

// Reads j[key] into out (a missing key throws as at() does: 400 through
// req.json<T>()). A number is checked as nlohmann's get_to does not: an integer type
// takes an integer within its range (not 3.9, not -1 for an unsigned, not 2^31 for an
// int), a floating-point type a number within its range; else HttpError(400) names
// the key. Any other type: as j.at(key).get_to(out).
template <class T>
void json_field(const nlohmann::json& j, const std::string& key, T& out) {
    const nlohmann::json& v = j.at(key);
    constexpr bool character = std::is_same_v<T, char> || std::is_same_v<T, wchar_t> || std::is_same_v<T, char8_t> ||
                               std::is_same_v<T, char16_t> || std::is_same_v<T, char32_t>;
    if constexpr (std::is_same_v<T, bool> || character || !std::is_arithmetic_v<T>) {
        v.get_to(out);
    } else {
        using limits = std::numeric_limits<T>;
        auto refuse = [&](const char* kind) {
            std::string range;
            if constexpr (std::is_integral_v<T>)
                range = " from " + std::to_string(limits::min()) + " to " + std::to_string(limits::max());
            else
                range = " within a " + std::to_string(sizeof(T) * 8) + "-bit floating-point number's range";
            throw HttpError(400, "JSON body does not fit: '" + key + "' must be " + kind + range);
        };
        if constexpr (std::is_integral_v<T>) {
            if (v.is_number_unsigned()) {
                uint64_t u = v.get<uint64_t>();
                if (std::cmp_greater(u, limits::max())) refuse("an integer");
                out = static_cast<T>(u);
            } else if (v.is_number_integer()) {
                int64_t s = v.get<int64_t>();
                if (std::cmp_less(s, limits::min()) || std::cmp_greater(s, limits::max())) refuse("an integer");
                out = static_cast<T>(s);
            } else {
                refuse("an integer");
            }
        } else {
            if (!v.is_number()) refuse("a number");
            double d = v.get<double>();
            if (!std::isfinite(d) || std::abs(d) > static_cast<double>(limits::max())) refuse("a number");
            out = static_cast<T>(d);
        }
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
