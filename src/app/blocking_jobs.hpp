// How much of kiln::blocking's work this process still has, for a stop: serve() does
// not return to main() (whose objects a job may use by reference) while jobs run.
#pragma once
#include <cstddef>

namespace kiln::app {

// Jobs queued or running on the blocking-work threads (0 if none were ever made).
size_t blocking_jobs();

}  // namespace kiln::app
