// Cookie jar (see the header).
#include "bench/cookies.hpp"

namespace kiln::bench {
namespace {

std::string_view trim(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x + 32);
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y + 32);
        if (x != y) return false;
    }
    return true;
}

// True if the attributes hold Max-Age=N with N <= 0 (the cookie is to be removed).
bool expires_now(std::string_view attrs) {
    while (!attrs.empty()) {
        size_t semi = attrs.find(';');
        std::string_view a = trim(attrs.substr(0, semi));
        size_t eq = a.find('=');
        if (eq != std::string_view::npos && iequals(trim(a.substr(0, eq)), "max-age")) {
            std::string_view v = trim(a.substr(eq + 1));
            if (!v.empty() && (v[0] == '-' || v.find_first_not_of('0') == std::string_view::npos))
                return true;
        }
        if (semi == std::string_view::npos) break;
        attrs.remove_prefix(semi + 1);
    }
    return false;
}

}  // namespace

CookieJar::Change CookieJar::apply(std::string_view set_cookie) {
    size_t semi = set_cookie.find(';');
    std::string_view pair = set_cookie.substr(0, semi);
    std::string_view attrs = semi == std::string_view::npos ? std::string_view() : set_cookie.substr(semi + 1);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return Change::None;
    std::string_view name = trim(pair.substr(0, eq));
    std::string_view value = trim(pair.substr(eq + 1));
    if (name.empty()) return Change::None;
    for (char c : name)
        if (c <= ' ' || c == ';' || c == ',' || c == 0x7f) return Change::None;
    // A quoted value is sent back as it came, quotes included, as browsers do.
    for (char c : value)
        if (c == ';' || static_cast<unsigned char>(c) < 0x20) return Change::None;

    bool remove = expires_now(attrs);
    for (size_t i = 0; i < cookies_.size(); ++i) {
        if (cookies_[i].first != name) continue;
        if (remove) {
            cookies_.erase(cookies_.begin() + static_cast<std::ptrdiff_t>(i));
            rebuild();
            return Change::Removed;
        }
        if (cookies_[i].second == value) return Change::None;
        cookies_[i].second.assign(value);
        rebuild();
        return Change::Set;
    }
    if (remove) return Change::None;
    cookies_.emplace_back(std::string(name), std::string(value));
    rebuild();
    return Change::Set;
}

const std::string* CookieJar::find(std::string_view name) const {
    for (const auto& c : cookies_)
        if (c.first == name) return &c.second;
    return nullptr;
}

void CookieJar::rebuild() {
    line_.clear();
    if (cookies_.empty()) return;
    line_ = "Cookie: ";
    for (size_t i = 0; i < cookies_.size(); ++i) {
        if (i != 0) line_ += "; ";
        line_ += cookies_[i].first;
        line_ += '=';
        line_ += cookies_[i].second;
    }
    line_ += "\r\n";
}

}  // namespace kiln::bench
