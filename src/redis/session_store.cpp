// The session store "redis": kiln::AsyncSessionStore on a redis::PerLoop.
//
// Value: 8 bytes of creation time (seconds, little-endian), then the session's
// serialized data. TTL: the idle timeout, capped by what is left of the absolute
// age at creation; every load refreshes it to the idle timeout (GETEX), and a
// load past the absolute age deletes the key and reports no session.
#include <kiln/redis.hpp>

#include <algorithm>
#include <stdexcept>

namespace kiln::redis {
namespace {

// An update writes only where the key still exists, keeping its creation time and TTL.
constexpr std::string_view kUpdate =
    "local v = redis.call('GET', KEYS[1]) "
    "if not v then return 0 end "
    "redis.call('SET', KEYS[1], string.sub(v, 1, 8) .. ARGV[1], 'KEEPTTL') "
    "return 1";

// A rename moves the creation time and the TTL with the data, and the old key is gone.
constexpr std::string_view kRename =
    "local v = redis.call('GET', KEYS[1]) "
    "if not v then return 0 end "
    "local ttl = redis.call('PTTL', KEYS[1]) "
    "redis.call('DEL', KEYS[1]) "
    "if ttl > 0 then redis.call('SET', KEYS[2], string.sub(v, 1, 8) .. ARGV[1], 'PX', ttl) "
    "else redis.call('SET', KEYS[2], string.sub(v, 1, 8) .. ARGV[1]) end "
    "return 1";

class RedisSessionStore final : public AsyncSessionStore {
public:
    RedisSessionStore(Options client, SessionStoreOptions o) : clients_(std::move(client)), o_(std::move(o)) {
        if (o_.idle_timeout_s <= 0 || o_.max_age_s <= 0) throw std::invalid_argument("session timeouts must be positive");
    }

    Task<std::optional<std::string>> load(SessionId id, int64_t now) override {
        std::string k = key(id);
        Reply r = co_await clients_.local().command("GETEX", k, "EX", o_.idle_timeout_s);
        std::optional<std::string> v = r.optional_string();
        if (!v) co_return std::nullopt;
        if (v->size() < 8) co_return std::nullopt;  // not one of ours
        int64_t created = 0;
        for (int i = 7; i >= 0; --i) created = created << 8 | static_cast<uint8_t>((*v)[static_cast<size_t>(i)]);
        if (now - created >= o_.max_age_s) {
            (void)clients_.local().command("DEL", k);  // its reply is not awaited
            co_return std::nullopt;
        }
        v->erase(0, 8);
        co_return v;
    }

    Task<bool> save(SessionId id, int64_t now, std::string data, SessionStore::SaveMode mode) override {
        check(data);
        std::string k = key(id);
        if (mode == SessionStore::SaveMode::Update) {
            Reply r = co_await clients_.local().command("EVAL", kUpdate, 1, k, data);
            co_return r.integer() == 1;
        }
        std::string value(8, '\0');
        for (int i = 0; i < 8; ++i) value[static_cast<size_t>(i)] = static_cast<char>((static_cast<uint64_t>(now) >> (8 * i)) & 0xff);
        value += data;
        int64_t ttl = std::min(o_.idle_timeout_s, o_.max_age_s);
        Reply r = co_await clients_.local().command("SET", k, value, "EX", ttl, "NX");
        co_return !r.is_nil();
    }

    Task<bool> rename(SessionId from, SessionId to, int64_t, std::string data) override {
        check(data);
        std::string old_key = key(from), new_key = key(to);
        Reply r = co_await clients_.local().command("EVAL", kRename, 2, old_key, new_key, data);
        co_return r.integer() == 1;
    }

    Task<> remove(SessionId id) override {
        std::string k = key(id);
        co_await clients_.local().command("DEL", k);
    }

    size_t max_bytes() const override { return o_.max_bytes; }

    Task<std::string> check() override {
        Reply r = co_await clients_.local().command("PING");  // throws Error(Io) while Redis is away
        if (r.type() != Reply::Type::Status) co_return "Redis answered PING with something else";
        co_return std::string();
    }

private:
    std::string key(const SessionId& id) const {
        static const char hex[] = "0123456789abcdef";
        std::string k = o_.prefix + "session:";
        for (uint8_t b : id) {
            k += hex[b >> 4];
            k += hex[b & 15];
        }
        return k;
    }
    void check(const std::string& data) const {
        if (data.size() > o_.max_bytes)
            throw std::length_error("session of " + std::to_string(data.size()) + " bytes; the store takes at most " +
                                    std::to_string(o_.max_bytes));
    }

    PerLoop clients_;
    SessionStoreOptions o_;
};

}  // namespace

std::shared_ptr<AsyncSessionStore> session_store(Options client, SessionStoreOptions options) {
    return std::make_shared<RedisSessionStore>(std::move(client), std::move(options));
}

}  // namespace kiln::redis
