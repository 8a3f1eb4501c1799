// Values an object carries for the app, one per type: a Request's from middleware to
// handler (Request::set_local), a WebSocket's for its life (WebSocket::set_local).
// Each value has a place of its own: a pointer get() gave stays valid while values
// of other types are set, until its own type's is set again (which replaces it).
#pragma once
#include <any>
#include <memory>
#include <utility>
#include <vector>

namespace kiln::detail {

class Locals {
public:
    template <class T>
    void set(T value) {
        for (auto& [key, v] : values_)
            if (key == &kKey<T>) {
                *v = std::move(value);
                return;
            }
        // Not in the vector itself: a value std::any keeps inline would move with it.
        values_.emplace_back(&kKey<T>, std::make_unique<std::any>(std::move(value)));
    }
    template <class T>
    T* get() {
        for (auto& [key, v] : values_)
            if (key == &kKey<T>) return std::any_cast<T>(v.get());
        return nullptr;
    }
    void clear() { values_.clear(); }

private:
    template <class T>
    static inline const char kKey = 0;  // one address per type
    std::vector<std::pair<const void*, std::unique_ptr<std::any>>> values_;
};

}  // namespace kiln::detail
