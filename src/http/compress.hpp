// Content codings for response bodies (RFC 9110 §8.4): gzip (zlib), br (brotli) and
// zstd. compress() codes a whole body in one call, with contexts kept per thread;
// StreamEncoder codes a streamed body write by write, each write's output complete
// (flushed) so nothing a handler wrote waits in the coder. Which coding a response
// gets is the layer above's choice (app/compression); this file only codes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kiln::http {

enum class Coding : uint8_t { Identity, Gzip, Brotli, Zstd };

std::string_view coding_name(Coding c);  // "gzip", "br", "zstd", "identity"

// Levels: gzip 1..9, brotli 0..11, zstd 1..19 (clamped).
struct CodingLevels {
    int gzip = 5;
    int brotli = 4;
    int zstd = 3;
};

// Appends `in`, coded, to *out; false (and *out as it was) if the coder failed.
bool compress(Coding c, std::string_view in, const CodingLevels& levels, std::string* out);

class StreamEncoder {
public:
    // nullptr for Identity, or if the coder cannot be set up.
    static std::unique_ptr<StreamEncoder> make(Coding c, const CodingLevels& levels);
    virtual ~StreamEncoder() = default;
    // Codes `in` and appends everything it makes so far to *out (flushed).
    virtual bool write(std::string_view in, std::string* out) = 0;
    // Ends the coded stream (its trailer) into *out.
    virtual bool finish(std::string* out) = 0;
};

}  // namespace kiln::http
