// Argon2id through libsodium, on kiln's blocking-work threads.
#include <sodium.h>

#include <atomic>
#include <stdexcept>

#include <kiln/auth.hpp>
#include <kiln/blocking.hpp>

#include "auth/hash_slot.hpp"
#include "auth/wipe.hpp"

namespace kiln::auth {
namespace {
void init_sodium() {
    static const bool ready = sodium_init() >= 0;  // thread-safe once; idempotent in libsodium too
    if (!ready) throw std::runtime_error("libsodium failed to initialise");
}

std::atomic<int> hashing{0};  // slots taken
std::atomic<void (*)()> request_hook{nullptr};
}  // namespace

void set_slot_request_hook(void (*hook)()) { request_hook.store(hook, std::memory_order_release); }

HashSlot::HashSlot() {
    if (void (*hook)() = request_hook.load(std::memory_order_acquire)) hook();
    if (hashing.fetch_add(1, std::memory_order_acq_rel) >= kMaxHashing) {
        hashing.fetch_sub(1, std::memory_order_acq_rel);
        throw HashingBusy();
    }
}
HashSlot::~HashSlot() { hashing.fetch_sub(1, std::memory_order_acq_rel); }

Task<std::string> hash_password(std::string password, PasswordCost cost) {
    WipeOnExit wipe(password);  // also when no slot or no thread takes it
    init_sodium();
    HashSlot slot;
    co_return co_await blocking([&] {
        char out[crypto_pwhash_STRBYTES];
        if (crypto_pwhash_str_alg(out, password.data(), password.size(), cost.passes, cost.memory,
                                  crypto_pwhash_ALG_ARGON2ID13) != 0)
            throw std::runtime_error("password hashing failed (out of memory, or a cost libsodium refuses)");
        return std::string(out);
    });
}

bool password_needs_rehash(const std::string& hash, PasswordCost cost) {
    init_sodium();
    // 1: another cost; -1: not an Argon2id string (another algorithm): made again too.
    return hash.size() >= crypto_pwhash_STRBYTES ||
           crypto_pwhash_str_needs_rehash(hash.c_str(), cost.passes, cost.memory) != 0;
}

Task<bool> verify_password(std::string hash, std::string password) {
    WipeOnExit wipe(password);  // also when no slot or no thread takes it
    init_sodium();
    HashSlot slot;
    co_return co_await blocking([&] {
        bool ok = hash.size() < crypto_pwhash_STRBYTES &&
                  crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
        return ok;
    });
}

}  // namespace kiln::auth
