// Fuzzes kiln::JsonWriter (src/app/json_writer.cpp), whose output goes to browsers
// and API clients: whatever bytes a string holds, the text written is JSON that
// nlohmann parses; a string comes back as itself when it is valid UTF-8, and as what
// nlohmann's own dump(replace) makes of it when not (one U+FFFD per ill-formed run);
// keys are escaped like values; numbers taken from the input read back equal.
#include <kiln/json_writer.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    std::string out;
    kiln::JsonWriter w(out);
    int64_t i = 0;
    double d = 0;
    if (size >= 8) {
        std::memcpy(&i, data, 8);
        std::memcpy(&d, data, 8);
    }
    // [in, {in: i}, d, [in, true, null, {}]]
    w.begin_array().value(in).begin_object().key(in).value(i).end_object().value(d);
    w.begin_array().value(in).value(true).null().begin_object().end_object().end_array().end_array();

    nlohmann::json j;
    try {
        j = nlohmann::json::parse(out);
    } catch (const nlohmann::json::exception&) {
        FUZZ_CHECK(!"JsonWriter wrote text nlohmann cannot parse");
    }
    std::string want = valid_utf8(in) ? std::string(in)
                                      : nlohmann::json::parse(nlohmann::json(std::string(in))
                                                                  .dump(-1, ' ', false,
                                                                        nlohmann::json::error_handler_t::replace))
                                            .get<std::string>();
    FUZZ_CHECK(j.is_array() && j.size() == 4);
    FUZZ_CHECK(j[0].get<std::string>() == want);
    FUZZ_CHECK(j[3][0].get<std::string>() == want);
    FUZZ_CHECK(j[1].size() == 1 && j[1].at(want).get<int64_t>() == i);
    if (std::isfinite(d)) FUZZ_CHECK(j[2].get<double>() == d);
    else FUZZ_CHECK(j[2].is_null());
    return 0;
}
