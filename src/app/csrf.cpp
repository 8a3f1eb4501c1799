#include <kiln/csrf.hpp>

#include <openssl/crypto.h>

#include "app/csrf_key.hpp"
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
    if (auto t = s.get(kTokenKey)) return std::string(*t);
    std::string t = util::random_hex(32);
    s.set(kTokenKey, t);
    return t;
}

Middleware csrf_protect() {
    return [](Request& req, Response& res, Next& next) {
        if (unsafe(req.method())) {
            std::string_view sent = sent_token(req);
            Session* s = req.existing_session();  // no session: no token was ever issued
            auto expected = s ? s->get(kTokenKey) : std::nullopt;
            if (!expected || sent.size() != expected->size() ||
                CRYPTO_memcmp(sent.data(), expected->data(), sent.size()) != 0) {
                res.status(403).text("Forbidden: missing or invalid CSRF token\n");
                return;
            }
        }
        next();
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
