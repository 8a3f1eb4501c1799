// Coroutine frames (kiln::Task's), kept per thread by size class: a request's handler,
// its middleware and the awaits under them make and free a handful of frames of the
// same few sizes each, and a free list hands them back without malloc's locks and
// bins (bench/results/techempower.md: malloc and free were 8 % of a /db worker).
// A class keeps a bounded number of frames; larger frames go to operator new. A
// frame freed on another thread than it was made on joins that thread's lists.
// Under AddressSanitizer every frame is its own allocation, so a use after free is
// still caught.
#include <kiln/task.hpp>

#include <cstdint>
#include <new>

namespace kiln::detail {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPooled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kPooled = false;
#else
constexpr bool kPooled = true;
#endif
#else
constexpr bool kPooled = true;
#endif

constexpr size_t kGrain = 64;     // class c holds frames of (c + 1) * kGrain bytes
constexpr size_t kClasses = 24;   // up to 1.5 KiB
constexpr uint32_t kKept = 256;   // free frames kept per class and thread

struct FreeFrame {
    FreeFrame* next;
};

struct FramePool {
    FreeFrame* head[kClasses] = {};
    uint32_t count[kClasses] = {};
    bool gone = false;  // the thread is exiting: frees go straight back

    ~FramePool() {
        gone = true;
        for (FreeFrame*& h : head)
            while (FreeFrame* f = h) {
                h = f->next;
                ::operator delete(f);
            }
    }
};

thread_local FramePool pool;

}  // namespace

void* frame_alloc(size_t n) {
    size_t c = (n - 1) / kGrain;
    if (!kPooled || c >= kClasses) return ::operator new(n);
    FramePool& p = pool;
    if (FreeFrame* f = p.head[c]) {
        p.head[c] = f->next;
        --p.count[c];
        return f;
    }
    return ::operator new((c + 1) * kGrain);
}

void frame_free(void* frame, size_t n) noexcept {
    size_t c = (n - 1) / kGrain;
    if (kPooled && c < kClasses) {
        FramePool& p = pool;
        if (!p.gone && p.count[c] < kKept) {
            auto* f = static_cast<FreeFrame*>(frame);
            f->next = p.head[c];
            p.head[c] = f;
            ++p.count[c];
            return;
        }
    }
    ::operator delete(frame);
}

}  // namespace kiln::detail
