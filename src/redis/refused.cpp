#include "redis/refused.hpp"

#include <array>
#include <charconv>
#include <cstddef>

namespace kiln::redis::detail {
namespace {

// The arguments of a command Args wrote ("*N\r\n" then "$L\r\n<bytes>\r\n" each).
class Reader {
public:
    explicit Reader(std::string_view wire) : rest_(wire) {
        size_t eol = rest_.find("\r\n");
        rest_ = eol == rest_.npos ? std::string_view() : rest_.substr(eol + 2);
    }
    bool next(std::string_view* arg) {
        if (rest_.size() < 4 || rest_[0] != '$') return false;
        size_t eol = rest_.find("\r\n");
        size_t len = 0;
        if (eol == rest_.npos || std::from_chars(rest_.data() + 1, rest_.data() + eol, len).ec != std::errc())
            return false;
        if (rest_.size() < eol + 2 + len + 2) return false;
        *arg = rest_.substr(eol + 2, len);
        rest_.remove_prefix(eol + 2 + len + 2);
        return true;
    }

private:
    std::string_view rest_;
};

bool same(std::string_view arg, std::string_view upper) {
    if (arg.size() != upper.size()) return false;
    for (size_t i = 0; i < arg.size(); ++i) {
        char c = arg[i];
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        if (c != upper[i]) return false;
    }
    return true;
}

template <size_t N>
bool one_of(std::string_view arg, const std::array<std::string_view, N>& names) {
    for (std::string_view n : names)
        if (same(arg, n)) return true;
    return false;
}

constexpr std::array<std::string_view, 6> kPubSub = {"SUBSCRIBE",  "PSUBSCRIBE",  "SSUBSCRIBE",
                                                    "UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE"};
constexpr std::array<std::string_view, 5> kTransaction = {"MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH"};
constexpr std::array<std::string_view, 8> kConnection = {"SELECT", "AUTH", "HELLO", "RESET",
                                                         "QUIT",   "MONITOR", "SYNC", "PSYNC"};
constexpr std::array<std::string_view, 10> kBlocking = {"BLPOP",    "BRPOP",    "BRPOPLPUSH", "BLMOVE", "BLMPOP",
                                                        "BZPOPMIN", "BZPOPMAX", "BZMPOP",     "WAIT",   "WAITAOF"};

}  // namespace

std::string refusal(std::string_view wire) {
    Reader in(wire);
    std::string_view name, arg;
    if (!in.next(&name)) return "";
    if (one_of(name, kPubSub))
        return "kiln refuses " + std::string(name) + " on a command connection: use Client::subscribe (a subscription "
               "has a connection of its own)";
    if (one_of(name, kTransaction))
        return "kiln refuses " + std::string(name) + ": a transaction on the connection every coroutine of the loop shares "
               "would take in their commands; use EVAL (a script runs atomically)";
    bool changes = one_of(name, kConnection);
    if (!changes && same(name, "CLIENT") && in.next(&arg)) changes = same(arg, "REPLY") || same(arg, "TRACKING");
    if (changes)
        return "kiln refuses " + std::string(name) + ": it changes the connection every coroutine of the loop shares "
               "(the URL sets the database and the user)";
    bool blocks = one_of(name, kBlocking);
    if (!blocks && (same(name, "XREAD") || same(name, "XREADGROUP")))
        while (!blocks && in.next(&arg)) blocks = same(arg, "BLOCK");
    if (blocks)
        return "kiln refuses " + std::string(name) + ": it would hold the connection every coroutine of the loop shares "
               "until it returns; poll instead (LPOP, XREAD without BLOCK)";
    return "";
}

bool keeps_order(std::string_view wire) {
    Reader in(wire);
    std::string_view name;
    return in.next(&name) && (same(name, "PUBLISH") || same(name, "SPUBLISH"));
}

}  // namespace kiln::redis::detail
