import CCurl

/// Idle easy handles for reuse, options and all: every handle of a loop
/// gets the same fixed options once, when made (`CurlTransfer.configure`
/// with `fresh`), and each transfer sets only what differs per request
/// (URL, PIPEWAIT, header list, write target, error buffer). No
/// `curl_easy_reset` between transfers: resetting and setting a dozen
/// options again, four of them strings curl copies, was 4% of a
/// `--no-validate` run's instructions. Connections and DNS live in the
/// multi handle, so reused handles keep keep-alive connections and DNS
/// warm. A share handle
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

    /// An idle handle (`fresh` false: its fixed options are set) or a new
    /// one, already in the share; nil only when curl is out of memory.
    func take() -> (handle: UnsafeMutableRawPointer, fresh: Bool)? {
        if let handle = idle.popLast() { return (handle, false) }
        guard let handle = curl_easy_init() else { return nil }
        if let share { imgwarm_easy_setopt_share(handle, share) }
        return (handle, true)
    }

    /// Returns a handle that is no longer in the multi handle. Its error
    /// buffer belonged to the transfer that ends now: curl must not keep a
    /// pointer into freed memory, even with no transfer to write it (nor
    /// into the transfer's kept headers).
    func give(_ handle: UnsafeMutableRawPointer) {
        imgwarm_easy_setopt_ptr(handle, CURLOPT_ERRORBUFFER, nil)
        imgwarm_easy_setopt_ptr(handle, CURLOPT_HEADERDATA, nil)
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
