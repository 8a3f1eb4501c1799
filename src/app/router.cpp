#include "app/router.hpp"

#include <stdexcept>

namespace kiln::app {
namespace {
struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

std::string_view next_segment(std::string_view& rest) {
    size_t slash = rest.find('/');
    std::string_view seg = rest.substr(0, slash);
    rest = slash == rest.npos ? std::string_view() : rest.substr(slash + 1);
    return seg;
}

// "/a/b/" and "/a/b" are the same route; the root stays "/".
std::string_view strip(std::string_view path) {
    if (!path.empty() && path[0] == '/') path.remove_prefix(1);
    if (!path.empty() && path.back() == '/') path.remove_suffix(1);
    return path;
}
}  // namespace

struct Router::Node {
    // Static children: compared one by one while few (cheaper than hashing the
    // segment), moved to the hash map past kLinearChildren.
    static constexpr size_t kLinearChildren = 8;
    std::vector<std::pair<std::string, std::unique_ptr<Node>>> few;
    std::unordered_map<std::string, std::unique_ptr<Node>, StringHash, std::equal_to<>> many;
    std::unique_ptr<Node> param;
    std::string param_name;
    std::unique_ptr<Node> rest;  // "*name": terminal
    std::string rest_name;
    const void* targets[kMethodCount] = {};
    uint32_t allowed = 0;

    const Node* child(std::string_view seg) const {
        if (!many.empty()) {
            auto it = many.find(seg);
            return it == many.end() ? nullptr : it->second.get();
        }
        for (const auto& [name, node] : few)
            if (name == seg) return node.get();
        return nullptr;
    }
    Node* add_child(std::string_view seg) {
        if (Node* c = const_cast<Node*>(child(seg))) return c;
        if (many.empty() && few.size() < kLinearChildren) return few.emplace_back(std::string(seg), std::make_unique<Node>()).second.get();
        for (auto& [name, node] : few) many.emplace(std::move(name), std::move(node));
        few.clear();
        return many.emplace(std::string(seg), std::make_unique<Node>()).first->second.get();
    }
};

Router::Router() : root_(std::make_unique<Node>()) {}
Router::~Router() = default;

void Router::add(Method method, std::string_view pattern, const void* target) {
    auto bad = [&](const char* why) {
        throw std::invalid_argument("route '" + std::string(pattern) + "': " + why);
    };
    if (pattern.empty() || pattern[0] != '/') bad("must start with '/'");
    if (method == Method::Other) bad("unsupported method");
    // The whole pattern is checked before the tree is touched: a refused pattern must
    // leave no node behind, or its parameter names would refuse later, valid routes.
    // (A conflict or a duplicate below is found only on nodes that already exist.)
    size_t params = 0;
    for (std::string_view rest = strip(pattern); !rest.empty();) {
        std::string_view seg = next_segment(rest);
        if (seg.empty()) bad("empty segment");
        if (seg[0] != ':' && seg[0] != '*') continue;
        if (seg.size() == 1) bad("parameter without a name");
        if (++params > kMaxParams) bad("too many parameters");
        if (seg[0] == '*' && !rest.empty()) bad("'*' must be the last segment");
    }
    Node* n = root_.get();
    for (std::string_view rest = strip(pattern); !rest.empty();) {
        std::string_view seg = next_segment(rest);
        if (seg[0] == ':' || seg[0] == '*') {
            std::string_view name = seg.substr(1);
            bool is_rest = seg[0] == '*';
            std::unique_ptr<Node>& child = is_rest ? n->rest : n->param;
            std::string& child_name = is_rest ? n->rest_name : n->param_name;
            if (!child) {
                child = std::make_unique<Node>();
                child_name = name;
            } else if (child_name != name) {
                bad("conflicts with another parameter name at the same position");
            }
            n = child.get();
        } else {
            n = n->add_child(seg);
        }
    }
    size_t mi = static_cast<size_t>(method);
    if (n->targets[mi]) bad("registered twice for this method");
    n->targets[mi] = target;
    n->allowed |= method_bit(method);
    if (method == Method::Get) n->allowed |= method_bit(Method::Head);
}

const Router::Node* Router::find(const Node* n, std::string_view rest, uint32_t want, Match& m) const {
    if (rest.empty()) {
        if (n->allowed & want) return n;
        if (n->rest && (n->rest->allowed & want) && m.param_count < kMaxParams) {  // "*rest" may match nothing
            m.params[m.param_count++] = {n->rest_name, {}};
            return n->rest.get();
        }
        return nullptr;
    }
    std::string_view after = rest;
    std::string_view seg = next_segment(after);
    if (const Node* c = n->child(seg))
        if (const Node* r = find(c, after, want, m)) return r;
    if (n->param && !seg.empty() && m.param_count < kMaxParams) {
        size_t saved = m.param_count;
        m.params[m.param_count++] = {n->param_name, seg};
        if (const Node* r = find(n->param.get(), after, want, m)) return r;
        m.param_count = saved;
    }
    if (n->rest && (n->rest->allowed & want) && m.param_count < kMaxParams) {
        m.params[m.param_count++] = {n->rest_name, rest};
        return n->rest.get();
    }
    return nullptr;
}

void Router::match(Method method, std::string_view path, Match& out) const {
    out.target = nullptr;
    out.allowed = 0;
    out.param_count = 0;
    // A route for this method first, wherever it is in the order (GET /files/*path
    // serves /files/upload though POST /files/upload exists); then any route of the
    // path, for the 405 and its Allow. (HEAD's bit is set wherever GET is.)
    const Node* n = method == Method::Other ? nullptr : find(root_.get(), strip(path), method_bit(method), out);
    if (!n) {
        out.param_count = 0;
        n = find(root_.get(), strip(path), ~0u, out);
    }
    if (!n) {
        out.param_count = 0;
        return;
    }
    out.allowed = n->allowed;
    if (method == Method::Other) return;
    out.target = n->targets[static_cast<size_t>(method)];
    if (!out.target && method == Method::Head) out.target = n->targets[static_cast<size_t>(Method::Get)];
}

}  // namespace kiln::app
