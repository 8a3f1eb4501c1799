// expect: error kiln::db::Model: a string_view or span field would point into a statement's row
#include <cstdint>
#include <string_view>
#include <tuple>
#include <vector>

#include <kiln/model.hpp>

struct Note {
    int64_t id = 0;
    std::string_view text;
};

template <>
struct kiln::db::Model<Note> {
    static constexpr auto table = "notes";
    static constexpr auto fields = std::make_tuple(field("id", &Note::id), field("text", &Note::text));
};

std::vector<Note> all(kiln::db::Database& db) { return kiln::db::all<Note>(db); }
