import CCurl

/// Idle easy handles for reuse. `curl_easy_reset` clears the options but keeps
/// the handle's caches, and connections and DNS live in the multi handle, so
/// reused handles keep keep-alive connections and DNS warm. A share handle
/// adds TLS sessions, so a new connection opened by any handle can resume a
/// session another one negotiated. At most `concurrency` handles are busy at
/// once. Engine thread only (the share needs no lock callbacks for that).
final class EasyHandlePool {
    private var idle: [UnsafeMutableRawPointer] = []
    private let share: UnsafeMutableRawPointer?

    init() {
        share = curl_share_init()
        if let share {
            imgwarm_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
        }
    }

    /// An idle handle or a new one; nil only when curl is out of memory.
    func take() -> UnsafeMutableRawPointer? {
        idle.popLast() ?? curl_easy_init()
    }

    /// After the transfer's options are set (a reset clears CURLOPT_SHARE).
    func attachShare(_ handle: UnsafeMutableRawPointer) {
        if let share { imgwarm_easy_setopt_share(handle, share) }
    }

    /// Returns a handle that is no longer in the multi handle.
    func give(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        idle.append(handle)
    }

    /// Frees the idle handles, then the share; every busy handle must have
    /// been cleaned up before.
    func destroyAll() {
        for handle in idle { curl_easy_cleanup(handle) }
        idle = []
        if let share { curl_share_cleanup(share) }
    }
}
