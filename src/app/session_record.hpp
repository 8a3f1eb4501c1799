// The serialized form of a session, what a SessionStore keeps: for each entry its
// kind (1 byte), key length (2, little-endian), value length (4), key and value.
// For the app layer (the CSRF check reads a token without loading a Session), the
// unit tests and the fuzzers; the format is Session's own.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <kiln/session.hpp>

namespace kiln::app {

struct SessionRecord {
    using Entry = Session::Entry;
    using Kind = Session::Kind;
    static void write(const std::vector<Entry>& entries, std::string& out) { Session::serialize(entries, out); }
    // False for bytes that are not a record. Entries already in `out` are reused.
    static bool read(std::string_view data, std::vector<Entry>& out) { return Session::deserialize(data, out); }
};

}  // namespace kiln::app
