// redis::parse_url: what a redis.url says (checked at start by the configuration).
#include <kiln/redis.hpp>

#include <charconv>

namespace kiln::redis {

namespace {
// The URL as an error message may show it: its password replaced by ***, since the
// message goes to logs and terminals. Everything up to the last @ may be password
// (one with an unescaped / or @ in it, or a URL without its scheme); a unix:// path
// holds none.
std::string without_password(std::string_view url) {
    if (url.starts_with("unix://")) return std::string(url);
    size_t scheme = url.find("://");
    size_t begin = scheme == std::string_view::npos ? 0 : scheme + 3;
    size_t at = url.rfind('@');
    if (at == std::string_view::npos || at < begin) return std::string(url);
    std::string_view userinfo = url.substr(begin, at - begin);
    size_t colon = userinfo.find(':');
    std::string user(colon == std::string_view::npos ? std::string_view() : userinfo.substr(0, colon + 1));
    return std::string(url.substr(0, begin)) + user + "***" + std::string(url.substr(at));
}

[[noreturn]] void bad_url(std::string_view url, const std::string& why) {
    throw Error(Error::Kind::Misuse, "bad Redis URL \"" + without_password(url) + "\": " + why);
}

int number(std::string_view url, std::string_view text, int min, int max, const char* what) {
    int v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
        bad_url(url, std::string(what) + " must be a number from " + std::to_string(min) + " to " + std::to_string(max));
    return v;
}

std::string percent_decoded(std::string_view url, std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
        if (i + 2 >= s.size() || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0) bad_url(url, "a % not followed by two hex digits");
        out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
        i += 2;
    }
    return out;
}
}  // namespace

Endpoint parse_url(std::string_view url) {
    Endpoint e;
    std::string_view rest = url;
    if (rest.starts_with("unix://")) {
        rest.remove_prefix(7);
        size_t q = rest.find('?');
        e.unix_path = std::string(rest.substr(0, q));
        if (e.unix_path.empty() || e.unix_path[0] != '/') bad_url(url, "a unix socket path must be absolute");
        if (q != std::string_view::npos) {
            std::string_view query = rest.substr(q + 1);
            if (!query.starts_with("db=")) bad_url(url, "the only query parameter is db=N");
            e.db = number(url, query.substr(3), 0, 1 << 20, "db");
        }
        return e;
    }
    if (!rest.starts_with("redis://")) bad_url(url, "it must start with redis:// or unix://");
    rest.remove_prefix(8);
    size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos) {
        std::string_view db = rest.substr(slash + 1);
        if (!db.empty()) e.db = number(url, db, 0, 1 << 20, "the database number");
    }
    if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
        std::string_view userinfo = authority.substr(0, at);
        authority.remove_prefix(at + 1);
        size_t colon = userinfo.find(':');
        if (colon == std::string_view::npos) {
            e.password = percent_decoded(url, userinfo);  // redis://secret@host: a password alone
        } else {
            e.user = percent_decoded(url, userinfo.substr(0, colon));
            e.password = percent_decoded(url, userinfo.substr(colon + 1));
        }
    }
    std::string_view host = authority;
    if (authority.starts_with('[')) {  // [::1]:6379
        size_t close = authority.find(']');
        if (close == std::string_view::npos) bad_url(url, "an IPv6 address without its closing ]");
        host = authority.substr(1, close - 1);
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after[0] != ':') bad_url(url, "junk after the IPv6 address");
            e.port = number(url, after.substr(1), 1, 65535, "the port");
        }
    } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        e.port = number(url, authority.substr(colon + 1), 1, 65535, "the port");
    }
    if (host.empty()) bad_url(url, "no host");
    e.host = std::string(host);
    return e;
}

}  // namespace kiln::redis
