#include <kiln/csrf.hpp>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <ctime>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/app_impl.hpp"
#include "app/csrf_internal.hpp"
#include "app/session_record.hpp"
#include "util/random.hpp"

namespace kiln {
namespace {
constexpr std::string_view kTokenKey = app::kCsrfSessionKey;
constexpr std::string_view kFlashPrefix = "_flash.";

bool unsafe(Method m) { return m == Method::Post || m == Method::Put || m == Method::Patch || m == Method::Delete; }

std::string_view sent_token(Request& req) {
    if (auto h = req.header(kCsrfHeader)) return *h;
    if (auto f = req.form().get(kCsrfField)) return *f;
    return {};
}
}  // namespace

std::string csrf_token(Request& req) {
    Session& s = req.session();
    std::string t;
    if (auto kept = s.get(kTokenKey)) {
        t = *kept;
    } else {
        t = app::session_csrf_token(s.id());
        s.set(kTokenKey, t);
    }
    return app::mask_csrf_token(t);
}

Middleware csrf_protect() { return app::CsrfCheck{}; }

namespace app {
namespace {
int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool from_hex(std::string_view hex, unsigned char* out) {
    for (size_t i = 0; i < hex.size() / 2; ++i) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<unsigned char>(hi * 16 + lo);
    }
    return hex.size() % 2 == 0;
}

constexpr size_t kMaxTokenBytes = 64;
}  // namespace

// SHA-256 of the session id, domain-separated. The id is 128 random bits and never
// shown, so the token cannot be made without it, and the hash does not give it away.
// Two first pages of one session, made at once, so write one token, not two of which
// the later-stored would refuse the other page's form. A new id (log-in) is a new token.
std::string session_csrf_token(std::string_view session_id) {
    std::string input = "kiln csrf token v1\n";
    input.append(session_id);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_Digest(input.data(), input.size(), digest, &n, EVP_sha256(), nullptr) != 1 || n != 32)
        throw std::runtime_error("kiln: SHA-256 failed");
    std::string out(2 * n, '\0');
    util::to_hex(digest, n, out.data());
    return out;
}

// BREACH: a compressed page that reflects input next to a secret leaks the secret
// through its size. The page never carries the session's token itself, but a fresh
// one-time pad and the token XORed with it (as Rails does): hex(pad) hex(pad ^ token).
std::string mask_csrf_token(std::string_view stored) {
    unsigned char token[kMaxTokenBytes], pad[kMaxTokenBytes];
    size_t n = stored.size() / 2;
    if (n == 0 || n > kMaxTokenBytes || !from_hex(stored, token)) return std::string(stored);
    util::random_bytes(pad, n);
    std::string out(4 * n, '\0');
    util::to_hex(pad, n, out.data());
    for (size_t i = 0; i < n; ++i) token[i] ^= pad[i];
    util::to_hex(token, n, out.data() + 2 * n);
    return out;
}

bool csrf_token_equal(std::string_view sent, std::string_view stored) {
    if (stored.empty()) return false;  // kiln never stores one; an empty one would match an empty one sent
    if (sent.size() == 2 * stored.size() && stored.size() % 2 == 0 && stored.size() / 2 <= kMaxTokenBytes) {
        size_t n = stored.size() / 2;  // masked: pad, then the token under it
        unsigned char pad[kMaxTokenBytes], masked[kMaxTokenBytes], token[kMaxTokenBytes];
        if (!from_hex(sent.substr(0, 2 * n), pad) || !from_hex(sent.substr(2 * n), masked) || !from_hex(stored, token))
            return false;
        unsigned char diff = 0;
        for (size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>((masked[i] ^ pad[i]) ^ token[i]);
        return diff == 0;
    }
    // The token as stored (a client that kept one from before masking, or a header
    // set by a script that read it from the session some other way).
    return !sent.empty() && sent.size() == stored.size() && CRYPTO_memcmp(sent.data(), stored.data(), sent.size()) == 0;
}

void CsrfCheck::operator()(Request& req, Response& res, Next& next) const {
    if (unsafe(req.method())) {
        std::string_view sent = sent_token(req);
        Session* s = req.existing_session();  // no session: no token was ever issued
        auto expected = s ? s->get(kTokenKey) : std::nullopt;
        if (!expected || !app::csrf_token_equal(sent, *expected)) {
            res.status(403).text("Forbidden: missing or invalid CSRF token\n");
            return;
        }
    }
    next();
}

bool csrf_token_matches(SessionStore& store, std::string_view session_id, std::string_view sent, int64_t now) {
    SessionId id;
    std::string data;
    std::vector<SessionRecord::Entry> entries;
    if (sent.empty() || !parse_session_id(session_id, id) || !store.load(id, now, data) ||
        !SessionRecord::read(data, entries))
        return false;
    for (const SessionRecord::Entry& e : entries)
        if (e.key == kTokenKey && e.kind != SessionRecord::Kind::Int) return csrf_token_equal(sent, e.value);
    return false;
}

}  // namespace app

std::function<bool(const Form&)> App::upload_gate(const Request& req) const {
    if (!impl_->csrf || !impl_->store || !unsafe(req.method())) return {};
    // Copies: the request's buffers move on while the body is still arriving.
    // A header sent empty is the token sent, as csrf_protect() reads it: the field
    // is read only when there is no header at all.
    std::optional<std::string> header;
    if (auto h = req.header(kCsrfHeader)) header.emplace(*h);
    std::string sid(req.cookie(impl_->session_options.cookie).value_or(""));
    SessionStore* store = impl_->store;
    return [header = std::move(header), sid = std::move(sid), store](const Form& fields_so_far) {
        std::string_view sent = header ? std::string_view(*header) : fields_so_far.get(kCsrfField).value_or("");
        return app::csrf_token_matches(*store, sid, sent, static_cast<int64_t>(time(nullptr)));
    };
}

void flash(Request& req, std::string_view kind, std::string_view message) {
    std::string key(kFlashPrefix);
    req.session().set(key.append(kind), message);
}

std::string take_flash(Request& req, std::string_view kind) {
    Session* s = req.existing_session();
    if (!s) return {};
    std::string key(kFlashPrefix);
    key.append(kind);
    auto v = s->get(key);
    if (!v) return {};
    std::string out(*v);
    s->erase(key);
    return out;
}

}  // namespace kiln
