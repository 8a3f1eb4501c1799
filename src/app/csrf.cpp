#include <kiln/csrf.hpp>

#include <openssl/crypto.h>

#include <ctime>
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
    if (auto t = s.get(kTokenKey)) return std::string(*t);
    std::string t = util::random_hex(32);
    s.set(kTokenKey, t);
    return t;
}

Middleware csrf_protect() { return app::CsrfCheck{}; }

namespace app {

void CsrfCheck::operator()(Request& req, Response& res, Next& next) const {
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
}

bool csrf_token_matches(SessionStore& store, std::string_view session_id, std::string_view sent, int64_t now) {
    SessionId id;
    std::string data;
    std::vector<SessionRecord::Entry> entries;
    if (sent.empty() || !parse_session_id(session_id, id) || !store.load(id, now, data) ||
        !SessionRecord::read(data, entries))
        return false;
    for (const SessionRecord::Entry& e : entries)
        if (e.key == kTokenKey && e.kind != SessionRecord::Kind::Int)
            return sent.size() == e.value.size() && CRYPTO_memcmp(sent.data(), e.value.data(), sent.size()) == 0;
    return false;
}

}  // namespace app

std::function<bool(const Form&)> App::upload_gate(const Request& req) const {
    if (!impl_->csrf || !impl_->store || !unsafe(req.method())) return {};
    // Copies: the request's buffers move on while the body is still arriving.
    std::string header(req.header(kCsrfHeader).value_or(""));
    std::string sid(req.cookie(impl_->session_options.cookie).value_or(""));
    SessionStore* store = impl_->store;
    return [header = std::move(header), sid = std::move(sid), store](const Form& fields_so_far) {
        std::string_view sent = header;
        if (sent.empty()) sent = fields_so_far.get(kCsrfField).value_or("");
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
