// Fuzzes app::Router against a slow reference written here from its rules: every route
// is tried on the path and the lowest-ranked wins (static < parameter < rest; a pattern
// that ends < a rest matching nothing), among the patterns with a route for the
// request's method (HEAD: GET's too), else among all (a 405 and its Allow); a refused
// add() changes nothing. Input: lines,
// routes up to the first empty line, then paths; a line's first byte is its method
// (G H P U D A O C T X: Get..Other). add() throws only std::invalid_argument, exactly when
// the reference refuses; match() gives the reference's target, allowed methods and
// parameters, which view the path; every static route matches its own pattern.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "app/router.hpp"
#include "fuzz_check.hpp"

using kiln::Method;
using kiln::RouteParam;
using kiln::app::method_bit;
using kiln::app::Router;

namespace {

constexpr size_t kMaxRoutes = 32;
constexpr size_t kMaxPaths = 32;
char tags[kMaxRoutes];  // route i's target is &tags[i]

Method method_of(char c) {
    switch (c) {
        case 'G': return Method::Get;
        case 'H': return Method::Head;
        case 'P': return Method::Post;
        case 'U': return Method::Put;
        case 'D': return Method::Delete;
        case 'A': return Method::Patch;
        case 'O': return Method::Options;
        case 'C': return Method::Connect;
        case 'T': return Method::Trace;
        case 'X': return Method::Other;
        default: return static_cast<Method>(static_cast<uint8_t>(c) % kiln::kMethodCount);
    }
}

// A path or pattern as the router reads it: one leading and one trailing '/' dropped,
// then split on '/', a final empty piece not counted. Offsets point into `whole`.
struct Segment {
    std::string_view text;
    size_t offset;
};
std::vector<Segment> segments(std::string_view whole, std::string_view* stripped) {
    std::string_view s = whole;
    if (!s.empty() && s[0] == '/') s.remove_prefix(1);
    if (!s.empty() && s.back() == '/') s.remove_suffix(1);
    *stripped = s;
    std::vector<Segment> out;
    size_t pos = 0;
    while (pos < s.size()) {
        size_t slash = s.find('/', pos);
        size_t end = slash == s.npos ? s.size() : slash;
        out.push_back({s.substr(pos, end - pos), pos});
        pos = slash == s.npos ? s.size() : slash + 1;
    }
    return out;
}

enum Rank : int { Static = 0, Param = 1, Rest = 2 };

struct Piece {
    Rank rank;
    std::string text;  // static text, or the parameter's name
    bool operator==(const Piece&) const = default;
};

struct Route {
    Method method;
    std::vector<Piece> pieces;
    const void* target;
};

// The reference's add(): the canonical pieces, or false where the router must throw.
bool reference_add(const std::vector<Route>& table, Method method, std::string_view pattern,
                   std::vector<Piece>* out) {
    if (pattern.empty() || pattern[0] != '/' || method == Method::Other) return false;
    std::string_view stripped;
    std::vector<Segment> segs = segments(pattern, &stripped);
    size_t params = 0;
    for (size_t i = 0; i < segs.size(); ++i) {
        std::string_view s = segs[i].text;
        if (s.empty()) return false;
        if (s[0] != ':' && s[0] != '*') {
            out->push_back({Static, std::string(s)});
            continue;
        }
        if (s.size() == 1 || ++params > Router::kMaxParams) return false;
        if (s[0] == '*' && i + 1 != segs.size()) return false;
        out->push_back({s[0] == '*' ? Rest : Param, std::string(s.substr(1))});
    }
    for (const Route& r : table) {
        // Same position after the same prefix: one parameter (or rest) name only.
        for (size_t i = 0; i < out->size() && i < r.pieces.size(); ++i) {
            const Piece &mine = (*out)[i], &theirs = r.pieces[i];
            if (mine.rank != Static && mine.rank == theirs.rank && mine.text != theirs.text) return false;
            if (!(mine == theirs)) break;
        }
        if (r.pieces == *out && r.method == method) return false;
    }
    return true;
}

struct Expected {
    const void* target = nullptr;
    uint32_t allowed = 0;
    std::vector<std::pair<std::string, std::string_view>> params;
};

// Whether `pieces` match the path; if so the rank sequence and the parameters.
bool try_route(const std::vector<Piece>& pieces, std::string_view stripped, const std::vector<Segment>& segs,
               std::vector<int>* ranks, std::vector<std::pair<std::string, std::string_view>>* params) {
    size_t j = 0;
    for (const Piece& p : pieces) {
        ranks->push_back(p.rank);
        if (p.rank == Rest) {
            params->push_back({p.text, j < segs.size() ? stripped.substr(segs[j].offset) : std::string_view()});
            return true;
        }
        if (j == segs.size()) return false;
        std::string_view s = segs[j++].text;
        if (p.rank == Static && s != p.text) return false;
        if (p.rank == Param) {
            if (s.empty()) return false;
            params->push_back({p.text, s});
        }
    }
    return j == segs.size();
}

// The methods a pattern has routes for (GET's route answers HEAD too).
uint32_t allowed_of(const std::vector<Route>& table, const std::vector<Piece>& pieces) {
    uint32_t a = 0;
    for (const Route& r : table)
        if (r.pieces == pieces) a |= method_bit(r.method) | (r.method == Method::Get ? method_bit(Method::Head) : 0);
    return a;
}

Expected reference_match(const std::vector<Route>& table, Method method, std::string_view path) {
    std::string_view stripped;
    std::vector<Segment> segs = segments(path, &stripped);
    const Route* best = nullptr;
    std::vector<int> best_ranks;
    Expected e;
    auto pick = [&](uint32_t want) {
        for (const Route& r : table) {
            std::vector<int> ranks;
            std::vector<std::pair<std::string, std::string_view>> params;
            if (!(allowed_of(table, r.pieces) & want)) continue;
            if (!try_route(r.pieces, stripped, segs, &ranks, &params)) continue;
            if (best && !(ranks < best_ranks)) continue;
            best = &r;
            best_ranks = std::move(ranks);
            e.params = std::move(params);
        }
    };
    if (method != Method::Other) pick(method_bit(method));
    if (!best) pick(~0u);
    if (!best) {
        e.params.clear();
        return e;
    }
    const void* get = nullptr;
    for (const Route& r : table) {
        if (r.pieces != best->pieces) continue;
        e.allowed |= method_bit(r.method);
        if (r.method == Method::Get) {
            e.allowed |= method_bit(Method::Head);
            get = r.target;
        }
        if (r.method == method && method != Method::Other) e.target = r.target;
    }
    if (!e.target && method == Method::Head) e.target = get;
    return e;
}

struct FullMatch : Router::Match {
    RouteParam storage[Router::kMaxParams];
    FullMatch() { params = storage; }
};

void check_match(const Router& router, const std::vector<Route>& table, Method method, std::string_view path) {
    FullMatch m;
    router.match(method, path, m);
    Expected e = reference_match(table, method, path);
    FUZZ_CHECK(m.target == e.target);
    FUZZ_CHECK(m.allowed == e.allowed);
    if (m.target) FUZZ_CHECK((m.allowed & method_bit(method)) != 0);
    FUZZ_CHECK(m.param_count <= Router::kMaxParams);
    FUZZ_CHECK(m.param_count == e.params.size());
    for (size_t i = 0; i < m.param_count; ++i) {
        const RouteParam& p = m.params[i];
        FUZZ_CHECK(p.name == e.params[i].first);
        FUZZ_CHECK(p.value == e.params[i].second);
        FUZZ_CHECK(!p.name.empty());
        if (!p.value.empty())
            FUZZ_CHECK(p.value.data() >= path.data() && p.value.data() + p.value.size() <= path.data() + path.size());
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    Router router;
    std::vector<Route> table;
    bool routes = true;
    size_t added = 0, matched = 0;
    while (!in.empty()) {
        size_t nl = in.find('\n');
        std::string_view line = in.substr(0, nl);
        in = nl == in.npos ? std::string_view() : in.substr(nl + 1);
        if (line.empty()) {
            routes = false;
            continue;
        }
        Method method = method_of(line[0]);
        std::string_view text = line.substr(1);
        if (routes) {
            if (added == kMaxRoutes) continue;
            const void* target = &tags[added++];
            std::vector<Piece> pieces;
            bool expect_ok = reference_add(table, method, text, &pieces);
            bool ok = true;
            try {
                router.add(method, text, target);
            } catch (const std::invalid_argument&) {  // documented; anything else escapes and crashes
                ok = false;
            }
            FUZZ_CHECK(ok == expect_ok);
            if (ok) table.push_back({method, std::move(pieces), target});
        } else if (matched++ < kMaxPaths && !text.empty() && text[0] == '/') {  // match() requires '/'
            check_match(router, table, method, text);
        }
    }
    // A static route is found by its own pattern, whatever else is registered.
    for (const Route& r : table) {
        std::string pattern;
        bool is_static = true;
        for (const Piece& p : r.pieces) {
            is_static &= p.rank == Static;
            pattern += "/" + p.text;
        }
        if (pattern.empty()) pattern = "/";
        if (!is_static) continue;
        FullMatch m;
        router.match(r.method, pattern, m);
        FUZZ_CHECK(m.target == r.target && m.param_count == 0);
    }
    return 0;
}
