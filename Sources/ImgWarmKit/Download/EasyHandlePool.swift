import CCurl

/// Idle easy handles for reuse. `curl_easy_reset` clears the options but keeps
/// the handle's caches, and connections live in the multi handle's pool, so
/// reused handles keep keep-alive connections, DNS and TLS sessions warm.
/// At most `concurrency` handles ever exist. Engine thread only.
final class EasyHandlePool {
    private var idle: [UnsafeMutableRawPointer] = []

    /// An idle handle or a new one; nil only when curl is out of memory.
    func take() -> UnsafeMutableRawPointer? {
        idle.popLast() ?? curl_easy_init()
    }

    /// Returns a handle that is no longer in the multi handle.
    func give(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        idle.append(handle)
    }

    func destroyAll() {
        for handle in idle { curl_easy_cleanup(handle) }
        idle = []
    }
}
