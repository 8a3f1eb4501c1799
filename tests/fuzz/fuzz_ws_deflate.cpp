// Fuzzes permessage-deflate (src/http/ws_deflate.cpp): the client's offer as it reads
// Sec-WebSocket-Extensions, and a client's compressed message as it inflates. Checked:
// an accepted offer's window is 9..15 and its answer names both no-context-takeover
// parameters; inflation never passes its limit, and what kiln deflates inflates back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/ws_deflate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    if (auto a = kiln::http::negotiate_deflate(in)) {
        FUZZ_CHECK(a->params.enabled);
        FUZZ_CHECK(a->params.server_window_bits >= 9 && a->params.server_window_bits <= 15);
        FUZZ_CHECK(a->header.starts_with("permessage-deflate; server_no_context_takeover; client_no_context_takeover"));
    }
    constexpr uint64_t kLimit = 64 * 1024;
    std::string out;
    bool too_big = false;
    bool ok = kiln::http::inflate_message(in, kLimit, out, &too_big);
    FUZZ_CHECK(out.size() <= kLimit + 1);
    FUZZ_CHECK(!too_big || !ok);
    std::string coded, back;
    kiln::http::deflate_message(in.substr(0, 8192), 9 + static_cast<int>(size % 7), 1 + static_cast<int>(size / 7 % 9),
                                coded);
    FUZZ_CHECK(kiln::http::inflate_message(coded, kLimit, back, &too_big));
    FUZZ_CHECK(back == in.substr(0, 8192));
    return 0;
}
