// Fuzzes the in-place chunked decoder: the body is decoded in one call and again in
// pieces, as a connection sees it arrive from the socket. Both runs must agree on the
// status, the bytes consumed and the decoded payload. Input layout: byte 0 picks the
// body limit, bytes 1..4 seed the split points, the rest is the chunked body.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_check.hpp"
#include "http/chunked.hpp"

using namespace kiln::http;

namespace {

struct Run {
    ChunkedStatus status;
    size_t read, write;
    uint64_t body;
};

Run decode_whole(std::string& buf, size_t max_body) {
    ChunkedDecoder d;
    size_t read = 0, write = 0;
    ChunkedStatus s = d.decode(buf.data(), &read, &write, buf.size(), max_body);
    return {s, read, write, d.body_size()};
}

// Feeds the decoder growing prefixes, cut at pseudo-random points (1..span bytes).
Run decode_split(std::string& buf, size_t max_body, uint32_t seed) {
    ChunkedDecoder d;
    size_t read = 0, write = 0, end = 0;
    size_t span = 1 + (seed >> 24) % 64;  // small spans reach byte-by-byte feeding
    ChunkedStatus s = ChunkedStatus::NeedMore;
    while (s == ChunkedStatus::NeedMore && end < buf.size()) {
        seed = seed * 1103515245u + 12345u;
        end += 1 + (seed >> 16) % span;
        if (end > buf.size()) end = buf.size();
        size_t before_read = read, before_write = write;
        s = d.decode(buf.data(), &read, &write, end, max_body);
        FUZZ_CHECK(before_read <= read && before_write <= write);
        FUZZ_CHECK(write <= read && read <= end);
        FUZZ_CHECK(d.body_size() == write);
        // NeedMore means every byte handed over was used.
        if (s == ChunkedStatus::NeedMore) FUZZ_CHECK(read == end);
    }
    return {s, read, write, d.body_size()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 5) return 0;
    static constexpr size_t kBodyLimits[] = {kMaxBodyBytes, 0, 1, 16, 100, 4096};
    size_t max_body = kBodyLimits[data[0] % (sizeof kBodyLimits / sizeof kBodyLimits[0])];
    uint32_t seed;
    std::memcpy(&seed, data + 1, 4);
    const std::string input(reinterpret_cast<const char*>(data + 5), size - 5);

    std::string a = input, b = input;
    Run whole = decode_whole(a, max_body);
    Run split = decode_split(b, max_body, seed);

    FUZZ_CHECK(whole.write <= whole.read && whole.read <= input.size());
    FUZZ_CHECK(whole.body == whole.write && whole.body <= max_body);
    FUZZ_CHECK(whole.status == split.status);
    FUZZ_CHECK(whole.read == split.read);
    FUZZ_CHECK(whole.write == split.write);
    FUZZ_CHECK(std::memcmp(a.data(), b.data(), whole.write) == 0);
    // Bytes the decoder has not reached are left untouched.
    FUZZ_CHECK(a.compare(whole.read, std::string::npos, input, whole.read) == 0);
    if (whole.status == ChunkedStatus::Done) FUZZ_CHECK(whole.read >= 5);  // "0\r\n\r\n"
    return 0;
}
