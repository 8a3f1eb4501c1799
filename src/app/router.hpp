// The route table: a tree with one level per path segment. Each node has static
// children (hash map, O(1) per segment), at most one ":param" child and at most
// one "*rest" child; look-up walks one node per segment, so its cost depends on
// the path's depth, not on how many routes exist. Static beats parameter beats
// rest, with backtracking when a preferred branch has no route further down for the
// request's method (then, for a 405, for any method).
// Built before serving; read-only (and so safe to share between threads) after.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <kiln/http_types.hpp>

namespace kiln::app {

inline uint32_t method_bit(Method m) { return 1u << static_cast<unsigned>(m); }

class Router {
public:
    static constexpr size_t kMaxParams = kMaxRouteParams;

    Router();
    ~Router();

    // Registers `target` for (method, pattern). Throws std::invalid_argument for a
    // malformed pattern, a duplicate route or two parameter names at one position;
    // the table is then as it was before the call.
    void add(Method method, std::string_view pattern, const void* target);

    struct Match {
        const void* target = nullptr;  // null: no route for this method (see allowed)
        uint32_t allowed = 0;          // method_bit()s registered at the matched path; 0: 404
        size_t param_count = 0;
        RouteParam* params = nullptr;  // caller's storage for kMaxParams; values view the path
    };
    // HEAD falls back to GET. The path must start with '/'. REQUIRES: out.params set.
    void match(Method method, std::string_view path, Match& out) const;

private:
    struct Node;
    // The first node in preference order under `n` that matches `rest` and has one of
    // the methods in `want` (method_bit()s).
    const Node* find(const Node* n, std::string_view rest, uint32_t want, Match& m) const;
    std::unique_ptr<Node> root_;
};

}  // namespace kiln::app
