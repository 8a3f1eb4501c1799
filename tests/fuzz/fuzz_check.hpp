// Shared by the fuzz targets: FUZZ_CHECK aborts with the failed condition, so
// libFuzzer records the input as a crash and the message names the broken invariant.
#pragma once
#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                               \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, \
                         #cond);                                                       \
            std::abort();                                                              \
        }                                                                              \
    } while (0)
