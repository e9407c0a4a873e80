// Two pieces of the opening work at once: the steps after the decode that need different inputs
// (the model's finish and the analyses' matching; the wait states' layout and the rebuilt queue)
// each take a core instead of waiting for each other.
#pragma once

#include <functional>
#include <system_error>
#include <thread>

namespace upshot {

// Runs `side` on a thread of its own while the calling thread runs `main`, and returns when both
// are done. `side` must catch its own exceptions (one escaping a thread ends the program); one
// from `main` is rethrown once `side` is done. An empty `side` is skipped. When no thread can be
// started, runs them one after the other on the calling thread.
inline void runAlongside(const std::function<void()> &side, const std::function<void()> &main)
{
    if (!side) return main();
    std::thread thread;
    try {
        thread = std::thread(side);
    } catch (const std::system_error &) {
        main();
        side();
        return;
    }
    try {
        main();
    } catch (...) {
        thread.join();
        throw;
    }
    thread.join();
}

} // namespace upshot
