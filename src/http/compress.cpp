#include "http/compress.hpp"

#include <brotli/encode.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>

namespace kiln::http {
namespace {

// gzip framing (windowBits 15 + 16), the default memory level.
constexpr int kGzipWindow = 15 + 16;
constexpr int kGzipMemLevel = 8;
// A streamed body keeps its coder for as long as it runs (server-sent events: hours):
// small windows and tables there. Measured after 400 KB through each (heap in use,
// bytes allocated): gzip 38 KiB instead of 256; zstd level 3 about 120 KiB and 280 KiB
// instead of 944 and 1,661 with its level's own tables; brotli quality 1 about 23 KiB
// and 14 KiB instead of 1,007 and 1,130 at quality 4 (its tables grow from quality 2).
constexpr int kStreamGzipWindow = 12 + 16;
constexpr int kStreamGzipMemLevel = 5;
constexpr int kStreamZstdWindowLog = 15;
constexpr int kStreamZstdHashLog = 12;
constexpr int kStreamZstdChainLog = 12;
constexpr int kStreamBrotliWindow = 16;
constexpr int kStreamBrotliMaxQuality = 1;

// The output grows in steps this large while a coder has more to say.
constexpr size_t kStep = 16 * 1024;

// One deflate state per thread, reset between bodies (setting one up costs more than
// coding a small page).
struct GzipContext {
    z_stream z{};
    int level = -1;
    bool ok = false;
    ~GzipContext() {
        if (ok) deflateEnd(&z);
    }
    bool ready(int want) {
        if (ok && level == want) return deflateReset(&z) == Z_OK;
        if (ok) deflateEnd(&z);
        z = z_stream{};
        ok = deflateInit2(&z, want, Z_DEFLATED, kGzipWindow, kGzipMemLevel, Z_DEFAULT_STRATEGY) == Z_OK;
        level = want;
        return ok;
    }
};

struct ZstdContext {
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ~ZstdContext() { ZSTD_freeCCtx(cctx); }
};

bool deflate_all(z_stream& z, std::string_view in, int flush, std::string* out) {
    size_t start = out->size();
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    for (;;) {
        size_t at = out->size();
        out->resize(at + std::max(kStep, static_cast<size_t>(deflateBound(&z, z.avail_in))));
        z.next_out = reinterpret_cast<Bytef*>(out->data() + at);
        z.avail_out = static_cast<uInt>(out->size() - at);
        int rc = deflate(&z, flush);
        out->resize(out->size() - z.avail_out);
        if (rc == Z_STREAM_ERROR) {
            out->resize(start);
            return false;
        }
        if (flush == Z_FINISH ? rc == Z_STREAM_END : (z.avail_in == 0 && z.avail_out != 0)) return true;
    }
}

bool brotli_all(BrotliEncoderState* s, std::string_view in, BrotliEncoderOperation op, std::string* out) {
    size_t start = out->size();
    size_t avail_in = in.size();
    const auto* next_in = reinterpret_cast<const uint8_t*>(in.data());
    for (;;) {
        size_t at = out->size();
        out->resize(at + kStep);
        size_t avail_out = kStep;
        auto* next_out = reinterpret_cast<uint8_t*>(out->data() + at);
        if (!BrotliEncoderCompressStream(s, op, &avail_in, &next_in, &avail_out, &next_out, nullptr)) {
            out->resize(start);
            return false;
        }
        out->resize(out->size() - avail_out);
        bool done = op == BROTLI_OPERATION_FINISH ? BrotliEncoderIsFinished(s)
                                                  : avail_in == 0 && !BrotliEncoderHasMoreOutput(s);
        if (done) return true;
    }
}

bool zstd_all(ZSTD_CCtx* c, std::string_view in, ZSTD_EndDirective end, std::string* out) {
    size_t start = out->size();
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    for (;;) {
        size_t at = out->size();
        out->resize(at + std::max(kStep, ZSTD_compressBound(in.size() - input.pos)));
        ZSTD_outBuffer output{out->data() + at, out->size() - at, 0};
        size_t left = ZSTD_compressStream2(c, &output, &input, end);
        out->resize(at + output.pos);
        if (ZSTD_isError(left)) {
            out->resize(start);
            return false;
        }
        if (left == 0 && input.pos == input.size) return true;
    }
}

class GzipStream final : public StreamEncoder {
public:
    explicit GzipStream(int level) {
        ok_ = deflateInit2(&z_, level, Z_DEFLATED, kStreamGzipWindow, kStreamGzipMemLevel, Z_DEFAULT_STRATEGY) == Z_OK;
    }
    ~GzipStream() override {
        if (ok_) deflateEnd(&z_);
    }
    bool ok() const { return ok_; }
    bool write(std::string_view in, std::string* out) override { return deflate_all(z_, in, Z_SYNC_FLUSH, out); }
    bool finish(std::string* out) override { return deflate_all(z_, {}, Z_FINISH, out); }

private:
    z_stream z_{};
    bool ok_ = false;
};

class BrotliStream final : public StreamEncoder {
public:
    explicit BrotliStream(int quality) : s_(BrotliEncoderCreateInstance(nullptr, nullptr, nullptr)) {
        if (!s_) return;
        BrotliEncoderSetParameter(s_, BROTLI_PARAM_QUALITY, static_cast<uint32_t>(std::min(quality, kStreamBrotliMaxQuality)));
        BrotliEncoderSetParameter(s_, BROTLI_PARAM_LGWIN, kStreamBrotliWindow);
    }
    ~BrotliStream() override {
        if (s_) BrotliEncoderDestroyInstance(s_);
    }
    bool ok() const { return s_ != nullptr; }
    bool write(std::string_view in, std::string* out) override { return brotli_all(s_, in, BROTLI_OPERATION_FLUSH, out); }
    bool finish(std::string* out) override { return brotli_all(s_, {}, BROTLI_OPERATION_FINISH, out); }

private:
    BrotliEncoderState* s_;
};

class ZstdStream final : public StreamEncoder {
public:
    explicit ZstdStream(int level) : c_(ZSTD_createCCtx()) {
        if (!c_) return;
        ZSTD_CCtx_setParameter(c_, ZSTD_c_compressionLevel, level);
        ZSTD_CCtx_setParameter(c_, ZSTD_c_windowLog, kStreamZstdWindowLog);
        ZSTD_CCtx_setParameter(c_, ZSTD_c_hashLog, kStreamZstdHashLog);
        ZSTD_CCtx_setParameter(c_, ZSTD_c_chainLog, kStreamZstdChainLog);
    }
    ~ZstdStream() override { ZSTD_freeCCtx(c_); }
    bool ok() const { return c_ != nullptr; }
    bool write(std::string_view in, std::string* out) override { return zstd_all(c_, in, ZSTD_e_flush, out); }
    bool finish(std::string* out) override { return zstd_all(c_, {}, ZSTD_e_end, out); }

private:
    ZSTD_CCtx* c_;
};

template <class T>
std::unique_ptr<StreamEncoder> checked(std::unique_ptr<T> e) {
    if (!e->ok()) return nullptr;
    return e;
}

}  // namespace

std::string_view coding_name(Coding c) {
    switch (c) {
        case Coding::Gzip: return "gzip";
        case Coding::Brotli: return "br";
        case Coding::Zstd: return "zstd";
        case Coding::Identity: break;
    }
    return "identity";
}

bool compress(Coding c, std::string_view in, const CodingLevels& levels, std::string* out) {
    switch (c) {
        case Coding::Gzip: {
            thread_local GzipContext ctx;
            return ctx.ready(std::clamp(levels.gzip, 1, 9)) && deflate_all(ctx.z, in, Z_FINISH, out);
        }
        case Coding::Brotli: {
            size_t at = out->size();
            size_t size = BrotliEncoderMaxCompressedSize(in.size());
            if (size == 0) return false;
            out->resize(at + size);
            if (!BrotliEncoderCompress(std::clamp(levels.brotli, 0, 11), BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT,
                                       in.size(), reinterpret_cast<const uint8_t*>(in.data()), &size,
                                       reinterpret_cast<uint8_t*>(out->data() + at))) {
                out->resize(at);
                return false;
            }
            out->resize(at + size);
            return true;
        }
        case Coding::Zstd: {
            thread_local ZstdContext ctx;
            if (!ctx.cctx) return false;
            size_t at = out->size();
            out->resize(at + ZSTD_compressBound(in.size()));
            size_t n = ZSTD_compressCCtx(ctx.cctx, out->data() + at, out->size() - at, in.data(), in.size(),
                                         std::clamp(levels.zstd, 1, 19));
            if (ZSTD_isError(n)) {
                out->resize(at);
                return false;
            }
            out->resize(at + n);
            return true;
        }
        case Coding::Identity: out->append(in); return true;
    }
    return false;
}

std::unique_ptr<StreamEncoder> StreamEncoder::make(Coding c, const CodingLevels& levels) {
    switch (c) {
        case Coding::Gzip: return checked(std::make_unique<GzipStream>(std::clamp(levels.gzip, 1, 9)));
        case Coding::Brotli: return checked(std::make_unique<BrotliStream>(std::clamp(levels.brotli, 0, 11)));
        case Coding::Zstd: return checked(std::make_unique<ZstdStream>(std::clamp(levels.zstd, 1, 19)));
        case Coding::Identity: break;
    }
    return nullptr;
}

}  // namespace kiln::http
