import CCurl
import ImgWarmSupport

/// What a single attempt came to, before retries are decided.
enum AttemptOutcome {
    case success(DownloadResponse)
    case notModified(DownloadResponse)
    case failure(AttemptFailure)
}

struct AttemptFailure {
    var errorClass: DownloadErrorClass
    var status: Int?
    /// One line, userinfo removed.
    var message: String
    var isTransient: Bool
    /// Seconds the server asked us to wait (Retry-After), if it did.
    var retryAfter: Double?
    /// The response's Content-Type, when there was a response.
    var contentType: String? = nil
    /// A body's spill file could not be written or mapped (class `disk`).
    var diskError: ImgWarmError? = nil
}

/// Maps a finished curl transfer (result code, final status) to the product's
/// error classes and decides what is worth retrying.
enum AttemptClassifier {
    /// What curl reported about one transfer, copied out of the handle.
    struct Facts {
        var code: CURLcode
        var status: Int
        /// The write callback stopped the body at the size limit.
        var bodyLimitHit: Bool
        /// The write callback stopped an oversized non-2xx body (its status
        /// is what counts).
        var errorBodyDropped: Bool
        var conditional: Bool
        var maxBodyBytes: Int
        /// curl's error buffer, or its strerror text.
        var detail: String

        /// The transfer got a complete status line, and what went wrong, if
        /// anything, was only about a body nobody wants: an error page cut
        /// off by us, or announced larger than the limit (a 503 with a huge
        /// page is a 503, not a too-large image).
        var statusDecides: Bool {
            if code == CURLE_OK { return true }
            let errorStatus = status >= 300
            return errorStatus && (errorBodyDropped || code == CURLE_FILESIZE_EXCEEDED)
        }
    }

    enum Verdict: Equatable {
        case success
        case notModified
        case failure(DownloadErrorClass, transient: Bool)
    }

    static func verdict(_ f: Facts) -> Verdict {
        if f.statusDecides {
            return verdict(status: f.status, conditional: f.conditional)
        }
        if f.bodyLimitHit || f.code == CURLE_FILESIZE_EXCEEDED {
            return .failure(.tooLarge, transient: false)
        }
        switch f.code {
        case CURLE_OPERATION_TIMEDOUT:
            return .failure(.timeout, transient: true)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT,
             CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE,
             CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3, CURLE_QUIC_CONNECT_ERROR,
             CURLE_WEIRD_SERVER_REPLY, CURLE_AGAIN:
            return .failure(.network, transient: true)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE,
             CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED:
            return .failure(.tls, transient: false)
        case CURLE_TOO_MANY_REDIRECTS:
            return .failure(.httpStatus, transient: false)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .failure(.invalidURL, transient: false)
        case CURLE_ABORTED_BY_CALLBACK:
            return .failure(.cancelled, transient: true)
        default:
            // Content decoding errors, out of memory and the like: a retry
            // would see the same thing.
            return .failure(.network, transient: false)
        }
    }

    /// A transfer curl completed: the status decides. 2xx is success; 304 only
    /// answers a conditional request; 408, 429 and 5xx may pass.
    static func verdict(status: Int, conditional: Bool) -> Verdict {
        switch status {
        case 200..<300: return .success
        case 304 where conditional: return .notModified
        case 408, 429, 500..<600: return .failure(.httpStatus, transient: true)
        default: return .failure(.httpStatus, transient: false)
        }
    }

    static func message(_ f: Facts) -> String {
        if !f.statusDecides, f.bodyLimitHit || f.code == CURLE_FILESIZE_EXCEEDED {
            return "response body larger than the limit of \(f.maxBodyBytes) bytes"
        }
        if f.statusDecides {
            switch f.status {
            case 304: return "HTTP 304 Not Modified to a request without validators"
            case 300..<400: return "HTTP \(f.status) without a usable Location"
            case 0: return "no HTTP status"
            default: return "HTTP \(f.status)"
            }
        }
        let detail = Redaction.inText(f.detail)
        switch f.code {
        case CURLE_TOO_MANY_REDIRECTS: return "too many redirects: \(detail)"
        case CURLE_UNSUPPORTED_PROTOCOL: return "only http and https are allowed: \(detail)"
        default: return "curl error \(f.code.rawValue): \(detail)"
        }
    }
}
