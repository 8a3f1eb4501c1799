// Fuzzes the value helpers FormReader applies to every submitted field
// (src/app/form_values.cpp): utf8_length must agree with an independent UTF-8
// check and count code points; trim must give a substring without the spaces it
// removes, and be idempotent; a datetime-local value that parses must print back as
// its canonical form and parse again to the same time; numbers that parse must
// survive a print and parse round trip, and no double may be infinite or NaN;
// a label keeps the name's length and has no '_' left.
#include <kiln/form_reader.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);

    auto n = kiln::utf8_length(in);
    FUZZ_CHECK(n.has_value() == valid_utf8(in));
    if (n) {
        size_t starts = 0;
        for (char c : in) starts += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        FUZZ_CHECK(*n == starts);
    }

    std::string_view t = kiln::trim(in);
    if (!t.empty()) {
        FUZZ_CHECK(t.data() >= in.data() && t.data() + t.size() <= in.data() + in.size());
        FUZZ_CHECK(!is_space(t.front()) && !is_space(t.back()));
    }
    for (size_t i = 0; in.data() + i < t.data(); ++i) FUZZ_CHECK(is_space(in[i]));
    FUZZ_CHECK(kiln::trim(t) == t);

    if (auto when = kiln::parse_datetime_local(in)) {
        std::string printed = kiln::datetime_local(*when);
        std::string canonical(in);
        if (canonical.size() == 16) canonical += ":00";
        canonical[10] = 'T';
        FUZZ_CHECK(printed == canonical);
        FUZZ_CHECK(kiln::parse_datetime_local(printed) == when);
    }

    long long i = 0;
    if (kiln::detail::parse_form_number(in, i)) {
        long long again = 0;
        FUZZ_CHECK(kiln::detail::parse_form_number(kiln::detail::format_form_number(i), again) && again == i);
    }
    unsigned long long u = 0;
    if (kiln::detail::parse_form_number(in, u)) FUZZ_CHECK(!in.empty() && in.front() != '-');
    if (kiln::detail::parse_form_number(in, u)) {
        unsigned long long again = 0;
        FUZZ_CHECK(kiln::detail::parse_form_number(kiln::detail::format_form_number(u), again) && again == u);
    }
    double d = 0;
    if (kiln::detail::parse_form_number(in, d)) {
        FUZZ_CHECK(std::isfinite(d));
        double printed = 0;  // %g rounds to 6 digits: it must still read back as a finite number
        FUZZ_CHECK(kiln::detail::parse_form_number(kiln::detail::format_form_number(d), printed));
    }

    std::string label = kiln::label_of(in);
    FUZZ_CHECK(label.size() == in.size() && label.find('_') == std::string::npos);
    return 0;
}
