// kiln::JsonWriter: JSON text written straight into a string (a response body),
// with no document built first. What res.json(value) uses for a type that has
//     void write_json(kiln::JsonWriter& w, const T& value);
// (found by argument-dependent lookup, beside T); other types go through
// nlohmann::json's to_json as before. For example:
//
//     struct World { int id; int randomNumber; };
//     void write_json(kiln::JsonWriter& w, const World& x) {
//         w.begin_object().field("id", x.id).field("randomNumber", x.randomNumber).end_object();
//     }
//     res.json(worlds);  // a std::vector<World>: [{"id":1,"randomNumber":42},...]
//
// Built in: bool, integers, floating point (shortest text that reads back exactly;
// NaN and infinities, which JSON lacks, as null), strings (escaped; invalid UTF-8
// written as U+FFFD, as nlohmann's dump(replace) does), std::optional (nullopt as
// null), nullptr, and sized ranges of writable values (std::vector, std::array,
// std::span) as arrays. Commas and colons are the writer's business: each value
// after the first in an object or array gets its comma.
#pragma once
#include <charconv>
#include <concepts>
#include <cstdint>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln {

class JsonWriter;

namespace detail {
template <class T>
concept HasWriteJson = requires(JsonWriter& w, const T& v) { write_json(w, v); };

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

// Whether JsonWriter::value takes a T: decides res.json's path (this writer, or
// nlohmann::json for everything else, nlohmann::json itself included).
template <class T>
constexpr bool json_writable() {
    using U = std::remove_cvref_t<T>;
    // (A char is not: the writer refuses it, nlohmann writes its number.)
    if constexpr (HasWriteJson<U> || (std::is_arithmetic_v<U> && !std::is_same_v<U, char>) || std::is_null_pointer_v<U> ||
                  std::is_convertible_v<const U&, std::string_view>) {
        return true;
    } else if constexpr (IsOptional<U>::value) {
        return json_writable<typename U::value_type>();
    } else if constexpr (std::ranges::sized_range<const U>) {
        using V = std::remove_cvref_t<std::ranges::range_value_t<const U>>;
        if constexpr (std::is_same_v<V, U>) return false;  // nlohmann::json iterates as itself
        else return json_writable<V>();
    } else {
        return false;
    }
}
}  // namespace detail

class JsonWriter {
public:
    explicit JsonWriter(std::string& out) : out_(out) {}

    JsonWriter& begin_object() { return open('{'); }
    JsonWriter& end_object() { return close('}'); }
    JsonWriter& begin_array() { return open('['); }
    JsonWriter& end_array() { return close(']'); }
    // A member's name; its value is the next thing written.
    JsonWriter& key(std::string_view name);
    template <class T>
    JsonWriter& field(std::string_view name, const T& v) {
        key(name);
        return value(v);
    }

    JsonWriter& null();
    JsonWriter& value(bool v);
    JsonWriter& value(std::string_view v);
    JsonWriter& value(const char* v) { return value(std::string_view(v)); }
    JsonWriter& value(const std::string& v) { return value(std::string_view(v)); }
    JsonWriter& value(std::nullptr_t) { return null(); }
    // A char is text or a number only the caller knows: write std::string(1, c) or int(c).
    JsonWriter& value(char) = delete;
    template <class T>
        requires std::integral<T> && (!std::same_as<T, bool>) && (!std::same_as<T, char>)
    JsonWriter& value(T v) {
        separate();
        char buf[24];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
        out_.append(buf, end);
        return *this;
    }
    template <std::floating_point T>
    JsonWriter& value(T v) { return number(static_cast<double>(v)); }
    template <class T>
        requires(detail::json_writable<T>())
    JsonWriter& value(const std::optional<T>& v) { return v ? value(*v) : null(); }
    // A type of the app's own, through its write_json.
    template <class T>
        requires detail::HasWriteJson<T>
    JsonWriter& value(const T& v) {
        write_json(*this, v);
        return *this;
    }
    // Ranges of writable values, as arrays (not strings, which are values above).
    template <std::ranges::sized_range R>
        requires(!std::is_convertible_v<const R&, std::string_view>) && (!detail::HasWriteJson<R>) &&
                (!detail::IsOptional<R>::value) && (detail::json_writable<R>())
    JsonWriter& value(const R& items) {
        begin_array();
        for (const auto& item : items) value(item);
        return end_array();
    }
    // Text that is already JSON, written as the next value unchecked.
    JsonWriter& raw(std::string_view json);

private:
    JsonWriter& open(char c);
    JsonWriter& close(char c);
    JsonWriter& number(double v);
    void separate() {  // the comma before a value that follows another
        if (need_comma_) out_ += ',';
        need_comma_ = true;
    }
    std::string& out_;
    bool need_comma_ = false;  // a value was written at this level, and no key since
};

}  // namespace kiln
