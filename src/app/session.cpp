#include <kiln/session.hpp>

#include <cstring>
#include <stdexcept>

#include <kiln/app.hpp>  // HttpError

#include "app/csrf_internal.hpp"
#include "app/session_binding.hpp"
#include "util/random.hpp"

namespace kiln {
namespace {
// Serialized entry: kind (1 byte), key length (2), value length (4), key, value.
constexpr size_t kEntryOverhead = 7;
constexpr size_t kMaxKey = 0xffff;

void put_le(std::string& out, uint64_t v, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(const char* p, size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
    return v;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;  // ids are written in lower case; anything else is not one of ours
}

}  // namespace

bool parse_session_id(std::string_view text, SessionId& out) {
    if (text.size() != 2 * out.size()) return false;
    for (size_t i = 0; i < out.size(); ++i) {
        int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return true;
}

void Session::serialize(const std::vector<Entry>& entries, std::string& out) {
    out.clear();
    for (const Entry& e : entries) {
        out.push_back(static_cast<char>(e.kind));
        put_le(out, e.key.size(), 2);
        put_le(out, e.value.size(), 4);
        out.append(e.key).append(e.value);
    }
}

bool Session::deserialize(std::string_view data, std::vector<Entry>& out) {
    // Entries already in `out` are overwritten in place: a loop's Request (and its
    // Session) is reused, so a session's strings keep their capacity between requests.
    size_t n = 0;
    while (!data.empty()) {
        if (data.size() < kEntryOverhead) return false;
        auto kind = static_cast<Kind>(data[0]);
        size_t klen = get_le(data.data() + 1, 2), vlen = get_le(data.data() + 3, 4);
        if (kind != Kind::String && kind != Kind::Int && kind != Kind::Blob) return false;
        if (data.size() - kEntryOverhead < klen + vlen || (kind == Kind::Int && vlen != 8)) return false;
        if (n == out.size()) out.emplace_back();
        Entry& e = out[n++];
        e.key.assign(data.substr(kEntryOverhead, klen));
        e.kind = kind;
        e.value.assign(data.substr(kEntryOverhead + klen, vlen));
        data.remove_prefix(kEntryOverhead + klen + vlen);
    }
    out.resize(n);
    return true;
}

const Session::Entry* Session::find(std::string_view key) const {
    for (const Entry& e : entries_)
        if (e.key == key) return &e;
    return nullptr;
}

std::optional<std::string_view> Session::get(std::string_view key) const {
    const Entry* e = find(key);
    if (!e || e->kind == Kind::Int) return std::nullopt;
    return std::string_view(e->value);
}

std::optional<int64_t> Session::get_int(std::string_view key) const {
    const Entry* e = find(key);
    if (!e || e->kind != Kind::Int) return std::nullopt;
    return static_cast<int64_t>(get_le(e->value.data(), 8));
}

std::optional<std::span<const std::byte>> Session::get_blob(std::string_view key) const {
    const Entry* e = find(key);
    if (!e || e->kind == Kind::Int) return std::nullopt;
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(e->value.data()), e->value.size());
}

void Session::put(std::string_view key, Kind kind, std::string_view value) {
    if (key.size() > kMaxKey) throw std::length_error("session key longer than 65535 bytes");
    Entry* existing = const_cast<Entry*>(find(key));
    size_t old = existing ? kEntryOverhead + existing->key.size() + existing->value.size() : 0;
    size_t next = size_ - old + kEntryOverhead + key.size() + value.size();
    size_t limit = binding_ ? binding_->max_bytes : SIZE_MAX;
    if (next > limit)
        throw std::length_error("session would hold " + std::to_string(next) + " bytes; the store takes at most " +
                                std::to_string(limit) + " (config session.max_bytes)");
    if (existing) {
        existing->kind = kind;
        existing->value.assign(value);
    } else {
        entries_.push_back({std::string(key), kind, std::string(value)});
    }
    size_ = next;
    dirty_ = true;
    keep();
}

void Session::set(std::string_view key, std::string_view value) { put(key, Kind::String, value); }

void Session::set_int(std::string_view key, int64_t value) {
    std::string bytes;
    put_le(bytes, static_cast<uint64_t>(value), 8);
    put(key, Kind::Int, bytes);
}

void Session::set_blob(std::string_view key, std::span<const std::byte> value) {
    put(key, Kind::Blob, std::string_view(reinterpret_cast<const char*>(value.data()), value.size()));
}

bool Session::erase(std::string_view key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->key != key) continue;
        size_ -= kEntryOverhead + it->key.size() + it->value.size();
        entries_.erase(it);
        dirty_ = true;
        return true;
    }
    return false;
}

void Session::clear() {
    if (!entries_.empty()) dirty_ = true;
    entries_.clear();
    size_ = 0;
}

void Session::fresh_id() {
    util::random_bytes(id_.data(), id_.size());
    util::to_hex(id_.data(), id_.size(), hex_);
}

namespace {
CookieOptions session_cookie(const Session::Binding& b) {
    CookieOptions c;  // Path=/, HttpOnly, SameSite=Lax; no expiry: gone with the browser
    c.secure = b.secure;
    return c;
}
}  // namespace

std::string_view Session::id() const {
    keep();
    return {hex_, 32};
}

void Session::keep() const {
    if (!new_ || kept_ || !binding_) return;
    kept_ = true;
    send_cookie();
}

void Session::send_cookie() const {
    binding_->response->cookie(binding_->options->cookie, std::string_view(hex_, 32), session_cookie(*binding_));
}

bool Session::begin(Binding* binding, std::string_view cookie_value, bool create) {
    if (binding->closed) throw HttpError(503, "the session was written: it is not read again");
    size_ = 0;
    new_ = kept_ = dirty_ = regenerated_ = dropped_ = false;
    make_if_gone_ = true;
    bool loaded = false;
    if (parse_session_id(cookie_value, id_)) {
        if (!binding->remote) {
            loaded = binding->store->load(id_, binding->now, load_buf_);
        } else if (binding->failed) {  // never a fresh session in place of one we could not read
            throw HttpError(503, "the session store is unavailable");
        } else {
            loaded = binding->found;  // the app loaded it into load_buf_
        }
    }
    if (loaded && deserialize(load_buf_, entries_)) {
        binding_ = binding;
        std::memcpy(hex_, cookie_value.data(), sizeof hex_);
        size_ = load_buf_.size();
        return true;
    }
    entries_.clear();  // a record that does not parse is treated as no session at all
    if (!create) return false;
    binding_ = binding;
    new_ = true;  // stored, and its cookie set, only once it holds data (keep())
    fresh_id();
    return true;
}

void Session::regenerate(bool log_in) {
    if (!binding_) throw std::logic_error("Session::regenerate outside a request");
    make_if_gone_ = log_in && make_if_gone_;  // (a renewal and a log-in in one request: the renewal's rule)
    if (!new_ && !regenerated_) old_id_ = id_;
    regenerated_ = !new_ || regenerated_;
    fresh_id();
    erase(app::kCsrfSessionKey);
    dirty_ = true;
    // The cookie names the new id: at once for a stored session, and for a new one
    // already kept (its earlier cookie named the old id); else keep() sends it later.
    if (!new_ || kept_) send_cookie();
}

void Session::destroy() {
    if (!binding_) throw std::logic_error("Session::destroy outside a request");
    // The stored session goes when the request ends. What the handler writes after
    // this starts a new session, with a new id, as a first visit would.
    if (!new_) {
        dropped_ = true;
        drop_id_ = regenerated_ ? old_id_ : id_;
    }
    entries_.clear();
    size_ = 0;
    new_ = true;
    kept_ = dirty_ = regenerated_ = false;
    fresh_id();
    binding_->response->clear_cookie(binding_->options->cookie, session_cookie(*binding_));
}

Session::Write Session::end(bool save) {
    using K = Write::Kind;
    Write w;
    if (!binding_) return w;
    binding_ = nullptr;
    if (!save) return w;
    if (new_) {
        if (!kept_) {  // nothing in it and its id never seen: it never existed
            if (dropped_) {  // destroyed, and nothing after
                w.kind = K::Remove;
                w.id = drop_id_;
            }
            return w;
        }
        w.kind = K::Create;
        if (dropped_) {  // destroyed, then a new one started
            w.kind = K::Replace;
            w.from = drop_id_;
        }
    } else if (!dirty_) {
        return w;  // the load already refreshed its idle deadline
    } else if (regenerated_) {
        w.kind = K::Rename;
        w.from = old_id_;
        w.make_if_gone = make_if_gone_;
    } else {
        w.kind = entries_.empty() ? K::Remove : K::Update;  // nothing left to keep: free its room
    }
    w.id = id_;
    if (w.kind != K::Remove) serialize(entries_, w.data);
    return w;
}

void Session::write_to(SessionStore& store, const Write& w, int64_t now) {
    using K = Write::Kind;
    switch (w.kind) {
    case K::None: return;
    case K::Create: store.save(w.id, now, w.data, SessionStore::SaveMode::Create); return;
    case K::Update: store.save(w.id, now, w.data, SessionStore::SaveMode::Update); return;
    case K::Rename:  // `from` gone meanwhile (a double-submitted log-in renamed it first): the
                     // response names the new id, so it must exist (unless a renewal: a
                     // log-out removed it, and stands); the old one stays gone
        if (!store.rename(w.from, w.id, now, w.data) && w.make_if_gone)
            store.save(w.id, now, w.data, SessionStore::SaveMode::Create);
        return;
    case K::Replace:
        store.remove(w.from);
        store.save(w.id, now, w.data, SessionStore::SaveMode::Create);
        return;
    case K::Remove: store.remove(w.id); return;
    }
}

}  // namespace kiln
