// Values an object carries for the app, one per type: a Request's from middleware to
// handler (Request::set_local), a WebSocket's for its life (WebSocket::set_local).
#pragma once
#include <any>
#include <utility>
#include <vector>

namespace kiln::detail {

class Locals {
public:
    template <class T>
    void set(T value) {
        for (auto& [key, v] : values_)
            if (key == &kKey<T>) {
                v = std::move(value);
                return;
            }
        values_.emplace_back(&kKey<T>, std::move(value));
    }
    template <class T>
    T* get() {
        for (auto& [key, v] : values_)
            if (key == &kKey<T>) return std::any_cast<T>(&v);
        return nullptr;
    }
    void clear() { values_.clear(); }

private:
    template <class T>
    static inline const char kKey = 0;  // one address per type
    std::vector<std::pair<const void*, std::any>> values_;
};

}  // namespace kiln::detail
